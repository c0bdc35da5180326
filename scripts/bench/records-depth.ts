// A records page deep in a big warehouse table (one page used to cost the whole relation, a window
// count and an offset): a Mode A table of 3,000,000 rows on PostgreSQL (1,000,000 on the embedded PGlite),
// the page at depth 500,000 read by cursor, the spec's numbered page at the same depth (an offset: its cost
// is its depth), and the first page with its total. Medians of a few reads, with the server in this process.
import { performance } from 'node:perf_hooks';
import { encodeCursor } from '../../src/server/records/store.js';
import { pushDevDefinition } from '../../test/helpers/push.js';
import { startTestServer } from '../../test/helpers/server.js';
import type { BenchModule, BenchRow } from './types.js';

const DEPTH = 500_000;
const LIMIT = 100;
const READS = 7;

async function measure(database: 'pglite' | 'postgres', rows: number): Promise<BenchRow[]> {
  const server = await startTestServer(database === 'postgres' ? { database } : {});
  try {
    const started = performance.now();
    await server.sql(
      `CREATE TABLE analytics_dev.bench_events AS
         SELECT g AS id, 'event ' || g AS label, (g % 1000)::numeric / 10 AS amount
           FROM generate_series(1, ${rows}) AS g`,
    );
    await server.sql('ALTER TABLE analytics_dev.bench_events ADD PRIMARY KEY (id)');
    await server.sql('ANALYZE analytics_dev.bench_events');
    const loadSeconds = ((performance.now() - started) / 1000).toFixed(1);
    const pushed = await pushDevDefinition(server, 'bench_events', ['id', 'label', 'amount']);
    const tableId = pushed.body.governanceId as string;
    const issued = await server.issueToken('ADMIN', {
      name: 'bench',
      env: 'dev',
      scopes: [{ tableId, permissions: ['read'] }],
    });
    const token = issued.tokens.accessToken;
    const median = async (query: string): Promise<number> => {
      const times: number[] = [];
      for (let i = 0; i < READS; i++) {
        const t = performance.now();
        const response = await server.request('GET', `/api/tables/${tableId}/records?${query}`, { token });
        if (response.status !== 200) throw new Error(`GET records?${query} answered ${response.status}`);
        times.push(performance.now() - t);
      }
      return times.sort((a, b) => a - b)[Math.floor(READS / 2)] ?? NaN;
    };
    const engine = database === 'postgres' ? 'PostgreSQL' : 'PGlite';
    const size = `${(rows / 1e6).toFixed(0)}M rows`;
    const byCursor = await median(`limit=${LIMIT}&cursor=${encodeCursor(String(DEPTH))}`);
    const byPage = await median(`limit=${LIMIT}&page=${DEPTH / LIMIT + 1}`);
    const first = await median(`limit=${LIMIT}`);
    const note = `${engine}, ${size} (loaded in ${loadSeconds} s), median of ${READS}`;
    const budget = database === 'postgres' ? `, budget 20 ms: ${byCursor <= 20 ? 'within' : 'OVER'}` : '';
    return [
      {
        section: 'records',
        name: `page at depth 500,000 by cursor (${engine})`,
        value: `${byCursor.toFixed(1)} ms`,
        note: `${note}${budget}`,
      },
      {
        section: 'records',
        name: `page at depth 500,000 by page number (${engine})`,
        value: `${byPage.toFixed(1)} ms`,
        note: `${note}; an offset, as the spec's page must be`,
      },
      {
        section: 'records',
        name: `first page with its total (${engine})`,
        value: `${first.toFixed(1)} ms`,
        note: `${note}; the one page that counts the table`,
      },
    ];
  } finally {
    await server.close();
  }
}

export const run: BenchModule = async () => {
  const rows = await measure('pglite', 1_000_000);
  if (process.env.GDS_TEST_DATABASE_URL === undefined) {
    rows.push({
      section: 'records',
      name: 'page at depth 500,000 (PostgreSQL)',
      value: 'skipped',
      note: 'no PostgreSQL: set GDS_TEST_DATABASE_URL',
    });
    return rows;
  }
  return [...rows, ...(await measure('postgres', 3_000_000))];
};
