// `npm run server -- …` as a real process (what a person or a deployment starts), for tests that need the
// process itself: its output, its signals, or several processes at once.
//
//   const server = startServerProcess(['--ready-file', file, '--port', '0']);
//   await waitFor(() => existsSync(file) && server.output.stdout.includes('whole tokens'), 'the ready file');
//   server.signal('SIGTERM'); await server.closed;
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { guardGroup } from './group-guard.js';

export interface ServerProcess {
  child: ChildProcess;
  /** Everything the process printed so far. */
  output: { stdout: string; stderr: string };
  /** npm's exit code once it exits. */
  exited: Promise<number | null>;
  /** Once every process holding the output pipes (npm, sh, tsx, the server) is gone. */
  closed: Promise<void>;
  /** Signals the whole process group. */
  signal(name: NodeJS.Signals): void;
}

/** `env`: variables set for the server beside this process's own. */
export function startServerProcess(args: string[], env: Record<string, string> = {}): ServerProcess {
  const child = spawn('npm', ['run', '--silent', 'server', '--', ...args], {
    cwd: new URL('../..', import.meta.url).pathname,
    // npm's own update check reaches the registry: not what these tests time.
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: npm runs the script through `sh -c`, which does not pass signals on,
    // so the group is signalled, as a terminal does on Ctrl-C.
    detached: true,
  });
  // Its group ends with this test process, however that ends (group-guard.ts), unless it has closed first.
  const guard = guardGroup(child.pid, { output: [child.stdout, child.stderr] });
  const output = { stdout: '', stderr: '' };
  child.stdout?.on('data', (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      guard.release();
      resolve();
    }),
  );
  const signal = (name: NodeJS.Signals) => process.kill(-(child.pid ?? 0), name);
  return { child, output, exited, closed, signal };
}

/** Polls `condition` every 100 ms for up to a minute; throws naming `what` when it never holds. */
export async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
