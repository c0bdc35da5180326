// The reference server's memory on its embedded database (issue 25 item 7: idle RSS ≤ 300 MB, start-up
// peak ≤ 500 MB): `npm run server` as a user starts it, in its own process; its peak RSS when the ready
// file appears (start-up: the WebAssembly compiled, the cluster unpacked, migrations and the seed run),
// and its RSS after a while idle (no sandbox open: a gate run opens them, and they close when unused).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchModule, BenchRow } from './types.js';

const IDLE_MS = 20_000;
const RUNS = 3;

/** VmRSS or VmHWM of a process, in MiB (Linux /proc). */
function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
}

/** The node process running src/server/main.ts with this ready file (npm and sh sit above it). */
function serverPid(readyFile: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (() => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      } catch {
        return [];
      }
    })();
    if (argv.some((a) => a.endsWith('src/server/main.ts')) && argv.includes(readyFile)) return Number(entry);
  }
  throw new Error('no server process found');
}

async function once(): Promise<{ peak: number; idle: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-'));
  const readyFile = join(dir, 'ready.json');
  const started = Date.now();
  const child = spawn('npm', ['run', '--silent', 'server', '--', '--port', '0', '--ready-file', readyFile], {
    cwd: new URL('../..', import.meta.url).pathname,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
    detached: true,
  });
  try {
    while (!existsSync(readyFile)) {
      if (child.exitCode !== null) throw new Error('the server exited before it was ready');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (Date.now() - started) / 1000;
    const pid = serverPid(readyFile);
    const peak = memoryMiB(pid, 'VmHWM');
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return { peak, idle: memoryMiB(pid, 'VmRSS'), seconds };
  } finally {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

export const run: BenchModule = async () => {
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once());
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
  const peak = median(runs.map((r) => r.peak));
  const idle = median(runs.map((r) => r.idle));
  const note = `npm run server on PGlite in memory, median of ${RUNS}`;
  const rows: BenchRow[] = [
    {
      section: 'embedded server',
      name: 'start-up peak RSS (MiB)',
      value: peak.toFixed(0),
      note: `${note}; budget 500: ${peak <= 500 ? 'within' : 'OVER'} (was 1,100)`,
    },
    {
      section: 'embedded server',
      name: `idle RSS after ${IDLE_MS / 1000} s (MiB)`,
      value: idle.toFixed(0),
      note: `${note}; budget 300: ${idle <= 300 ? 'within' : 'OVER'} (was 466–734)`,
    },
    {
      section: 'embedded server',
      name: 'ready after (s)',
      value: median(runs.map((r) => r.seconds)).toFixed(1),
      note: 'npm and the TypeScript loader included',
    },
  ];
  return rows;
};
