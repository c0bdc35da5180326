// Gate 1 over HTTP against an in-process reference server (PGlite) whose warehouse orders table is
// grown to 100,000 rows: a full dry run, each sample kind, a submission and suggestions (medians).
import { createServer } from '../../src/server/app.js';
import { ORDERS_RULES } from './lib/gate-rules.js';
import { growOrders, sender } from './lib/large-orders.js';
import type { BenchModule, BenchRow } from './types.js';

const ROWS = 100_000;
const ROUNDS = 3;

const RULES = ORDERS_RULES;

export const run: BenchModule = async () => {
  const server = await createServer({ port: 0, jobs: 'manual' });
  try {
    const { orders, token } = await growOrders(server, ROWS);
    const send = sender(server.url, token);
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await send(method, path, body);
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response.json();
    };
    await call('PUT', `/api/tables/${orders}/gate1`, { content: RULES });
    const median = async (fn: () => Promise<unknown>) => {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const start = performance.now();
        await fn();
        times.push(performance.now() - start);
      }
      return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] ?? 0;
    };
    const rows: BenchRow[] = [];
    const measure = async (name: string, note: string, fn: () => Promise<unknown>) => {
      rows.push({ section: 'gates', name, value: `${(await median(fn)).toFixed(0)} ms`, note });
    };
    const gateRun = (sample?: string) => () =>
      call('POST', `/api/tables/${orders}/gate-runs`, sample ? { sample } : {});
    await measure('gate run (full scan)', `${ROWS} rows, 6 baseline + 2 declared checks`, gateRun());
    await measure(
      'gate run --sample head:1000',
      'drawn once per run (see the samples bench)',
      gateRun('head:1000'),
    );
    await measure(
      'gate run --sample random:1000',
      'TABLESAMPLE or a seeded hash, drawn once per run',
      gateRun('random:1000'),
    );
    await measure('gate run --sample chunks:10@100', '', gateRun('chunks:10@100'));
    await measure('gate submit', 'full scan + proof + state + notification', () =>
      call('POST', `/api/tables/${orders}/gate-submissions`),
    );
    await measure('gate suggest', 'profiles every column', () =>
      call('POST', `/api/tables/${orders}/gate1/suggestions`),
    );
    return rows;
  } finally {
    await server.close();
  }
};
