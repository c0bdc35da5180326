// A process group a test starts detached (every `npm run server` of startServerProcess) ends with the test
// process that started it, however that process ends: killed, interrupted, or ended with the group still
// running (a test that failed before its stop). Here the test process is a node process of its own, which
// starts the group and is then ended the way a test run can end.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { seededPgliteCopy } from './migrated-database.js';
import { waitFor } from './server-process.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gds-group-guard-'));
// Every process group started here (the test processes, and the groups they print), ended if a failed test left it.
const groups: number[] = [];
afterAll(() => {
  for (const pgid of groups) if (alive(-pgid)) process.kill(-pgid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `code` (a TypeScript module run from the repository) as a test process; `line` is its first line's numbers. */
function testProcess(code: string): { child: ChildProcess; line: Promise<number[]>; closed: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, as vitest's on a terminal: Ctrl-C is a SIGINT to the group.
    detached: true,
  });
  if (child.pid !== undefined) groups.push(child.pid);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const line = new Promise<number[]>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const first = /^([\d ]+)\n/.exec(stdout)?.[1];
      if (first === undefined) return;
      const numbers = first.split(' ').map(Number);
      if (!numbers.every((n) => Number.isSafeInteger(n) && n > 1)) {
        reject(new Error(`not processes: ${first}`));
        return;
      }
      groups.push(numbers[0] as number);
      resolve(numbers);
    });
    void closed.then(() => reject(new Error(`the test process ended before it printed its line: ${stderr}`)));
  });
  return { child, line, closed };
}

/** Whether the process `pid` (the group `-pgid`) is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

// The test process's code: a group of `shell` (sh -c) started detached and guarded, its group and its guard's
// process printed, then `then`.
const guarded = (shell: string, then: string, graceMs?: number) => `
  import { spawn } from 'node:child_process';
  import { guardGroup } from './test/helpers/group-guard.ts';
  const group = spawn('sh', ['-c', ${JSON.stringify(shell)}], { detached: true, stdio: 'ignore' });
  group.unref();
  const guard = guardGroup(group.pid${graceMs === undefined ? '' : `, { graceMs: ${graceMs} }`});
  process.stdout.write(group.pid + ' ' + guard.pid + '\\n');
  ${then}
`;
const waitForever = 'setInterval(() => undefined, 1_000_000);';

describe('a process group a test starts ends with the test process', () => {
  it('npm run server, when the test process is killed (SIGKILL): the server stops cleanly', async () => {
    const copy = await seededPgliteCopy();
    try {
      const readyFile = join(dir, 'ready.json');
      const test = testProcess(`
        import { existsSync } from 'node:fs';
        import { startServerProcess, waitFor } from './test/helpers/server-process.ts';
        const args = ['--ready-file', ${JSON.stringify(readyFile)}, '--port', '0', '--data-dir', ${JSON.stringify(copy.dataDir)}];
        const server = startServerProcess(args);
        await waitFor(() => existsSync(${JSON.stringify(readyFile)}) && server.output.stdout.includes('whole tokens'), 'the ready file');
        process.stdout.write(server.child.pid + '\\n');
        ${waitForever}
      `);
      const [pgid = 0] = await test.line;
      expect(existsSync(readyFile)).toBe(true);
      test.child.kill('SIGKILL');
      await waitFor(() => !alive(-pgid), 'the server to end');
      // Its clean stop removes the ready file; a server killed outright would leave it.
      expect(existsSync(readyFile)).toBe(false);
    } finally {
      await copy.remove();
    }
  });

  it.concurrent.each([
    [
      'is interrupted (Ctrl-C: SIGINT to its process group)',
      (test: ChildProcess) => process.kill(-(test.pid ?? 0), 'SIGINT'),
    ],
    ['is ended (SIGTERM)', (test: ChildProcess) => test.kill('SIGTERM')],
  ])('when the test process %s', async (_, end) => {
    const test = testProcess(guarded('sleep 600', waitForever));
    const [pgid = 0] = await test.line;
    expect(alive(-pgid)).toBe(true);
    end(test.child);
    await test.closed;
    await waitFor(() => !alive(-pgid), 'the group to end');
  });

  it.concurrent(
    'when the test process exits with the group still running (a test failed before its stop)',
    async () => {
      const test = testProcess(guarded('sleep 600', 'process.exit(1);'));
      const [pgid = 0] = await test.line;
      await test.closed;
      await waitFor(() => !alive(-pgid), 'the group to end');
    },
  );

  it.concurrent(
    'and its output is drained once the test process is gone: what it writes as it stops does not break it',
    async () => {
      // As a server does on SIGTERM: a line, a pause, then more (here beyond a pipe's 64 KiB), then its last act,
      // which a failed write (a broken pipe) prevents.
      const marker = join(dir, 'stopped');
      const stop = `echo stopping || exit 1; sleep 0.5; i=0; while [ $i -lt 2000 ]; do echo "line $i of the output written as it stops" || exit 1; i=$((i+1)); done; touch ${marker}`;
      const test = testProcess(`
      import { spawn } from 'node:child_process';
      import { guardGroup } from './test/helpers/group-guard.ts';
      const group = spawn('sh', ['-c', ${JSON.stringify(`trap '${stop}' TERM; sleep 600 & wait`)}], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      group.stdout.resume();
      guardGroup(group.pid, { output: [group.stdout, group.stderr] });
      process.stdout.write(group.pid + '\\n');
      process.exit(0);
    `);
      const [pgid = 0] = await test.line;
      await test.closed;
      await waitFor(() => !alive(-pgid), 'the group to end');
      expect(existsSync(marker)).toBe(true);
    },
  );

  it.concurrent('with SIGKILL when SIGTERM does not end it within the grace', async () => {
    const test = testProcess(guarded("trap '' TERM; sleep 600", 'process.exit(0);', 200));
    const [pgid = 0] = await test.line;
    await test.closed;
    await waitFor(() => !alive(-pgid), 'the group to end');
  });

  it.concurrent('but not once released (the test stopped it): the guard signals nothing', async () => {
    const test = testProcess(guarded('sleep 600', 'guard.release(); process.exit(0);'));
    const [pgid = 0, guard = 0] = await test.line;
    await test.closed;
    await waitFor(() => !alive(guard), 'the guard to end');
    expect(alive(-pgid)).toBe(true);
  });
});
