// Where a profile's secrets live: the OS keychain (@napi-rs/keyring, pinned to the Secret Service on
// Linux: its default silently falls back to the kernel keyring) or, when no keychain answers or the
// setting says so, the 0600 config file. Every keychain call runs in a child process (keychain-child.ts)
// started only when a secret is read or written, and killed after GDS_KEYCHAIN_TIMEOUT_MS: the addon
// blocks the thread that calls it while D-Bus does not answer, so a hung session bus or a locked keychain
// never hangs gds, and Ctrl-C works meanwhile.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';
import { CliError, ExitCode } from '../core/errors.js';
import { envMilliseconds } from '../core/env-milliseconds.js';
import { stateDir } from '../core/folders.js';
import { SECRET_VARIABLES } from '../core/redact.js';
import type { Env, GdsConfig, KeychainRef, Profile, ProfileSecrets, SecretStorageSetting } from './config.js';
import { configDir, configPath, secretStorageSettings } from './config.js';
import { debugLog } from './debug-log.js';

export const keychainService = 'gds-cli';
const defaultTimeoutMs = 3_000;
const secretFields = ['token', 'accessToken', 'refreshToken'] as const;

export type SecretStorage = 'keychain' | 'file';

export interface SecretStoreOptions {
  env?: Env;
  /**
   * Output.warn of the command: told once per machine when secrets fall back to the file (saveProfile
   * passes none for a profile whose secrets were in the file already: once per profile too).
   */
  warn?: (message: string) => void;
  /**
   * The secrets exist nowhere else: a refresh spent the single-use refresh token they replace. Under the
   * `keychain` setting, a keychain that does not answer then puts them in the file (said each time) instead
   * of refusing, which would lose them and, with them, the sign-in.
   */
  onlyCopy?: boolean;
}

/** placeSecrets's options: `entry`, the keychain entry to write (else the profile's entry of before). */
export interface PlaceOptions extends SecretStoreOptions {
  entry?: KeychainRef;
}

/** The profile fields that say where its secrets are: a keychain reference, or the secrets themselves. */
export interface SecretPlacement {
  storage: SecretStorage;
  fields: { secretRef: KeychainRef } | ProfileSecrets;
  /** Why the keychain was not used in auto mode (undefined when it was, or when the setting is `file`). */
  keychainProblem?: string;
}

export class KeychainUnavailableError extends Error {
  /** `noAnswer`: no answer at all (the keychain process hung or died, or D-Bus's reply did not come). */
  constructor(
    readonly reason: string,
    readonly noAnswer = false,
  ) {
    super(`the OS keychain did not answer: ${reason}`);
    this.name = 'KeychainUnavailableError';
  }
}

/** GDS_SECRET_STORAGE, else the config's `secretStorage`, else `auto`. */
export function secretStorageSetting(config: GdsConfig, env: Env = process.env): SecretStorageSetting {
  const fromEnv = env.GDS_SECRET_STORAGE;
  if (fromEnv === undefined || fromEnv === '') return config.secretStorage ?? 'auto';
  if (!secretStorageSettings.includes(fromEnv as SecretStorageSetting)) {
    throw new CliError(`GDS_SECRET_STORAGE=${fromEnv} is not a secret storage.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_secret_storage',
      suggestion: `Set it to one of ${secretStorageSettings.join(', ')} (or unset it for auto).`,
    });
  }
  return fromEnv as SecretStorageSetting;
}

/**
 * The keychain entry of one save of profile `profileName`'s credentials: `<name>#<savedId>@<config folder>`. Each
 * save of new credentials writes an entry of its own (a renewal writes theirs again), so two saves racing for a
 * profile never write the same entry, and the config names only an entry that holds what its save wrote. Without
 * `savedId`: the one entry a profile had before, `<name>@<config folder>`, still read (the next save moves it).
 */
export function keychainRefFor(profileName: string, env: Env = process.env, savedId?: string): KeychainRef {
  const id = savedId === undefined ? '' : `#${savedId}`;
  return {
    store: 'keychain',
    service: keychainService,
    account: `${profileName}${id}@${accountFolder(env)}`,
  };
}

/**
 * The config folder as keychain accounts name it: absolute, so a relative GDS_CONFIG_DIR (`.gds`) in two working
 * folders names two folders, and a logout in one never sweeps the other's entries.
 */
function accountFolder(env: Env): string {
  return resolve(configDir(env));
}

/**
 * Whether keychain account `account` is an entry of this config folder: what follows its first `@` is the folder (a
 * profile name holds no `@`; a folder path may, so matching the end alone would take another folder's whose path
 * ends in `@` and this one's).
 */
export function isFolderAccount(account: string, env: Env = process.env): boolean {
  const at = account.indexOf('@');
  return at >= 0 && account.slice(at + 1) === accountFolder(env);
}

/**
 * Whether keychain account `account` is one of profile `profileName`'s entries in this config folder (any save's, or
 * the one entry of before): `gds auth logout` sweeps them all, those of saves whose config write never came too.
 */
export function isProfileAccount(account: string, profileName: string, env: Env = process.env): boolean {
  if (!isFolderAccount(account, env)) return false;
  const entry = account.slice(0, account.indexOf('@'));
  const id = entry.slice(profileName.length);
  return entry.startsWith(profileName) && (id === '' || /^#[0-9a-f]+$/.test(id));
}

/**
 * Stores a profile's secrets by the setting and returns the fields to put into its config entry.
 * `auto`: the keychain, else the file with one warning per machine; `keychain`: the keychain or a clear
 * error; `file`: the file.
 */
export async function placeSecrets(
  profileName: string,
  secrets: ProfileSecrets,
  setting: SecretStorageSetting,
  options: PlaceOptions = {},
): Promise<SecretPlacement> {
  const inFile: SecretPlacement = { storage: 'file', fields: onlySecrets(secrets) };
  if (setting === 'file') return inFile;
  const ref = options.entry ?? keychainRefFor(profileName, options.env);
  try {
    await keychainCall(ref, options.env, { op: 'set', password: JSON.stringify(secrets) });
    return { storage: 'keychain', fields: { secretRef: ref } };
  } catch (error) {
    if (!(error instanceof KeychainUnavailableError)) throw error;
    if (setting === 'keychain' && options.onlyCopy !== true) throw keychainRequired(error);
    if (setting === 'keychain') warnOnlyCopyInFile(error, options);
    else warnFileFallbackOnce(options);
    return { ...inFile, keychainProblem: error.reason };
  }
}

export interface ReadSecrets {
  secrets: ProfileSecrets;
  storage: SecretStorage | 'none';
}

/** A profile's secrets from wherever its entry says they are. Throws KeychainUnavailableError. */
export async function readSecrets(profile: Profile, options: SecretStoreOptions = {}): Promise<ReadSecrets> {
  const ref = profile.secretRef;
  if (ref === undefined) {
    const secrets = onlySecrets(profile);
    return { secrets, storage: Object.keys(secrets).length > 0 ? 'file' : 'none' };
  }
  const stored = await keychainCall(ref, options.env, { op: 'get' });
  if (typeof stored !== 'string') return { secrets: {}, storage: 'none' };
  return { secrets: parseStoredSecrets(stored), storage: 'keychain' };
}

/** Removes a profile's keychain entry, if it has one. True when an entry was deleted. */
export async function deleteKeychainEntry(
  profile: Profile,
  options: SecretStoreOptions = {},
): Promise<boolean> {
  const ref = profile.secretRef;
  if (ref === undefined) return false;
  return (await keychainCall(ref, options.env, { op: 'delete' })) === true;
}

/**
 * The accounts of every gds keychain entry of this config folder (`isProfileAccount` tells a profile's): an entry
 * no profile names any more (a save cut short before its config write) is found too.
 */
export async function keychainAccounts(options: SecretStoreOptions = {}): Promise<string[]> {
  const ref = keychainRefFor('', options.env);
  const found = await keychainCall(ref, options.env, { op: 'find' });
  return Array.isArray(found) ? found.filter((account) => isFolderAccount(account, options.env)) : [];
}

/** Removes the gds keychain entry of account `account` (one keychainAccounts found). True when one was deleted. */
export async function deleteKeychainAccount(
  account: string,
  options: SecretStoreOptions = {},
): Promise<boolean> {
  const ref = { ...keychainRefFor('', options.env), account };
  return (await keychainCall(ref, options.env, { op: 'delete' })) === true;
}

export function describeStorage(storage: SecretStorage, ref: KeychainRef | undefined, env?: Env): string {
  if (storage === 'keychain' && ref !== undefined) {
    return `the OS keychain (service ${ref.service}, account ${ref.account})`;
  }
  return `the config file ${configPath(env)}`;
}

type KeychainRequest = { op: 'get' } | { op: 'set'; password: string } | { op: 'delete' } | { op: 'find' };
type KeychainAnswer = string | boolean | string[] | null;

/** The addon's D-Bus calls wait about 2 s for the keychain's reply: on a busy machine that is no answer yet. */
const NO_REPLY = /Did not receive a reply/;

/** What a user reads in an error for each keychain operation. */
const operationName = { get: 'read', set: 'write', delete: 'delete', find: 'search' } as const;

/**
 * One keychain operation in a child process, killed after GDS_KEYCHAIN_TIMEOUT_MS (default 3 s): the
 * stored password (or null) for `get`, whether an entry was removed for `delete`. A read that got no
 * answer is asked once more, of a fresh process: a keychain process stuck on its D-Bus connection, or a
 * reply later than D-Bus waits while many processes ask at once, does not fail the command.
 */
async function keychainCall(
  ref: KeychainRef,
  env: Env | undefined,
  request: KeychainRequest,
): Promise<KeychainAnswer> {
  const timeoutMs = keychainTimeoutMs(env ?? process.env);
  const call = { ...request, service: ref.service, account: ref.account };
  try {
    return await inKeychainChild(call, timeoutMs);
  } catch (error) {
    const noAnswer = error instanceof KeychainUnavailableError && error.noAnswer;
    if ((request.op !== 'get' && request.op !== 'find') || !noAnswer) throw error;
    debugLog('keychain read: asking a fresh process once more');
    return inKeychainChild(call, timeoutMs);
  }
}

/**
 * How to start the keychain child: the single executable runs itself; the npm package's bundle
 * (dist/bundle/gds.cjs, where this module is part of the bundle's file) runs its bundle with the child's argument, as
 * its entry (scripts/sea/entry.ts) serves it; otherwise Node runs the module.
 */
function keychainChildCommand(): [string, string[]] {
  if (isSea()) return [process.execPath, [KEYCHAIN_CHILD_ARG]];
  const here = fileURLToPath(import.meta.url);
  if (!/secret-store\.(js|ts)$/.test(here)) return [process.execPath, [here, KEYCHAIN_CHILD_ARG]];
  const script = here.replace(/secret-store\.(js|ts)$/, 'keychain-child.$1');
  return [process.execPath, [script]];
}

/**
 * The keychain child's environment: gds's own without the secrets it was given (SERVICE_TOKEN,
 * GDS_REFRESH_TOKEN). The child needs the session bus and such, never a token; its secret comes on stdin.
 */
export function keychainChildEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of SECRET_VARIABLES) delete copy[name];
  return copy;
}

/** Mirrors keychain-child.ts (which imports nothing of gds, so it cannot share this constant). */
const KEYCHAIN_CHILD_ARG = '__gds_keychain_child';

function inKeychainChild(
  request: KeychainRequest & { service: string; account: string },
  timeoutMs: number,
): Promise<KeychainAnswer> {
  const [command, args] = keychainChildCommand();
  // node:child_process (and the node:net and node:dgram it loads) only when a keychain call is made: a
  // command given its token loads none of it (a few ms of every start-up).
  const { spawn } = process.getBuiltinModule('node:child_process');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'], env: keychainChildEnv() });
    debugLog(
      `keychain ${operationName[request.op]}: asked process ${child.pid ?? '?'} (limit ${timeoutMs} ms)`,
    );
    const killChild = () => child.kill('SIGKILL');
    // gds ending (Ctrl-C included) takes a hung child with it.
    process.once('exit', killChild);
    let stdout = '';
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      process.removeListener('exit', killChild);
      outcome();
    };
    const timer = setTimeout(() => {
      killChild();
      debugLog(
        `keychain ${operationName[request.op]}: no answer from process ${child.pid ?? '?'} within ${timeoutMs} ms; killed`,
      );
      settle(() =>
        reject(
          new KeychainUnavailableError(
            `no answer to a ${operationName[request.op]} within ${timeoutMs} ms (is it locked?)`,
            true,
          ),
        ),
      );
    }, timeoutMs);
    // The timer alone must not keep gds alive: an interrupted command ends without waiting for it.
    timer.unref();
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => settle(() => reject(new KeychainUnavailableError(error.message))));
    child.on('close', (code, signal) =>
      settle(() => {
        debugLog(
          `keychain ${operationName[request.op]}: process ${child.pid ?? '?'} ended (${signal ?? code}) after ${Date.now() - started} ms`,
        );
        try {
          const answer = JSON.parse(stdout) as {
            ok: boolean;
            value?: KeychainAnswer;
            error?: string;
          };
          if (answer.ok) resolve(answer.value ?? null);
          else {
            const error = answer.error ?? 'failed';
            reject(new KeychainUnavailableError(keychainReason(new Error(error)), NO_REPLY.test(error)));
          }
        } catch {
          reject(new KeychainUnavailableError('the keychain process ended without an answer', true));
        }
      }),
    );
    child.stdin.end(JSON.stringify(request));
  });
}

/** GDS_KEYCHAIN_TIMEOUT_MS, else 3 s: how long one keychain call may take before its process is killed. */
export function keychainTimeoutMs(env: Env): number {
  return envMilliseconds(env.GDS_KEYCHAIN_TIMEOUT_MS, defaultTimeoutMs);
}

/** The library's message without its generic prefix, e.g. `DBus error: Failed to connect to socket …`. */
function keychainReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (
    message.replace(/^(Platform failure|Couldn't access platform storage):\s*/, '').split('\n')[0] ?? message
  );
}

let warnedFileFallback = false;

/** The marker that the file fallback was said on this machine: in gds's state folder, as update.json is. */
function fallbackMarker(env: Env): string {
  return join(stateDir(env), 'keychain-fallback-said');
}

/**
 * Said once per machine, not on every credential write: a marker in the state folder remembers it (where the
 * marker cannot be written, once per process).
 */
function warnFileFallbackOnce(options: SecretStoreOptions): void {
  if (warnedFileFallback) return;
  warnedFileFallback = true;
  const env = options.env ?? process.env;
  const marker = fallbackMarker(env);
  if (existsSync(marker)) return;
  try {
    mkdirSync(dirname(marker), { recursive: true, mode: 0o700 });
    writeFileSync(marker, `${new Date().toISOString()} ${configPath(env)}\n`, { mode: 0o600 });
  } catch {
    // a state folder gds cannot write: the warning stays once per process
  }
  // One short line: why the keychain did not answer (D-Bus's own words) is no help to act on.
  options.warn?.(
    `No OS keychain answered, so the token is stored in ${configPath(options.env)} (mode 600); ` +
      'GDS_SECRET_STORAGE=keychain refuses instead, =file silences this.',
  );
}

/** Each time: the setting says keychain, and tokens that exist nowhere else went to the file after all. */
function warnOnlyCopyInFile(error: KeychainUnavailableError, options: SecretStoreOptions): void {
  options.warn?.(
    `The secret storage is set to keychain, but ${error.message}; the renewed tokens exist nowhere else (the ` +
      `refresh spent the old ones), so they are stored in ${configPath(options.env)} (mode 600). The next ` +
      'renewal moves them to the keychain once it answers.',
  );
}

function keychainRequired(error: KeychainUnavailableError): CliError {
  return new CliError(`The secret storage is set to keychain, but ${error.message}.`, {
    exitCode: ExitCode.Failure,
    code: 'keychain_unavailable',
    suggestion:
      'Unlock or start the OS keychain (a Secret Service such as gnome-keyring on Linux), or allow the ' +
      '0600 config file: GDS_SECRET_STORAGE=auto (or file).',
  });
}

function onlySecrets(source: ProfileSecrets): ProfileSecrets {
  const secrets: ProfileSecrets = {};
  for (const field of secretFields) {
    const value = source[field];
    if (typeof value === 'string') secrets[field] = value;
  }
  return secrets;
}

function parseStoredSecrets(stored: string): ProfileSecrets {
  try {
    const value: unknown = JSON.parse(stored);
    if (typeof value === 'object' && value !== null) return onlySecrets(value as ProfileSecrets);
  } catch {
    // Written by hand or by another tool: a bare token.
  }
  return { token: stored };
}
