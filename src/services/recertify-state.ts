// The state file of a `gds recertify` run sent in parts (recertification.ts): the answers of the parts
// signalled so far, so that the same command run again sends only the rest. One file a run, a workspace and
// a service, under $XDG_STATE_HOME/gds/recertify:
//
//   { "version": 1, "service": "https://…", "workspace": "ws:<id>" | "token:<sha256 prefix>",
//     "keys": ["gds-recertify-…", …], "answered": { "<part's key>": <the service's RecertifyResponse> } }
//
// Several runs may share the folder (two CI jobs on one runner): each save, under the file's lock, re-reads
// it and keeps the parts another run answered, and writes it whole through a temporary file renamed over it.
// A file gds cannot read as such is ignored (said once): the run sends every part, and the service applies
// none twice.
// Failing to keep the state is said, never the run's failure: the signals went.
//
// A run that saves or finishes also removes what other runs left in the folder and no run will use: a
// state, a temporary copy or a lock untouched for 30 days, and a state of the first scheme (no version).
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rm, rmdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { renameWhileHeld, withFileLock } from '../auth/config.js';
import { stateDir } from '../core/folders.js';
import { unverifiedClaims } from '../core/jwt-claims.js';
import type { RecertifyResponse } from '../contract/types.js';
import { removeResumeState, writeResumeState } from './resume-state.js';

export interface RunStateWarning {
  code: 'state_ignored' | 'state_not_kept';
  message: string;
}

export interface RunState {
  /** The parts (by index) an earlier or concurrent run answered. */
  answered: Array<[number, RecertifyResponse]>;
  /** Keeps these answers, and those another run kept meanwhile; a failure is warned (once), not thrown. */
  save(answers: ReadonlyMap<number, RecertifyResponse>): Promise<void>;
  /** The run is signalled whole: its state goes. */
  done(): Promise<void>;
}

/**
 * Whose progress a state is: the workspace of the token (its `ws` claim, read without verifying it; the
 * service does that); for a JWT without one, its issuer and subject, which an access token renewed every hour
 * keeps; else a hash of the token (an opaque one). Never the token itself.
 */
export function stateWorkspace(token: string | undefined): string {
  if (token === undefined || token === '') return 'none';
  const { ws, iss, sub } = unverifiedClaims(token);
  if (typeof ws === 'string' && /^[\w.-]{1,200}$/.test(ws)) return `ws:${ws}`;
  const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
  if (typeof sub === 'string' && sub !== '') return `sub:${hash(JSON.stringify([iss ?? null, sub]))}`;
  return `token:${hash(token)}`;
}

/**
 * The state of a run whose parts have the idempotency keys `keys`, sent to `service` with `token`, under
 * `env`'s XDG_STATE_HOME. A run whose parts have no key keeps none.
 */
export async function openRunState(
  input: { service?: string | undefined; token?: string | undefined; env?: NodeJS.ProcessEnv | undefined },
  keys: ReadonlyArray<string | undefined>,
  warn: (warning: RunStateWarning) => void,
): Promise<RunState> {
  if (!keys.every((k): k is string => k !== undefined))
    return { answered: [], save: async () => {}, done: async () => {} };
  const expected = { service: input.service ?? null, workspace: stateWorkspace(input.token), keys };
  const name = createHash('sha256')
    .update(JSON.stringify([expected.service, expected.workspace, keys]))
    .digest('hex')
    .slice(0, 32);
  const dir = join(stateDir(input.env ?? process.env), 'recertify');
  const path = join(dir, `${name}.json`);

  const first = await readState(path, expected);
  if (typeof first === 'string')
    warn({
      code: 'state_ignored',
      message: `${path} is not a state gds can use (${first}); it is ignored, and this run sends every part.`,
    });
  const toIndexed = (answered: ReadonlyMap<string, RecertifyResponse>) =>
    keys.flatMap((key, i): Array<[number, RecertifyResponse]> => {
      const response = answered.get(key);
      return response === undefined ? [] : [[i, response]];
    });

  let notKept = false;
  const failed = (what: string, error: unknown) => {
    if (notKept) return;
    notKept = true;
    // The lock lost before the rename (withFileLock's assertHeld): nothing was written, the file is as it was.
    const lockLost = (error as { code?: unknown }).code === 'config_lock_lost';
    warn({
      code: 'state_not_kept',
      message: lockLost
        ? `This run lost the lock ${path}.lock before keeping its progress (another gds run may have taken ` +
          `it over while this one was slow): ${path} is left as it was, without the parts answered since. ` +
          'The signals answered were applied; nothing to do: a run of the same command stopped part-way ' +
          'and started again sends again the parts answered since, and the service applies none twice.'
        : `The state of this run could not be ${what} ${path} (${(error as Error).message ?? String(error)}). ` +
          'The signals answered were applied; a run of the same command stopped part-way and started again ' +
          'sends every part again, and the service applies none twice.',
    });
  };
  let swept = false;
  const sweep = async () => {
    if (swept) return;
    swept = true;
    await removeLeftOvers(dir, path);
  };
  return {
    answered: typeof first === 'string' ? [] : toIndexed(first),
    async save(answers) {
      const ours = new Map([...answers].map(([i, response]) => [keys[i] as string, response]));
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 });
        // Under the lock: a save of another run of the same command between our read and our write is lost.
        await withFileLock(path, async (assertHeld) => {
          // Another run of the same command may have kept parts since: kept too (ours win on a part both answered).
          const theirs = await readState(path, expected);
          const answered = new Map([...(typeof theirs === 'string' ? [] : theirs), ...ours]);
          const state = { version: 1, ...expected, answered: Object.fromEntries(answered) };
          await assertHeld();
          // Renamed over the state only while the lock is still this run's: else another run holds it now,
          // and may have kept its own parts in the file since.
          const rename = (temp: string, to: string) => renameWhileHeld(temp, to, assertHeld);
          // Retried once when the temporary file vanished: another run's done() removed it.
          await writeResumeState(path, state, 0o600, rename).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error;
            return writeResumeState(path, state, 0o600, rename);
          });
        });
        await sweep();
      } catch (error) {
        failed('kept in', error);
      }
    },
    async done() {
      await removeResumeState(path).catch((error: unknown) => failed('removed from', error));
      await sweep();
    },
  };
}

/**
 * How long a state nobody touches is kept: a refresh token's lifetime. The run's token has been renewed or
 * has expired by then, and its dbt run is long superseded.
 */
const LEFT_FOR_MS = 30 * 24 * 60 * 60 * 1000;
/** The names gds gives in the folder: states (any scheme), their temporary copies and their locks. */
const STATE_NAME = /^[0-9a-f]{32}\.json$/;
const LEFTOVER_NAME = /^[0-9a-f]{32}\.json\.(?:[0-9a-f]{8}\.tmp|lock)$/;

/**
 * Removes from `dir` the states no run will use again, other than `own`'s: files (and lock folders) only of
 * the names gds gives, never a link or anything else. Best effort: what cannot be removed is left.
 */
async function removeLeftOvers(dir: string, own: string, now = Date.now()): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const remove = async (name: string) => {
    const path = join(dir, name);
    if (path === own || name.startsWith(`${basename(own)}.`)) return;
    const stats = await lstat(path);
    const untouched = now - stats.mtimeMs > LEFT_FOR_MS;
    if (LEFTOVER_NAME.test(name)) {
      if (!untouched) return;
      // proper-lockfile's lock is an empty folder: rmdir leaves anything else.
      if (name.endsWith('.lock') ? stats.isDirectory() : stats.isFile())
        await (stats.isDirectory() ? rmdir(path) : rm(path));
    } else if (STATE_NAME.test(name) && stats.isFile() && (untouched || (await ofTheFirstScheme(path)))) {
      await rm(path);
    }
  };
  await Promise.all(names.map((name) => remove(name).catch(() => undefined)));
}

/** A state of the first gds that kept one: `{ keys, answered: [[index, answer], …] }`, no version. */
async function ofTheFirstScheme(path: string): Promise<boolean> {
  const value: unknown = JSON.parse(await readFile(path, 'utf8'));
  return (
    isObject(value) &&
    value.version === undefined &&
    Array.isArray(value.keys) &&
    Array.isArray(value.answered)
  );
}

/** The answers a state file keeps, none when there is none, or why it cannot be used. */
async function readState(
  path: string,
  expected: { service: string | null; workspace: string; keys: readonly string[] },
): Promise<Map<string, RecertifyResponse> | string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    return `it cannot be read: ${(error as Error).message}`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON: cut short or edited';
  }
  if (!isObject(value)) return 'not a JSON object';
  if (value.version !== 1) return 'no version 1';
  if (value.service !== expected.service) return 'another service';
  if (value.workspace !== expected.workspace) return 'another workspace';
  if (JSON.stringify(value.keys) !== JSON.stringify(expected.keys)) return 'another run';
  if (!isObject(value.answered)) return 'no answered parts';
  const answered = new Map<string, RecertifyResponse>();
  for (const [key, response] of Object.entries(value.answered)) {
    if (!expected.keys.includes(key)) return `answered part ${key} is not one of this run`;
    if (!isResponse(response)) return `the answer kept for part ${expected.keys.indexOf(key) + 1} is not one`;
    answered.set(key, response);
  }
  return answered;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;

/** The service's RecertifyResponse, every field as the contract has it. */
function isResponse(value: unknown): value is RecertifyResponse {
  return (
    isObject(value) &&
    typeof value.environmentLabel === 'string' &&
    isCount(value.submitted) &&
    isCount(value.governed) &&
    Array.isArray(value.outcomes) &&
    value.outcomes.every(isOutcome)
  );
}

function isOutcome(value: unknown): boolean {
  if (!isObject(value)) return false;
  const view = value.certifiedView;
  return (
    typeof value.table === 'string' &&
    typeof value.outcome === 'string' &&
    typeof value.driftDetected === 'boolean' &&
    (value.staleSubmission === undefined || typeof value.staleSubmission === 'boolean') &&
    (view === undefined ||
      (isObject(view) &&
        typeof view.name === 'string' &&
        ['published', 'missing', 'columns_differ'].includes(view.health as string) &&
        (view.version === null || Number.isSafeInteger(view.version)) &&
        typeof view.republished === 'boolean' &&
        typeof view.detail === 'string' &&
        (view.ungatedSince === undefined ||
          view.ungatedSince === null ||
          typeof view.ungatedSince === 'string')))
  );
}
