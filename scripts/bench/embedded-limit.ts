// What `--embedded-row-limit` costs a records import on PGlite: every import batch that
// inserts rows counts the table's rows afterwards, in its transaction, reading at most the limit plus one
// (src/server/db/embedded-limit.ts), so the count grows with the table until the limit. Measured in this
// process on the embedded database, for a Mode B table grown in SQL to each size: the bounded count alone
// (median of 5), and a batch of 10,000 new rows through `POST /api/tables/{id}/import` (median of 3, the
// count included), as `gds records import` sends them. The table keeps the default limit (1,000,000).
import { performance } from 'node:perf_hooks';
import { countText } from '../../src/core/count-text.js';
import { DEFAULT_EMBEDDED_ROW_LIMIT } from '../../src/server/db/embedded-limit.js';
import { createModeBTable } from '../../test/helpers/records.js';
import { readWriteToken, startTestServer } from '../../test/helpers/server.js';
import { median, medianMs } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const SIZES = (process.env.GDS_BENCH_LIMIT_SIZES ?? '10000,100000,500000,900000').split(',').map(Number);
const BATCH = 10_000;
const BATCHES = 3;

export const run: BenchModule = async () => {
  const server = await startTestServer({ rateLimit: 1_000_000_000, queryTimeoutMs: 600_000 });
  try {
    const columns = [
      { name: 'sku', type: 'text', required: true },
      { name: 'qty', type: 'integer', required: false },
    ] as const;
    const tableId = await createModeBTable(server, 'limit_bench', [...columns]);
    const token = await readWriteToken(server, tableId, 'bench-embedded-limit');
    let rows = 0;
    /** Rows `from`..`to - 1`, as the import would store them. */
    const grow = (to: number) =>
      server.sql(
        `INSERT INTO gds.records (table_id, id, data, created_at, updated_at)
         SELECT $1, 'rec_' || g, jsonb_build_object('sku', 'SKU-' || g, 'qty', g), now(), now()
           FROM generate_series($2::int, $3::int - 1) AS g`,
        [tableId, rows, to],
      );
    const result: BenchRow[] = [];
    for (const size of SIZES) {
      await grow(size);
      rows = size;
      await server.sql('ANALYZE gds.records');
      const countMs = await medianMs(5, () =>
        server.sql('SELECT count(*) FROM (SELECT 1 FROM gds.records WHERE table_id = $1 LIMIT $2) AS r', [
          tableId,
          DEFAULT_EMBEDDED_ROW_LIMIT + 1,
        ]),
      );
      const batches: number[] = [];
      for (let b = 0; b < BATCHES; b++) {
        const body = {
          rows: Array.from({ length: BATCH }, (_, k) => ({ sku: `SKU-${rows + k}`, qty: rows + k })),
        };
        const started = performance.now();
        const response = await server.request('POST', `/api/tables/${tableId}/import?mode=upsert&key=sku`, {
          token,
          body,
        });
        batches.push(performance.now() - started);
        if (response.status !== 200) throw new Error(`import answered ${response.status}`);
        rows += BATCH;
      }
      const batchMs = median(batches);
      result.push({
        section: 'embedded server',
        name: `import batch of ${countText(BATCH)} rows into ${countText(size)} (ms)`,
        value: batchMs.toFixed(0),
        note: `the bounded count in it ${countText(Math.round(countMs))} ms (${((countMs / batchMs) * 100).toFixed(0)} %); PGlite, --embedded-row-limit ${countText(DEFAULT_EMBEDDED_ROW_LIMIT)}`,
      });
    }
    return result;
  } finally {
    await server.close();
  }
};
