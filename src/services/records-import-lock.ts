// The lock an import holds on its state file while it runs, `<state>.lock`: a file naming the process that
// holds it. Two imports of the same input (the same file, or stdin) into one table on one key share a state
// file: the second would have taken the first's place for an interrupted run's, and each would overwrite the
// other's. A lock whose process is gone (a kill) is taken over at once, which a lock that goes stale after a
// time (proper-lockfile's) would not do: the next import would be refused until then.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { CliError, ExitCode } from '../core/errors.js';

/** Holds `<state>.lock` while an import runs, and gives back its release. */
export async function holdState(
  path: string,
  tableId: string,
  options: { input: string; key?: string | undefined },
): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  // Written whole beside it, then linked into place (which fails when the lock exists): a lock is never seen
  // empty. Created with 'wx' and then written, another import starting at that moment read no pid, took the
  // lock for a dead one's, removed it and ran too.
  const mine = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(mine, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await link(mine, lock);
        // Ctrl-C ends gds with process.exit (130): the lock goes then too; only a kill leaves it (taken over).
        const onExit = () => rmSync(lock, { force: true });
        process.once('exit', onExit);
        return async () => {
          process.off('exit', onExit);
          await rm(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const pid = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
      // A second EEXIST: another import took the lock between its removal and ours.
      if (attempt > 0 || (Number.isSafeInteger(pid) && pid > 0 && processRuns(pid))) {
        throw importRunning(pid, lock, tableId, options);
      }
      await rm(lock, { force: true });
    }
  } finally {
    await rm(mine, { force: true });
  }
}

function importRunning(
  pid: number,
  lock: string,
  tableId: string,
  options: { input: string; key?: string | undefined },
): CliError {
  const what = options.input === '-' ? 'stdin' : options.input;
  return new CliError(
    `Another gds import of ${what} into ${tableId}${options.key === undefined ? '' : ` on --key ${options.key}`} is running (process ${pid}).`,
    {
      exitCode: ExitCode.Conflict,
      code: 'import_running',
      suggestion:
        options.input === '-'
          ? `Wait for it to end: imports from stdin into one table on one key go one at a time (each keeps its place for --resume); to load several inputs at once, write each to a file and import the files. If no import runs, remove ${lock}.`
          : `Wait for it to end: the same file imported twice at once would send every row twice. If no import runs, remove ${lock}.`,
      details: { pid, lock },
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
