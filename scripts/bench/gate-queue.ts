// The embedded server (PGlite) under gate work: 8 Gate 1 runs sent at once on an orders table of 100,000
// rows, while a reader asks for the table list and a status over and over. What the reader waited (median,
// slowest, how many past a client's 30 s) and what the runs got (200, or 503 server_busy with Retry-After
// from the bounded gate queue, db/gate-queue.ts), beside one run alone. In this process, over HTTP.
import { createServer } from '../../src/server/app.js';
import { ORDERS_RULES } from './lib/gate-rules.js';
import { growOrders, sender } from './lib/large-orders.js';
import type { BenchModule, BenchRow } from './types.js';

const ROWS = Number(process.env.GDS_BENCH_GATE_ROWS ?? 100_000);
const RUNS = 8;

export const run: BenchModule = async () => {
  const server = await createServer({ port: 0, jobs: 'manual' });
  try {
    const { orders, token } = await growOrders(server, ROWS);
    const customers = server.ready.tables.find((t) => t.name === 'customers')?.id ?? '';
    const send = sender(server.url, token);
    const call = async (method: string, path: string, body?: unknown) => {
      const started = performance.now();
      const response = await send(method, path, body);
      await response.text();
      return {
        status: response.status,
        ms: performance.now() - started,
        retryAfter: response.headers.get('retry-after'),
      };
    };
    await call('PUT', `/api/tables/${orders}/gate1`, { content: ORDERS_RULES });
    const gateRun = () => call('POST', `/api/tables/${orders}/gate-runs`, {});
    const alone = await gateRun();
    let reading = true;
    const reads: number[] = [];
    const reader = (async () => {
      while (reading) {
        for (const path of ['/api/tables?limit=100', `/api/tables/${customers}/status`]) {
          const read = await call('GET', path);
          if (read.status !== 200) throw new Error(`GET ${path} answered ${read.status}`);
          reads.push(read.ms);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    const started = performance.now();
    const runs = await Promise.all(Array.from({ length: RUNS }, gateRun));
    const allMs = performance.now() - started;
    reading = false;
    await reader;
    reads.sort((a, b) => a - b);
    const ok = runs.filter((r) => r.status === 200);
    const busy = runs.filter((r) => r.status === 503);
    const note = `PGlite, orders of ${ROWS.toLocaleString('en-US')} rows, ${RUNS} Gate 1 runs at once`;
    return [
      {
        section: 'gate-queue',
        name: 'one gate run alone',
        value: `${(alone.ms / 1000).toFixed(1)} s`,
        note: `PGlite, orders of ${ROWS.toLocaleString('en-US')} rows, status ${alone.status}`,
      },
      {
        section: 'gate-queue',
        name: `a read while ${RUNS} gate runs`,
        value: `${(reads[Math.floor(reads.length / 2)] ?? NaN).toFixed(0)} ms`,
        note: `${note}: median of ${reads.length} reads (table list, status); slowest ${((reads.at(-1) ?? NaN) / 1000).toFixed(1)} s, past 30 s: ${reads.filter((ms) => ms > 30_000).length}`,
      },
      {
        section: 'gate-queue',
        name: `${RUNS} gate runs at once`,
        value: `${(allMs / 1000).toFixed(1)} s`,
        note: `${ok.length} answered 200 (slowest ${(Math.max(...ok.map((r) => r.ms)) / 1000).toFixed(1)} s), ${busy.length} 503 server_busy after ${busy.length ? (Math.max(...busy.map((r) => r.ms)) / 1000).toFixed(1) : '-'} s at most, Retry-After ${busy.map((r) => r.retryAfter).join('/') || '-'} s`,
      },
    ] satisfies BenchRow[];
  } finally {
    await server.close();
  }
};
