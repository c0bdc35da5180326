// The reference server's memory on its embedded database (its budget: idle RSS ≤ 300 MB, start-up
// peak ≤ 500 MB): `npm run server` as a user starts it, in its own process; its peak RSS when the ready
// file appears (start-up: the WebAssembly compiled, the cluster unpacked, migrations and the seed run),
// its RSS after a while idle, and its RSS idle again after full gate runs on a grown orders table (a
// table small enough to be copied into a sandbox, and one of 1,000,000 rows, checked in place).
// `GDS_BENCH_EMBEDDED_ROWS=100000,1000000` sets the sizes (comma-separated; empty: no gate rows).
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReadyInfo } from '../../src/server/ready.js';
import { median } from './lib/measure.js';
import { ORDERS_RULES } from './lib/gate-rules.js';
import type { BenchModule, BenchRow } from './types.js';

const IDLE_MS = 20_000;
/** `GDS_BENCH_EMBEDDED_RUNS=0` skips the start-up rows. */
const RUNS = Number(process.env.GDS_BENCH_EMBEDDED_RUNS ?? 3);
/** Sandboxes close 30 s after their last use: the idle figure after gate runs is taken past that. */
const SETTLE_MS = 40_000;
const GATE_RUNS = 3;
const GATE_ROWS = (process.env.GDS_BENCH_EMBEDDED_ROWS ?? '100000,1000000')
  .split(',')
  .filter((size) => size.trim() !== '')
  .map(Number);
const ROOT = new URL('../..', import.meta.url).pathname;

/** VmRSS or VmHWM of a process, in MiB (Linux /proc). */
function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
}

/**
 * Where a process's resident memory is, in MiB, from /proc/PID/smaps: `wasm` (the WebAssembly heaps: the
 * pages of a linear memory in use, just before the gigabytes V8 reserves for it), `code` (V8's compiled
 * code, PGlite's WebAssembly included), `heap` (glibc's main arena, [heap]), `anon`
 * (every other private mapping: V8's heap, large malloc blocks, glibc's other arenas) and
 * `file` (the node binary's pages and other files).
 */
function residentParts(pid: number): Record<'wasm' | 'code' | 'heap' | 'anon' | 'file', number> {
  const parts = { wasm: 0, code: 0, heap: 0, anon: 0, file: 0 };
  // A linear memory is its pages in use (read-write) followed by the rest of its reservation (no access).
  let previous: { end: bigint; part: keyof typeof parts; rss: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const [, from = '0', to = '0', perms = '', name = ''] = head;
      const start = BigInt(`0x${from}`);
      const end = BigInt(`0x${to}`);
      if (
        previous?.part === 'anon' &&
        perms === '---p' &&
        end - start >= 2n ** 30n &&
        previous.end === start
      ) {
        parts.anon -= previous.rss;
        parts.wasm += previous.rss;
      }
      const part =
        name === '[heap]' ? 'heap' : name.startsWith('/') ? 'file' : perms.includes('x') ? 'code' : 'anon';
      previous = { end, part, rss: 0 };
      continue;
    }
    const rss = /^Rss:\s+(\d+)/.exec(line);
    if (rss && previous) {
      previous.rss = Number(rss[1]) / 1024;
      parts[previous.part] += previous.rss;
    }
  }
  return parts;
}

const partsText = (parts: Record<string, number>) =>
  Object.entries(parts)
    .map(([name, mib]) => `${name} ${mib.toFixed(0)}`)
    .join(', ');

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

interface Running {
  pid: number;
  info: ReadyInfo;
  seconds: number;
  stop(): Promise<void>;
}

/** `npm run server -- …` in a process group of its own, once its ready file is written. */
async function startServer(dir: string, args: string[] = []): Promise<Running> {
  const readyFile = join(dir, `ready-${Date.now()}.json`);
  const started = Date.now();
  const child: ChildProcess = spawn(
    'npm',
    ['run', '--silent', 'server', '--', '--port', '0', '--ready-file', readyFile, ...args],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
      detached: true,
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(-child.pid, 'SIGTERM');
    }
    await exited;
  };
  try {
    while (!existsSync(readyFile)) {
      if (child.exitCode !== null) throw new Error('the server exited before it was ready');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const seconds = (Date.now() - started) / 1000;
    const info = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
    return { pid: serverPid(readyFile), info, seconds, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function once(): Promise<{ peak: number; idle: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-'));
  const server = await startServer(dir);
  try {
    const peak = memoryMiB(server.pid, 'VmHWM');
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return { peak, idle: memoryMiB(server.pid, 'VmRSS'), seconds: server.seconds };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function call(
  info: ReadyInfo,
  method: string,
  path: string,
  token: string,
  body: unknown,
): Promise<number> {
  const response = await fetch(`${info.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * A server on a data directory whose orders table holds `rows` rows (written between two starts, with
 * PGlite in this process), then GATE_RUNS full gate runs: their median time, the server's peak, and its
 * RSS once the sandboxes have closed.
 */
async function afterGateRuns(
  rows: number,
): Promise<{ before: number; ms: number; peak: number; after: number; beforeParts: string; parts: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-'));
  const dataDir = join(dir, 'data');
  try {
    await (await startServer(dir, ['--data-dir', dataDir])).stop();
    const { PGlite } = await import('@electric-sql/pglite');
    const lite = await PGlite.create({ dataDir });
    await lite.query(
      `INSERT INTO analytics_dev.orders
       SELECT 'b' || g, 10000 + g, 1001 + g % 10, (g % 500)::numeric, 'SHIPPED', date '2024-01-01' + g % 365
         FROM generate_series(1, $1::int - 8) AS g`,
      [rows],
    );
    await lite.exec(`ANALYZE analytics_dev.orders;
      UPDATE gds.tables SET grain_key_columns = '["order_id"]' WHERE source = 'analytics_dev.orders';
      CHECKPOINT`);
    await lite.close();
    const server = await startServer(dir, ['--data-dir', dataDir]);
    try {
      const orders = server.info.tables.find((t) => t.source === 'analytics_dev.orders');
      const owner = server.info.users.find((u) => u.role === 'OWNER');
      if (!orders || !owner) throw new Error('the seed has no orders table or owner');
      const token = owner.accessToken;
      const applied = await call(server.info, 'PUT', `/api/tables/${orders.id}/gate1`, token, {
        content: ORDERS_RULES,
      });
      if (applied !== 200) throw new Error(`gate1 apply: ${applied}`);
      const before = memoryMiB(server.pid, 'VmRSS');
      const beforeParts = partsText(residentParts(server.pid));
      const times: number[] = [];
      for (let i = 0; i < GATE_RUNS; i++) {
        const started = performance.now();
        const status = await call(server.info, 'POST', `/api/tables/${orders.id}/gate-runs`, token, {});
        times.push(performance.now() - started);
        if (status !== 200) throw new Error(`gate run: ${status}`);
      }
      const peak = memoryMiB(server.pid, 'VmHWM');
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const after = memoryMiB(server.pid, 'VmRSS');
      return {
        before,
        beforeParts,
        ms: median(times),
        peak,
        after,
        parts: partsText(residentParts(server.pid)),
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const run: BenchModule = async () => {
  const runs: Array<{ peak: number; idle: number; seconds: number }> = [];
  for (let i = 0; i < RUNS; i++) runs.push(await once());
  const peak = median(runs.map((r) => r.peak));
  const idle = median(runs.map((r) => r.idle));
  const note = `npm run server on PGlite in memory, median of ${RUNS}`;
  const rows: BenchRow[] = [];
  if (RUNS > 0)
    rows.push(
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
    );
  for (const size of GATE_ROWS) {
    const r = await afterGateRuns(size);
    const label = `${size.toLocaleString('en')} rows`;
    rows.push(
      {
        section: 'embedded server',
        name: `gate run, ${label} (ms)`,
        value: r.ms.toFixed(0),
        note: `full run of the orders table (6 baseline + 2 declared checks), median of ${GATE_RUNS}; --data-dir`,
      },
      {
        section: 'embedded server',
        name: `peak RSS over gate runs, ${label} (MiB)`,
        value: r.peak.toFixed(0),
        note: `RSS before the runs ${r.before.toFixed(0)} MiB (${r.beforeParts})`,
      },
      {
        section: 'embedded server',
        name: `idle RSS after gate runs, ${label} (MiB)`,
        value: r.after.toFixed(0),
        note: `${SETTLE_MS / 1000} s after the last run (sandboxes closed): ${r.parts} MiB; budget 300: ${r.after <= 300 ? 'within' : 'OVER'}`,
      },
    );
  }
  return rows;
};
