// The lock an import holds on its state file while it runs: proper-lockfile's `<state>.lock`, as the config
// file's, and beside it `<state>.pid`, naming the process that holds it. Two imports of the same input (the
// same file, or stdin) into one table on one key share a state file: the second would have taken the
// first's place for an interrupted run's, and each would overwrite the other's. The second is refused at
// once while the holder runs; the lock of a holder that is gone (a kill) is taken over once it is stale
// (the holder refreshes it every second), rather than waiting for a run that will not end.
import { rmSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LockOptions } from 'proper-lockfile';
import { CliError, ExitCode } from '../core/errors.js';

const lockOptions = { realpath: false, stale: 5_000, update: 1_000 } satisfies LockOptions;
/** A dead holder's lock goes stale within `stale`: waited for, a little longer. */
const TAKE_OVER = { retries: 30, factor: 1, minTimeout: 200, maxTimeout: 200 };

/**
 * How many times the lock is tried again when its holder ended between the refusal and the read of its
 * pid: a run of imports each ending just then is not waited out for ever.
 */
const RETAKES = 5;

/** Moments of holdState a test can act in (what another process would do then). */
export interface HoldStateMoments {
  /** After the lock was refused, before the holder's pid is read. */
  refused?: () => Promise<void>;
}

/** Holds `<state>.lock` while an import runs, and gives back its release. */
export async function holdState(
  path: string,
  tableId: string,
  options: { input: string; key?: string | undefined },
  moments: HoldStateMoments = {},
): Promise<() => Promise<void>> {
  // Loaded by an import only, as the config file's lock is loaded by a write only.
  const { lock } = await import('proper-lockfile');
  const lockfilePath = `${path}.lock`;
  const pidFile = `${path}.pid`;
  const take = (retries: number | typeof TAKE_OVER) =>
    // A lock taken over while this import holds it means its process was stopped past `stale`: the import
    // goes on, as the other one found this one gone.
    lock(path, { ...lockOptions, lockfilePath, retries, onCompromised: () => undefined });
  let release: (() => Promise<void>) | undefined;
  for (let attempt = 1; release === undefined; attempt += 1) {
    try {
      release = await take(0);
    } catch (error) {
      if (!locked(error)) throw error;
      await moments.refused?.();
      const holder = await holderOf(pidFile, lockfilePath);
      if (holder === 'gone' && attempt < RETAKES) continue;
      const pid = typeof holder === 'number' ? holder : undefined;
      if (pid === undefined || processRuns(pid)) throw importRunning(pid, lockfilePath, tableId, options);
      try {
        release = await take(TAKE_OVER);
      } catch (again) {
        if (!locked(again)) throw again;
        const next = await holderOf(pidFile, lockfilePath);
        throw importRunning(typeof next === 'number' ? next : undefined, lockfilePath, tableId, options);
      }
    }
  }
  await writeFile(pidFile, `${process.pid}\n`, { mode: 0o600 });
  // Ctrl-C ends gds with process.exit (130): the pid file goes then too, as proper-lockfile's lock does.
  const onExit = () => rmSync(pidFile, { force: true });
  process.once('exit', onExit);
  return async () => {
    process.off('exit', onExit);
    await rm(pidFile, { force: true });
    await release().catch(() => undefined);
  };
}

function locked(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ELOCKED';
}

/**
 * The holder's pid; one that has just taken the lock writes it right after, so it is waited for a moment.
 * `gone` when the lock was released meanwhile (its holder ended), undefined when no pid was written in time.
 */
async function holderOf(pidFile: string, lockfilePath: string): Promise<number | 'gone' | undefined> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
    if (Number.isSafeInteger(pid) && pid > 0) return pid;
    if (
      !(await stat(lockfilePath).then(
        () => true,
        () => false,
      ))
    )
      return 'gone';
    await sleep(20);
  }
  return undefined;
}

function importRunning(
  pid: number | undefined,
  lock: string,
  tableId: string,
  options: { input: string; key?: string | undefined },
): CliError {
  const what = options.input === '-' ? 'stdin' : options.input;
  return new CliError(
    `Another gds import of ${what} into ${tableId}${options.key === undefined ? '' : ` on --key ${options.key}`} is running${pid === undefined ? '' : ` (process ${pid})`}.`,
    {
      exitCode: ExitCode.Conflict,
      code: 'import_running',
      suggestion:
        options.input === '-'
          ? `Wait for it to end: imports from stdin into one table on one key go one at a time (each keeps its place for --resume); to load several inputs at once, write each to a file and import the files. If no import runs, remove ${lock}.`
          : `Wait for it to end: the same file imported twice at once would send every row twice. If no import runs, remove ${lock}.`,
      details: { pid: pid ?? null, lock },
    },
  );
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
