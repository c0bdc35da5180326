// The executable's own cache folder is core/folders.ts's cacheDir ($XDG_CACHE_HOME/gds, else ~/.cache/gds).
// What it holds is derived from the executable and checked or keyed by its build: the keychain addon
// (native-addon.ts), help pages rendered on a terminal (terminal-help.ts).
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Writes a file of the cache whole or not at all (temp file, then rename: a concurrent or interrupted run
 * never sees half a file), in a folder only the user can read.
 */
export function writeCacheFile(dir: string, file: string, bytes: Uint8Array | string, mode: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const temp = `${file}.${process.pid}.tmp`;
  // A temp left by an earlier process with our pid; wx then refuses anything planted in its place.
  rmSync(temp, { force: true });
  writeFileSync(temp, bytes, { flag: 'wx', mode });
  renameSync(temp, file);
}
