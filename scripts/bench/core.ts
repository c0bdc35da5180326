// Figures for src/core artifacts and lifecycle: grammar load cost, parse time per format, transition throughput.
import { execFileSync } from 'node:child_process';
import { parseArtifact } from '../../src/core/artifacts/index.js';
import { transition } from '../../src/core/lifecycle/index.js';
import type { BenchModule, BenchRow } from './types.js';

const SQL = `-- orders, one row per order
CREATE OR REPLACE VIEW analytics.orders AS
WITH paid AS (SELECT id, customer_id, amount, paid_at FROM raw.orders WHERE status = 'paid')
SELECT p.id AS order_id, p.customer_id, p.amount::numeric AS amount, date_trunc('day', p.paid_at) AS paid_day
FROM paid p;
`;
const YAML = `table: orders
source: analytics.orders
decision_context: Drives the weekly pricing review.
columns:
  - name: order_id
    type: bigint
    required: true
  - customer_id
  - { name: amount, type: numeric }
  - paid_day
`;
const JSON_TEXT = JSON.stringify({
  table: 'orders',
  source: 'analytics.orders',
  columns: { order_id: 'bigint', customer_id: 'bigint', amount: 'numeric', paid_day: 'date' },
});

/** Median wall time of running `code` (an ES module) in a fresh Node process, minus a bare process. */
function coldRunMs(code: string, runs = 5): number {
  const time = (code: string) => {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      execFileSync(process.execPath, ['--input-type=module', '-e', code], { stdio: 'ignore' });
      samples.push(performance.now() - start);
    }
    return median(samples);
  };
  return time(code) - time('');
}

async function perCallUs(fn: () => unknown, iterations: number): Promise<number> {
  await fn();
  const start = performance.now();
  for (let i = 0; i < iterations; i++) await fn();
  return ((performance.now() - start) * 1000) / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export const run: BenchModule = async () => {
  const rows: BenchRow[] = [];
  const section = 'core';
  const pg = coldRunMs("const pg = await import('libpg-query'); await pg.loadModule();");
  rows.push({
    section,
    name: 'load PostgreSQL grammar (cold)',
    value: `${pg.toFixed(0)} ms`,
    note: 'libpg-query: import and WebAssembly compile, first SQL artifact or predicate only',
  });
  for (const [name, fileName, content] of [
    ['parse SQL view', 'orders.sql', SQL],
    ['parse YAML artifact', 'orders.yml', YAML],
    ['parse JSON artifact', 'orders.json', JSON_TEXT],
  ] as const) {
    const us = await perCallUs(() => parseArtifact({ fileName, content }), 500);
    rows.push({ section, name, value: `${us.toFixed(0)} µs`, note: 'per call, warm' });
  }
  const context = {
    mode: 'MODE_A' as const,
    certification: {
      proof: { fresh: true, failedPredicates: [] },
      gate3Required: false,
      gate3Satisfied: false,
      inspectionPolicyMet: true,
      liveChecks: { failed: [] },
    },
  };
  const us = await perCallUs(() => transition('PENDING_REVIEW', 'certify', context), 100_000);
  rows.push({
    section,
    name: 'lifecycle transition',
    value: `${us.toFixed(2)} µs`,
    note: 'certify from PENDING_REVIEW, per call',
  });
  return rows;
};
