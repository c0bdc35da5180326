// The one config file of gds: `$XDG_CONFIG_HOME/gds/config.json` (default `~/.config/gds`; GDS_CONFIG_DIR
// overrides the folder). Folder 0700, file 0600. Every write happens under a cross-process lock
// (proper-lockfile), re-reads the file first, and replaces it atomically (temp file in the same folder,
// fsync, rename, the rename only while the lock is still its own), so parallel processes never lose each
// other's changes and a killed writer never leaves a half-written file. Secrets live here only when no
// keychain is used (see secret-store.ts). The folder's other file, settings.json (gds's own settings and
// aliases, src/cli/settings.ts), is written the same way through rewriteConfigFolderFile.
import type { AsyncLocalStorage } from 'node:async_hooks';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { chmod, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { envMilliseconds } from '../core/env-milliseconds.js';
import { isObject, versionedObject } from '../core/versioned-file.js';
import { configDir } from '../core/folders.js';
import { debugLog } from './debug-log.js';
import type { RefreshHolder } from './refresh-holder.js';
import { holderAlive } from './refresh-holder.js';

export const configVersion = 1;

export type SecretStorageSetting = 'auto' | 'keychain' | 'file';
export const secretStorageSettings: readonly SecretStorageSetting[] = ['auto', 'keychain', 'file'];

/** Where a profile's secrets are when they are not in this file. */
export interface KeychainRef {
  store: 'keychain';
  service: string;
  account: string;
}

/** The secret fields of a profile; in the file only when the secret storage is the file. */
export interface ProfileSecrets {
  /** A static CLI token (`gds auth set`). */
  token?: string;
  /** A session's or an integration token's tokens (`gds auth login`, `gds tokens issue --save-profile`). */
  accessToken?: string;
  refreshToken?: string;
}

interface ProfileCommon extends ProfileSecrets {
  base: string;
  secretRef?: KeychainRef;
  /** The e-mail the token signed in as when it was stored (shown by auth status and the profile picker). */
  user?: string;
  /**
   * A random id the credentials get when they are saved (auth login, auth set, tokens --save-profile), kept by
   * their renewals: a command that read the profile before a long request tells a renewal of the same
   * credentials from others saved meanwhile, which may have every other field the same (profiles.ts).
   */
  savedId?: string;
}

export interface StaticProfile extends ProfileCommon {
  kind: 'static';
}

/**
 * A token refresh that was sent and whose answer may not have been saved (the process was killed): the
 * next run presents the same refresh token again, which the service answers with the same new tokens
 * within its reuse grace window.
 */
export interface RefreshInFlight {
  /** ISO 8601 instant at which the refresh was sent. */
  since: string;
  /** The first 16 hex digits of the SHA-256 of the refresh token presented: the stored one, or not. */
  refreshTokenSha256: string;
  /** The gds process presenting it: others wait for it while it lives (refresh-holder.ts). */
  holder?: RefreshHolder;
}

/** A browser sign-in. Fields the file holds beside the ones named here are kept as they are. */
export interface SessionProfile extends ProfileCommon {
  kind: 'session';
  issuer?: string;
  /** ISO 8601 instant at which the access token expires. */
  expiresAt?: string;
  refreshInFlight?: RefreshInFlight;
}

/** An integration token stored by `gds tokens issue|refresh --save-profile` (§4.1, §4.2); it renews itself. */
export interface IntegrationProfile extends ProfileCommon {
  kind: 'integration';
  /** ISO 8601 instants at which the access token and the refresh token expire. */
  expiresAt?: string;
  refreshExpiresAt?: string;
  audience?: string;
  env?: string;
  scopes?: string[];
  tokenId?: string;
  refreshInFlight?: RefreshInFlight;
}

export type Profile = StaticProfile | SessionProfile | IntegrationProfile;
export type ProfileKind = Profile['kind'];

export interface GdsConfig {
  version: typeof configVersion;
  activeProfile: string | null;
  secretStorage?: SecretStorageSetting;
  profiles: Record<string, Profile>;
}

export type Env = NodeJS.ProcessEnv;
export { configDir };

const fileName = 'config.json';
const profileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function configPath(env: Env = process.env): string {
  return join(configDir(env), fileName);
}

export function emptyConfig(): GdsConfig {
  return { version: configVersion, activeProfile: null, profiles: {} };
}

/** A profile name is used in lock file names and keychain accounts: letters, digits, `.`, `_`, `-`. */
export function checkProfileName(name: string): string {
  if (!profileNamePattern.test(name)) {
    throw new CliError(`Invalid profile name: ${JSON.stringify(name)}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_profile_name',
      suggestion: 'Use up to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    });
  }
  return name;
}

export interface LoadOptions {
  env?: Env;
  /** Told when the file's mode was looser than 0600 and has been set back. */
  warn?: (message: string) => void;
}

/**
 * The config as on disk (an empty one when there is no file). Never creates anything. Only a regular file
 * is read: a symbolic link planted at config.json is refused, not followed (its target's mode is never
 * changed), and the mode is tightened on the file that was opened, not on whatever the path names later.
 */
export async function loadConfig(options: LoadOptions = {}): Promise<GdsConfig> {
  const path = configPath(options.env);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return emptyConfig();
    if (code === 'ELOOP') throw notRegularFile(path, 'a symbolic link');
    throw unreadable(path, error);
  }
  let text: string;
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notRegularFile(path, info.isDirectory() ? 'a directory' : 'not a regular file');
    text = await handle.readFile('utf8');
    await tightenMode(handle, info.mode & 0o777, path, options.warn);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw unreadable(path, error);
  } finally {
    await handle.close();
  }
  return parseConfig(text, path);
}

function notRegularFile(path: string, what: string): CliError {
  return new CliError(
    `${path} is ${what}, not a regular file: gds reads its config (which may hold tokens) only from a file of its own, and changes nothing it points at.`,
    {
      exitCode: ExitCode.Failure,
      code: 'config_not_regular_file',
      suggestion: `Remove it (rm ${path}) and sign in again, or point GDS_CONFIG_DIR at another folder.`,
    },
  );
}

export interface UpdateOptions {
  env?: Env;
  warn?: (message: string) => void;
  /** Aborted, ends a wait for the config's lock (`interrupted`), as it ends withProfileLock's. */
  signal?: AbortSignal;
}

/**
 * Locks the file, re-reads it, lets `change` edit the config in place, and writes it back atomically.
 * A config left with no profile and no setting is removed instead. Returns what `change` returned.
 */
export async function updateConfig<T>(
  change: (config: GdsConfig) => T | Promise<T>,
  options: UpdateOptions = {},
): Promise<T> {
  const dir = await ensureConfigDir(options.env);
  const path = join(dir, fileName);
  return withLock(
    path,
    `${path}.lock`,
    async (assertHeld) => {
      const config = await loadConfig(options);
      const result = await change(config);
      await replaceOrRemove(
        dir,
        path,
        fileName,
        isEmpty(config) ? undefined : `${JSON.stringify(config, null, 2)}\n`,
        assertHeld,
        options.warn,
      );
      return result;
    },
    options.signal,
  );
}

/** A config with no profile and no setting: updateConfig removes the file rather than write it. */
export function isEmpty(config: GdsConfig): boolean {
  return Object.keys(config.profiles).length === 0 && config.secretStorage === undefined;
}

/** Deletes the config file (under the lock). Returns whether there was one. */
export async function removeConfigFile(options: { env?: Env } = {}): Promise<boolean> {
  const dir = await ensureConfigDir(options.env);
  const path = join(dir, fileName);
  return withLock(path, `${path}.lock`, async (assertHeld) => {
    const existed = await stat(path).then(
      () => true,
      () => false,
    );
    // A holder that lost the lock would remove what the new holder wrote since.
    await assertHeld();
    await rm(path, { force: true });
    await removeAbandonedTempFiles(dir, fileName);
    return existed;
  });
}

/**
 * Runs `fn` holding a cross-process lock on one profile. The token refresh takes it, re-reads the profile
 * with loadConfig(), and refreshes only if nobody else did meanwhile. Taken again further down the same
 * call while still held, it lets that call through. Hold it for local reads and writes of the profile, or a
 * request whose record in the profile lets `gds auth logout` pass it by (refresh.ts): never for a request a
 * logout or a sign-in would have to wait for (integration-profile.ts saves under it once the answer came).
 * `stillHeld` says whether the lock is still this call's (see withLock).
 */
export async function withProfileLock<T>(
  name: string,
  fn: (stillHeld: () => Promise<boolean>) => Promise<T>,
  /**
   * `signal`, aborted, ends a wait for the lock (`interrupted`): a Ctrl-C or SIGTERM finishBeforeExit holds. `waitMs`:
   * how long to wait for it (else profileLockWaitMs; 0: one try).
   */
  options: { env?: Env; signal?: AbortSignal; waitMs?: number } = {},
) {
  const dir = await ensureConfigDir(options.env);
  const target = join(dir, `profile-${checkProfileName(name)}`);
  const held = profileLocksHeld().getStore() ?? [];
  const outer = held.find((lock) => lock.target === target && !lock.released);
  if (outer !== undefined) return fn(outer.stillHeld);
  const waitMs = options.waitMs ?? profileLockWaitMs(options.env);
  const file = await acquireWithin(target, waitMs, options.signal).catch(async (error: unknown) => {
    const locked = error instanceof CliError && error.code === 'config_locked';
    if (locked && options.signal?.aborted === true)
      throw waitInterrupted(`at work on profile ${name}`, options.signal.reason);
    throw await whoHoldsProfile(name, error, options.env);
  });
  const lock: HeldLock = { target, released: false, stillHeld: file.stillHeld };
  try {
    return await profileLocksHeld().run([...held, lock], () => fn(file.stillHeld));
  } finally {
    // Work that `fn` started and left running sees the lock as gone, and takes it again if it needs it.
    lock.released = true;
    await file.release();
  }
}

/**
 * Takes a profile's lock, trying again until `waitMs` have passed (config_locked then), or `signal` is aborted
 * (config_locked too, at once: withProfileLock says why). A signal aborted before the wait began does not end it:
 * a save that a held Ctrl-C or SIGTERM waits for (finishBeforeExit) waits for a lock another gds holds a moment as
 * any save does, within the bound of that wait (its timer, or a second signal, ends gds).
 */
async function acquireWithin(target: string, waitMs: number, signal?: AbortSignal): Promise<FileLock> {
  const started = Date.now();
  const ends = signal?.aborted === true ? undefined : signal;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await acquire(target, `${target}.lock`, 0);
    } catch (error) {
      const given = !(error instanceof CliError && error.code === 'config_locked');
      if (given || ends?.aborted === true || Date.now() - started >= waitMs) {
        debugLog(`lock ${target}.lock: not taken after ${Date.now() - started} ms`);
        throw error;
      }
      if (attempt === 0) debugLog(`lock ${target}.lock: held by another process; waiting up to ${waitMs} ms`);
    }
    await retryPause(attempt, ends);
  }
}

/**
 * The pause before the next try at a lock another process holds: growing, randomised, at most 200 ms; cut short
 * when `signal` is aborted.
 */
async function retryPause(attempt: number, signal?: AbortSignal): Promise<void> {
  const { setTimeout: sleep } = process.getBuiltinModule('node:timers/promises');
  const ms = Math.min(lockOptions.retries.maxTimeout, 10 * 1.2 ** attempt) * (1 + Math.random());
  await sleep(ms, undefined, signal === undefined ? {} : { signal }).catch(() => undefined);
}

/**
 * A wait for a lock that a Ctrl-C or SIGTERM ended (`reason`: the signal's name); `holder`: what the other gds
 * does ("at work on profile ci").
 */
function waitInterrupted(holder: string, reason: unknown): CliError {
  const signal = reason === 'SIGTERM' ? ' (SIGTERM)' : '';
  return new CliError(`Interrupted${signal} while waiting for another gds ${holder}.`, {
    exitCode: ExitCode.Interrupted,
    code: 'interrupted',
  });
}

/**
 * How long a command waits for another gds's hold on a profile before it gives up (config_locked):
 * GDS_LOCK_WAIT_MS (0: one try, no wait, as a CI job that would rather fail at once sets it), else about 20 s,
 * as a config file write waits.
 */
export function profileLockWaitMs(env: Env = process.env): number {
  return envMilliseconds(env.GDS_LOCK_WAIT_MS, defaultLockWaitMs, { min: 0 });
}

/**
 * The config_locked of a profile's lock, naming the gds process that holds it when the profile records it
 * refreshing the tokens (its request may wait long on the network): its pid, and how to end it.
 */
async function whoHoldsProfile(name: string, error: unknown, env: Env | undefined): Promise<unknown> {
  if (!(error instanceof CliError && error.code === 'config_locked')) return error;
  const profile = (await loadConfig({ env }).catch(() => undefined))?.profiles[name];
  const record = profile === undefined || profile.kind === 'static' ? undefined : profile.refreshInFlight;
  if (record?.holder === undefined) return error;
  if (!(await holderAlive(record.holder, record.refreshTokenSha256))) return error;
  const pid = record.holder.pid;
  return new CliError(
    `gds process ${pid} has held the lock of profile ${name} for too long: it has been refreshing the profile's ` +
      `tokens since ${record.since}, and the service has not answered it yet.`,
    {
      exitCode: ExitCode.Failure,
      code: 'config_locked',
      suggestion:
        `Run the command again once it has ended. If it hangs, end it: kill ${pid} (it saves any new tokens ` +
        `first; stopped with Ctrl-Z, it also needs kill -CONT ${pid}).`,
    },
  );
}

/**
 * Runs `fn` holding the locks of several profiles (`gds auth logout`: all of them), taken all or none: when one
 * is held by another process, those already taken are let go before waiting and trying again. A command may
 * hold one profile's lock while it waits for another's (`gds tokens issue --profile a --save-profile b` held
 * b's while it renewed a's sign-in under a's): holding some of these while waiting for the rest, in any order,
 * would let the two wait for each other until one gave up (config_locked). Gives up as a single lock does
 * (profileLockWaitMs), naming the lock it last found held. A profile whose lock is held and for which `unlessRefreshing`
 * says yes (a refresh of its tokens is under way in the holder, which may wait long on the network) is passed
 * over: `fn` runs without its lock, and must itself keep that refresh from saving (profiles.ts).
 */
export async function withProfileLocks<T>(
  names: readonly string[],
  fn: () => Promise<T>,
  options: { env?: Env; unlessRefreshing?: (name: string) => Promise<boolean> } = {},
): Promise<T> {
  const dir = await ensureConfigDir(options.env);
  const profiles = [...new Set(names)]
    .sort()
    .map((name) => ({ name, target: join(dir, `profile-${checkProfileName(name)}`) }));
  const held = profileLocksHeld().getStore() ?? [];
  const waitMs = profileLockWaitMs(options.env);
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    const taken: { lock: HeldLock; file: FileLock }[] = [];
    let busy: { name: string; error: CliError } | undefined;
    for (const { name, target } of profiles) {
      if (held.some((lock) => lock.target === target && !lock.released)) continue;
      try {
        const file = await acquire(target, `${target}.lock`, 0);
        taken.push({ file, lock: { target, released: false, stillHeld: file.stillHeld } });
      } catch (error) {
        if (!(error instanceof CliError && error.code === 'config_locked')) {
          await letGo(taken);
          throw error;
        }
        if (await options.unlessRefreshing?.(name).catch(() => false)) {
          debugLog(`lock ${target}.lock: held by a refresh under way; going on without it`);
          continue;
        }
        busy = { name, error };
        break;
      }
    }
    if (busy === undefined) {
      try {
        return await profileLocksHeld().run([...held, ...taken.map((t) => t.lock)], fn);
      } finally {
        await letGo(taken);
      }
    }
    await letGo(taken);
    if (Date.now() - started >= waitMs) throw await whoHoldsProfile(busy.name, busy.error, options.env);
    await retryPause(attempt);
  }
}

/** Lets go of the locks taken, the last first; work left running sees them as gone (see withProfileLock). */
async function letGo(taken: readonly { lock: HeldLock; file: FileLock }[]): Promise<void> {
  for (const { lock, file } of [...taken].reverse()) {
    lock.released = true;
    await file.release();
  }
}

/**
 * Runs `fn` holding the cross-process lock the config file is written under (`<path>.lock`, proper-lockfile)
 * on a file outside the config folder: a read-merge-write of another of gds's files (recertify-state.ts).
 * `fn` calls `assertHeld` just before it writes, and renames its temporary copy with renameWhileHeld: it throws
 * once the lock went stale and another took it.
 */
export async function withFileLock<T>(
  path: string,
  fn: (assertHeld: () => Promise<void>) => Promise<T>,
): Promise<T> {
  return withLock(path, `${path}.lock`, (assertHeld) => fn(assertHeld));
}

interface HeldLock {
  readonly target: string;
  released: boolean;
  readonly stillHeld: () => Promise<boolean>;
}

let locksHeld: AsyncLocalStorage<readonly HeldLock[]> | undefined;

/** The profile locks the current async call chain took (never those of a concurrent call). */
function profileLocksHeld(): AsyncLocalStorage<readonly HeldLock[]> {
  locksHeld ??= new (process.getBuiltinModule('node:async_hooks').AsyncLocalStorage)();
  return locksHeld;
}

async function ensureConfigDir(env: Env | undefined): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const mode = (await stat(dir)).mode & 0o777;
  if (mode !== 0o700) await chmod(dir, 0o700);
  return dir;
}

const lockOptions = {
  realpath: false,
  // A killed holder blocks others for this long; a live one refreshes its lock every `update` ms.
  stale: 5_000,
  update: 1_000,
  // About 20 s of waiting in all: enough for many parallel CI jobs, bounded when a lock is stuck.
  retries: { retries: 200, factor: 1.2, minTimeout: 10, maxTimeout: 100, randomize: true },
} as const;

/** How long a profile's lock is waited for in all, as a single lock's retries do (profileLockWaitMs). */
const defaultLockWaitMs = 20_000;

/**
 * Runs `fn` holding the lock. `stillHeld` says whether the lock is still this holder's: proper-lockfile has not
 * noticed it lost, and the disk agrees: the lock folder's mtime is still the last one this holder wrote, its
 * token (a holder starved of CPU misses its updates, another process takes the lock over, and proper-lockfile
 * notices only at its next update, a second or more later). `assertHeld` throws config_lock_lost when not.
 */
async function withLock<T>(
  target: string,
  lockfilePath: string,
  fn: (assertHeld: () => Promise<void>, stillHeld: () => Promise<boolean>) => Promise<T>,
  /** Aborted, ends the wait for the lock (see UpdateOptions.signal). */
  signal?: AbortSignal,
): Promise<T> {
  const held =
    signal === undefined
      ? await acquire(target, lockfilePath, lockOptions.retries)
      : await acquireWithin(target, defaultLockWaitMs, signal).catch((error: unknown) => {
          const locked = error instanceof CliError && error.code === 'config_locked';
          if (locked && signal.aborted) throw waitInterrupted(`writing ${target}`, signal.reason);
          throw error;
        });
  try {
    return await fn(held.assertHeld, held.stillHeld);
  } finally {
    await held.release();
  }
}

interface FileLock {
  readonly stillHeld: () => Promise<boolean>;
  readonly assertHeld: () => Promise<void>;
  release(): Promise<void>;
}

/**
 * Takes the lock (see withLock), waiting as `retries` says: with 0, once (config_locked at once when another
 * process holds it and it is not stale).
 */
async function acquire(
  target: string,
  lockfilePath: string,
  retries: (typeof lockOptions)['retries'] | 0,
): Promise<FileLock> {
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  const touches = lockTouches(lockfilePath);
  const asked = Date.now();
  try {
    // Loaded on the first write only: reading the config (every API command) does not need it.
    const { lock } = await import('proper-lockfile');
    release = await lock(target, {
      ...lockOptions,
      retries,
      lockfilePath,
      fs: touches.fs,
      onCompromised: (error) => {
        compromised = error;
        debugLog(`lock ${lockfilePath}: lost (${error.message})`);
      },
    });
  } catch (error) {
    if (retries !== 0) debugLog(`lock ${lockfilePath}: not taken after ${Date.now() - asked} ms`);
    throw lockError(lockfilePath, error);
  }
  debugLog(`lock ${lockfilePath}: taken after ${Date.now() - asked} ms`);
  const stillHeld = async () => {
    const held = compromised === undefined && (await touches.ours());
    if (!held) debugLog(`lock ${lockfilePath}: no longer held`);
    return held;
  };
  const assertHeld = async () => {
    if (await stillHeld()) return;
    const why = compromised?.message ?? 'another process took it over';
    throw new CliError(`Lost the lock ${lockfilePath} while working (${why}).`, {
      exitCode: ExitCode.Failure,
      code: 'config_lock_lost',
      suggestion: 'Nothing was written. Run the command again.',
    });
  };
  return {
    stillHeld,
    assertHeld,
    async release() {
      // A lock another process took over is theirs: letting go must not remove it.
      if (compromised === undefined && !(await touches.ours())) touches.disown();
      await release().catch(() => undefined);
      debugLog(`lock ${lockfilePath}: let go`);
    },
  };
}

/**
 * The file system proper-lockfile works the lock through, noting each mtime this holder gives the lock
 * folder (when taking it and at each update) so the holder can tell its lock from one another process
 * took over. A fresh object per lock: proper-lockfile then probes the mtime precision with a write, which is
 * noted too.
 */
function lockTouches(lockfilePath: string) {
  const fs = process.getBuiltinModule('node:fs');
  let written: number[] = [];
  let disowned = false;
  const ownMtime = (mtime: number) =>
    written.some((ours) => mtime === ours || mtime === Math.floor(ours / 1000) * 1000);
  return {
    fs: {
      ...fs,
      utimes(path: string, atime: Date, mtime: Date, callback: (error: Error | null) => void) {
        // Kept until the write is done: a check meanwhile may already see the new mtime.
        written.push(mtime.getTime());
        fs.utimes(path, atime, mtime, (error) => {
          if (error === null && path === lockfilePath) written = [mtime.getTime()];
          callback(error);
        });
      },
      rmdir(path: string, callback: (error: Error | null) => void) {
        if (disowned && path === lockfilePath) callback(null);
        else fs.rmdir(path, callback);
      },
      rmdirSync(path: string) {
        if (!(disowned && path === lockfilePath)) fs.rmdirSync(path);
      },
    },
    async ours(): Promise<boolean> {
      const mtime = await stat(lockfilePath).then(
        (s) => s.mtime.getTime(),
        () => undefined,
      );
      return mtime !== undefined && ownMtime(mtime);
    },
    disown() {
      disowned = true;
    },
  };
}

/**
 * Another file of the config folder (settings.json, src/cli/settings.ts) kept as config.json is: under its
 * own lock, `change` reads it and returns its new text (undefined: remove the file) and a result; the text
 * replaces the file atomically with mode 0600.
 */
export async function rewriteConfigFolderFile<T>(
  name: string,
  change: (path: string) => Promise<{ text: string | undefined; result: T }>,
  options: { env?: Env } = {},
): Promise<T> {
  const dir = await ensureConfigDir(options.env);
  const path = join(dir, name);
  return withLock(path, `${path}.lock`, async (assertHeld) => {
    const { text, result } = await change(path);
    await replaceOrRemove(dir, path, name, text, assertHeld);
    return result;
  });
}

/**
 * The end of a locked write of `name` in `dir`: `text` replaces the file atomically, or the file is removed
 * (undefined), each only while the lock is still this holder's. Fails with config_lock_lost otherwise.
 */
async function replaceOrRemove(
  dir: string,
  path: string,
  name: string,
  text: string | undefined,
  assertHeld: () => Promise<void>,
  warn?: (message: string) => void,
): Promise<void> {
  // Before the sweep too: the temporary copies are abandoned only while this holder has the lock.
  await assertHeld();
  await removeAbandonedTempFiles(dir, name);
  if (text === undefined) {
    await assertHeld();
    await rm(path, { force: true });
  } else await writeAtomically(dir, path, text, name, assertHeld, warn);
}

async function writeAtomically(
  dir: string,
  path: string,
  text: string,
  name: string,
  assertHeld: () => Promise<void>,
  warn?: (message: string) => void,
): Promise<void> {
  // Loaded here: every command reads the config, few write it, and node:crypto costs ~3 MiB at start-up.
  const { randomBytes } = process.getBuiltinModule('node:crypto');
  const temp = join(dir, `${name}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await renameWhileHeld(temp, path, assertHeld);
  // Renamed, the file is written, and read so by every command: a folder that will not sync only leaves the rename
  // less sure to outlive a power cut. A failure said here would have the caller undo around a file that holds
  // what it wrote (a save puts the keychain entry back under the new config).
  // A disk that failed the sync (not a file system that cannot sync a folder) is said, as the write may not last.
  await syncFolder(dir).catch((error: unknown) => {
    debugLog(`${dir}: not synced after ${name} was renamed into it (${(error as Error).message})`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && DISK_FAILURES.has(code))
      warn?.(
        `${path} was written, but its folder could not be synced (${code}): the change may not outlive a ` +
          'crash or power cut. Check the disk.',
      );
  });
}

/** What a sync fails with when the disk, not the file system's support for syncing a folder, is at fault. */
const DISK_FAILURES = new Set(['EIO', 'ENOSPC', 'EDQUOT']);

async function syncFolder(dir: string): Promise<void> {
  const folder = await open(dir, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

/**
 * Renames `temp` over `path` only while the lock is still this holder's; else removes `temp` and throws
 * config_lock_lost. The check sits here, after the write and its fsync (which can take long on a busy disk)
 * and right before the rename: a holder that stalled past the stale time may have lost the lock meanwhile,
 * and its rename would replace the file the new holder wrote. Only the check's stat of the lock folder lies
 * between the two: neither POSIX nor Windows renames on a condition, so the window cannot be closed, only kept
 * this short (a holder is taken over only after 5 s without an update).
 */
export async function renameWhileHeld(
  temp: string,
  path: string,
  assertHeld: () => Promise<void>,
): Promise<void> {
  try {
    await assertHeld();
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await rename(temp, path);
}

/** Temp files of writers killed before their rename; only the lock holder of `name` writes one, so none is
 *  live. */
async function removeAbandonedTempFiles(dir: string, name: string): Promise<void> {
  const names = await readdir(dir);
  const temps = names.filter((n) => n.startsWith(`${name}.`) && n.endsWith('.tmp'));
  await Promise.all(temps.map((n) => rm(join(dir, n), { force: true })));
}

async function tightenMode(
  handle: FileHandle,
  mode: number,
  path: string,
  warn: LoadOptions['warn'],
): Promise<void> {
  if ((mode & 0o077) === 0) return;
  try {
    await handle.chmod(0o600);
  } catch (error) {
    throw new CliError(
      `${path} is readable by others (mode ${mode.toString(8)}) and its mode cannot be changed.`,
      {
        exitCode: ExitCode.Failure,
        code: 'config_mode_unsafe',
        suggestion: `Make it private (chmod 600 ${path}) as its owner. (${(error as Error).message})`,
      },
    );
  }
  warn?.(`${path} had mode ${mode.toString(8)}; it may hold tokens, so it is now 600.`);
}

export function parseConfig(text: string, path: string): GdsConfig {
  const value = versionedObject(text, path, { kind: 'config', version: configVersion, damaged: invalid });
  if (!isObject(value.profiles)) throw invalid(path, '"profiles" is not an object');
  for (const [name, profile] of Object.entries(value.profiles)) {
    const problem = profileProblem(profile);
    if (problem !== undefined) throw invalid(path, `profile ${JSON.stringify(name)} ${problem}`);
  }
  const active = value.activeProfile ?? null;
  if (active !== null && (typeof active !== 'string' || !(active in value.profiles))) {
    throw invalid(path, `"activeProfile" names no profile of the file`);
  }
  const storage = value.secretStorage;
  if (storage !== undefined && !secretStorageSettings.includes(storage as SecretStorageSetting)) {
    throw invalid(path, `"secretStorage" is not one of ${secretStorageSettings.join(', ')}`);
  }
  return { ...value, activeProfile: active } as unknown as GdsConfig;
}

function profileProblem(profile: unknown): string | undefined {
  if (!isObject(profile)) return 'is not an object';
  if (typeof profile.base !== 'string') return 'has no "base" URL';
  if (profile.kind !== 'static' && profile.kind !== 'session' && profile.kind !== 'integration')
    return 'has a "kind" other than static, session or integration';
  const ref = profile.secretRef;
  if (ref !== undefined) {
    if (!isObject(ref) || ref.store !== 'keychain')
      return 'has a "secretRef" that is not a keychain reference';
    if (typeof ref.service !== 'string' || typeof ref.account !== 'string') {
      return 'has a "secretRef" without service and account';
    }
  }
  for (const field of ['token', 'accessToken', 'refreshToken']) {
    if (profile[field] !== undefined && typeof profile[field] !== 'string')
      return `has a non-string "${field}"`;
  }
  return undefined;
}

function invalid(path: string, reason: string): CliError {
  return new CliError(`The gds config file ${path} is damaged: ${reason}.`, {
    exitCode: ExitCode.Usage,
    code: 'config_invalid',
    suggestion:
      `Fix it by hand, or start again: \`gds auth logout\` removes it (and its keychain entries when it ` +
      `can read them), then \`gds auth set --token <t> --base <url>\`.`,
  });
}

function unreadable(path: string, error: unknown): CliError {
  return new CliError(`Cannot read the gds config file ${path}: ${(error as Error).message}`, {
    exitCode: ExitCode.Failure,
    code: 'config_unreadable',
    suggestion: 'Check its owner and permissions, or point GDS_CONFIG_DIR at another folder.',
  });
}

function lockError(lockfilePath: string, error: unknown): CliError {
  if ((error as NodeJS.ErrnoException).code === 'ELOCKED') {
    return new CliError(`Another gds process has held the lock ${lockfilePath} for too long.`, {
      exitCode: ExitCode.Failure,
      code: 'config_locked',
      suggestion: `Run the command again. If no other gds is running, remove the folder ${lockfilePath}.`,
    });
  }
  return new CliError(`Cannot lock ${lockfilePath}: ${(error as Error).message}`, {
    exitCode: ExitCode.Failure,
    code: 'config_lock_failed',
    suggestion: 'Check the permissions of the config folder, or point GDS_CONFIG_DIR at another folder.',
  });
}
