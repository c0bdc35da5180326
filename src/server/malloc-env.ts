// glibc's malloc settings for the reference server, set before anything else runs (main.ts imports this
// module first). glibc reads them only when a process starts, so on Linux the server starts itself again
// in the same process (process.execve: same pid, same stdio, nothing left behind) with them set, unless
// they are already set (a user's own choice, or this re-exec). Measured with `npm run bench
// embedded-memory` (docs/server.md, "Where PGlite ends"): without them, after gate runs the server kept
// 60-120 MB it had freed (the copies a run moves between PGlite workers; each worker thread's arena).
// - MALLOC_MMAP_THRESHOLD_: every block of 32 KB or more is its own mapping, unmapped when freed (glibc
//   otherwise raises this threshold to the largest block freed so far, up to 32 MB, and keeps those).
// - MALLOC_TRIM_THRESHOLD_: free memory at the top of the heap is returned past 32 KB.
// - MALLOC_ARENA_MAX: one arena for the process instead of up to eight per core, so the memory a worker
//   thread (PGlite's, a sandbox's) freed is not kept apart in an arena of its own.
// Idle RSS after three full gate runs of 100,000 rows (MiB), copies through a file (pglite-worker.ts),
// by MMAP/TRIM threshold and arenas: 131072/131072/2 (the settings before) 304; 131072/131072/1 301;
// 32768/32768/2 285-294; 16384/16384/2 283; 32768/32768/1 278; 16384/16384/1 276.
import process from 'node:process';

export const MALLOC_SETTINGS: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: '32768',
  MALLOC_TRIM_THRESHOLD_: '32768',
  MALLOC_ARENA_MAX: '1',
};

const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never })
  .execve;
const unset = Object.keys(MALLOC_SETTINGS).every((name) => process.env[name] === undefined);
if (process.platform === 'linux' && execve && unset) {
  execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    ...process.env,
    ...MALLOC_SETTINGS,
  });
}
