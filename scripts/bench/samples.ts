// Cheap samples: Gate 1 over HTTP against an in-process reference server whose warehouse
// orders table is grown to 1,000,000 rows, on PGlite and on PostgreSQL (GDS_TEST_DATABASE_URL; the rows
// say why they are skipped without it). A full dry run, then each sample kind, as a share of the full
// scan (budget: each sample <= 25 %). `npm run bench samples`; GDS_BENCH_SAMPLE_ROWS changes the size.
import { startTestServer } from '../../test/helpers/server.js';
import type { TestServer } from '../../test/helpers/server.js';
import { median } from './lib/measure.js';
import { ORDERS_RULES } from './lib/gate-rules.js';
import type { BenchModule, BenchRow } from './types.js';

const ROWS = Number(process.env.GDS_BENCH_SAMPLE_ROWS ?? 1_000_000);
const ROUNDS = 3;
const SAMPLES = ['head:1000', 'tail:1000', 'random:1000', 'chunks:4@250'];

const RULES = ORDERS_RULES;

async function measure(server: TestServer, section: string): Promise<BenchRow[]> {
  const orders = server.table('orders').id;
  const token = server.user('OWNER').accessToken;
  await server.sql(
    `INSERT INTO analytics_dev.orders
     SELECT 'b' || g, 10000 + g, 1001 + g % 10, (g % 500)::numeric, 'SHIPPED', date '2024-01-01' + g % 365
       FROM generate_series(1, $1::int - 8) AS g`,
    [ROWS],
  );
  await server.sql('ANALYZE analytics_dev.orders');
  await server.sql(`UPDATE gds.tables SET grain_key_columns = '["order_id"]' WHERE id = $1`, [orders]);
  const applied = await server.request('PUT', `/api/tables/${orders}/gate1`, {
    token,
    body: { content: RULES },
  });
  if (applied.status !== 200) throw new Error(`gate1 apply: ${applied.status}`);
  const timed = async (sample?: string) => {
    const times: number[] = [];
    let method = '';
    for (let i = 0; i < ROUNDS; i += 1) {
      const started = performance.now();
      const response = await server.request('POST', `/api/tables/${orders}/gate-runs`, {
        token,
        body: sample ? { sample } : {},
      });
      times.push(performance.now() - started);
      if (response.status !== 200) throw new Error(`gate run ${sample ?? ''}: ${response.status}`);
      method = (response.body.sample?.method as string | undefined) ?? '';
    }
    return { ms: median(times), method };
  };
  const full = await timed();
  const rows: BenchRow[] = [
    {
      section,
      name: 'gate run (full scan)',
      value: `${full.ms.toFixed(0)} ms`,
      note: `${ROWS} rows, 6 baseline + 2 declared checks, grain key order_id; median of ${ROUNDS}`,
    },
  ];
  for (const sample of SAMPLES) {
    const { ms, method } = await timed(sample);
    const share = (100 * ms) / full.ms;
    rows.push({
      section,
      name: `gate run --sample ${sample}`,
      value: `${ms.toFixed(0)} ms`,
      note: `${share.toFixed(1)} % of the full scan (budget 25 %${share <= 25 ? '' : ': OVER'}); ${method}`,
    });
  }
  return rows;
}

export const run: BenchModule = async () => {
  const rows: BenchRow[] = [];
  const pglite = await startTestServer({ jobs: 'manual', rateLimit: 1_000_000_000 });
  try {
    rows.push(...(await measure(pglite, 'samples-pglite')));
  } finally {
    await pglite.close();
  }
  if (!process.env.GDS_TEST_DATABASE_URL) {
    rows.push({
      section: 'samples-postgres',
      name: 'gate run --sample … on PostgreSQL',
      value: 'skipped',
      note: 'GDS_TEST_DATABASE_URL is not set, so no PostgreSQL is reachable',
    });
    return rows;
  }
  const postgres = await startTestServer({ jobs: 'manual', database: 'postgres', rateLimit: 1_000_000_000 });
  try {
    rows.push(...(await measure(postgres, 'samples-postgres')));
  } finally {
    await postgres.close();
  }
  return rows;
};
