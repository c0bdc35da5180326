/**
 * The state file a resumable transfer (records export, records import) keeps beside its work: replaced
 * whole at each checkpoint by writing `<state>.<random>.tmp` and renaming it over, so a reader never sees
 * half a state. A kill between the write and the rename leaves that temporary copy behind; removing the
 * state removes such copies too, so a finished transfer leaves nothing.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rename as renameFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * `rename` (when given) renames the temporary copy over the state: a state written under a lock renames it
 * only while the lock is held (recertify-state.ts, renameWhileHeld).
 */
export async function writeResumeState(
  path: string,
  state: unknown,
  mode: number,
  rename: (temp: string, path: string) => Promise<void> = renameFile,
): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temp, `${JSON.stringify(state)}\n`, { mode });
  await rename(temp, path);
}

export async function removeResumeState(path: string): Promise<void> {
  const leftover = `${basename(path)}.`;
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((name) => name.startsWith(leftover) && name.endsWith('.tmp'))
      .map((name) => rm(join(dirname(path), name), { force: true })),
  );
  await rm(path, { force: true });
}
