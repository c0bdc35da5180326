// Reference server throughput: GET records over keep-alive (a raised --rate-limit), a fixed number
// of requests from a few concurrent connections, with the server in its own process so its peak
// RSS is its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { ReadyInfo } from '../../src/server/ready.js';
import type { BenchModule, BenchRow } from './types.js';

const CONNECTIONS = 4;
const WARMUP = 200;
const ROUNDS: Array<{ table: string; requests: number; note: string }> = [
  { table: 'crm_contacts', requests: 5_000, note: 'Mode B (service storage), limit=20' },
  { table: 'customers', requests: 2_000, note: 'Mode A (warehouse object), limit=20' },
];

async function waitForFile(path: string, child: { exitCode: number | null }): Promise<void> {
  for (let i = 0; i < 1200 && child.exitCode === null; i += 1) {
    if (existsSync(path)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the server did not write its ready file');
}

/** Resident set size of a process (`VmRSS` now, `VmHWM` its peak), from /proc (Linux). */
function memoryMiB(pid: number, field: 'VmRSS' | 'VmHWM'): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return (kib / 1024).toFixed(0);
}

async function hammer(agent: Agent, url: string, token: string, total: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next += 1;
      const started = performance.now();
      const response = await request(url, {
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}` },
      });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`GET records answered ${response.statusCode}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return latencies;
}

function percentile(sorted: number[], p: number): string {
  return (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN).toFixed(2);
}

export const run: BenchModule = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-'));
  const readyFile = join(dir, 'ready.json');
  const server = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'src/server/main.ts',
      '--port',
      '0',
      '--ready-file',
      readyFile,
      '--rate-limit',
      '1000000000',
    ],
    { cwd: new URL('../..', import.meta.url).pathname, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const agent = new Agent({ connections: CONNECTIONS, keepAliveTimeout: 30_000 });
  const rows: BenchRow[] = [];
  try {
    await waitForFile(readyFile, server);
    const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
    const rssAtStart = memoryMiB(server.pid ?? 0, 'VmRSS');
    const owner = ready.users.find((u) => u.role === 'OWNER');
    const grants = ROUNDS.map((r) => ({
      tableId: ready.tables.find((t) => t.name === r.table)?.id ?? '',
      permissions: ['read'],
    }));
    const issued = await request(`${ready.baseUrl}/api/integration/tokens`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${owner?.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench', env: '*', scopes: grants }),
    });
    const token = ((await issued.body.json()) as { tokens: { accessToken: string } }).tokens.accessToken;
    for (const [i, round] of ROUNDS.entries()) {
      const url = `${ready.baseUrl}/api/tables/${grants[i]?.tableId}/records?limit=20`;
      await hammer(agent, url, token, WARMUP);
      const started = performance.now();
      const latencies = (await hammer(agent, url, token, round.requests)).sort((a, b) => a - b);
      const seconds = (performance.now() - started) / 1000;
      const section = `server GET records ${round.table}`;
      rows.push(
        {
          section,
          name: 'requests',
          value: String(round.requests),
          note: `${CONNECTIONS} keep-alive connections; ${round.note}`,
        },
        { section, name: 'requests/s', value: (round.requests / seconds).toFixed(0) },
        {
          section,
          name: 'latency p50 / p99 (ms)',
          value: `${percentile(latencies, 0.5)} / ${percentile(latencies, 0.99)}`,
        },
      );
    }
    rows.push(
      {
        section: 'server',
        name: 'RSS when ready (MiB)',
        value: rssAtStart,
        note: 'server process, PGlite in memory',
      },
      {
        section: 'server',
        name: 'peak RSS (MiB)',
        value: memoryMiB(server.pid ?? 0, 'VmHWM'),
        note: 'over the whole run, start-up included (PGlite migrating and seeding)',
      },
    );
  } finally {
    await agent.close();
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
};
