// A process group a test starts detached (`npm run server` in its own group, so that a signal reaches the
// server through npm and sh) outlives the test process unless something ends it: Ctrl-C on vitest, vitest
// killed, or a test that fails before its stop would leave the server running with its port and its database.
// The guard is a small process of its own (out of the terminal's process group, so Ctrl-C does not end it
// first) that holds a pipe from the test process: the pipe closes when the test process ends, however it
// ends, SIGKILL included. The guard then sends the group SIGTERM (the server's clean stop), and SIGKILL if
// the group is still there `graceMs` later. It also holds the group's output pipes and drains them once the
// test process is gone: the server's "SIGTERM: stopping" then finds a reader, instead of failing on a broken
// pipe before the server has stopped.
//
//   const guard = guardGroup(child.pid, { output: [child.stdout, child.stderr] });
//   child.on('close', () => guard.release());   // stopped by the test: the guard goes, the group is not signalled
import type { StdioOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

// Run by the guard process (CommonJS, `node -e`): argv[1] is the group, argv[2] the grace in milliseconds; its
// stdout and stderr are the read ends of the group's output pipes (or /dev/null, which is not drained).
const GUARD = `
const { Socket } = require('node:net');
const group = -Number(process.argv[1]);
const graceMs = Number(process.argv[2]);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
const alive = () => { try { process.kill(group, 0); return true; } catch { return false; } };
process.stdin.on('data', () => {});
process.stdin.on('close', () => {
  // Read through the event loop: the pipes are non-blocking (the test process's end made them so).
  for (const fd of [1, 2]) try { new Socket({ fd, readable: true, writable: false }).on('error', () => {}).resume(); } catch {}
  try { process.kill(group, 'SIGTERM'); } catch { process.exit(0); }
  const until = Date.now() + graceMs;
  setInterval(() => {
    if (!alive()) process.exit(0);
    if (Date.now() < until) return;
    try { process.kill(group, 'SIGKILL'); } catch {}
    process.exit(0);
  }, 100);
});
`;

export interface GroupGuard {
  /** The guard's process. */
  pid: number | undefined;
  /** The group ended or was stopped by the test: the guard ends without signalling it. */
  release(): void;
}

/**
 * Ends the process group `pgid` when this process ends, however it ends, unless released first. `output`: the
 * group's stdout and stderr as this process reads them, drained by the guard once this process is gone.
 */
export function guardGroup(
  pgid: number | undefined,
  options: { output?: [Readable | null, Readable | null]; graceMs?: number } = {},
): GroupGuard {
  if (pgid === undefined) return { pid: undefined, release: () => undefined };
  // The pipes' descriptors in this process, which the guard gets a copy of (the streams themselves, given to
  // spawn, would stop being read here).
  const fd = (stream: Readable | null | undefined) =>
    (stream as unknown as { _handle?: { fd?: number } } | null)?._handle?.fd ?? 'ignore';
  const stdio: StdioOptions = ['pipe', fd(options.output?.[0]), fd(options.output?.[1])];
  const guard = spawn(process.execPath, ['-e', GUARD, String(pgid), String(options.graceMs ?? 30_000)], {
    stdio,
    // A session of its own: Ctrl-C and the terminal's hang-up reach the test process, not the guard.
    detached: true,
    // A bare node: none of the test process's options (NODE_OPTIONS) or variables.
    env: {},
  });
  // Neither the guard nor its pipe keeps the test process alive.
  guard.unref();
  (guard.stdin as Socket | null)?.unref();
  guard.stdin?.on('error', () => undefined);
  return {
    pid: guard.pid,
    release() {
      if (guard.exitCode === null && guard.signalCode === null) guard.kill('SIGKILL');
    },
  };
}
