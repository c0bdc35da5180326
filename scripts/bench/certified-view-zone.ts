// What a Mode B certified view's zone test costs its readers (b129f47e): the view reads a record's timestamp
// written without a zone as a time at UTC (a CASE on its text: `substr(t, 11) ~ '[^0-9:. T]'`), where it was
// a plain `::timestamptz` before, read in the reader's zone. A filter on that timestamp over 1,000,000 records
// (GDS_BENCH_ZONE_ROWS), through the view as published and through one of the old plain cast beside it, each
// the median of 7 reads taken in turn; on PGlite and, with GDS_TEST_DATABASE_URL, on PostgreSQL.
import { performance } from 'node:perf_hooks';
import { publishCertifiedView } from '../../src/server/certification/view.js';
import type { Db } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { loadGateTable } from '../../src/server/gates/table.js';
import { scratchDir } from '../../test/helpers/migrated-database.js';
import { createPostgresDatabase } from '../../test/helpers/server.js';
import { seededGateTables } from '../../test/server/gates/seeded-gate-tables.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const ROWS = Number(process.env.GDS_BENCH_ZONE_ROWS ?? 1_000_000);
const READS = 7;
const FILTER = `WHERE seen_at >= timestamptz '2026-04-01 00:00Z'`;

async function measure(engine: 'PGlite' | 'PostgreSQL'): Promise<BenchRow[]> {
  const database = engine === 'PostgreSQL' ? await createPostgresDatabase() : undefined;
  const db: Db = database
    ? await openDb({ databaseUrl: database.url, queryTimeoutMs: 600_000 })
    : await openDb({ scratchDir: await scratchDir(), queryTimeoutMs: 600_000 });
  try {
    const seeded = (await seededGateTables(db, '{}')).contacts;
    await db.query(
      `UPDATE gds.tables SET columns = columns || '[{"name": "seen_at", "type": "timestamp", "required": false}]'
        WHERE id = $1`,
      [seeded.id],
    );
    // One record every 13 seconds from 1 January 2026, written without a zone as most writers do.
    await db.query(
      `INSERT INTO gds.records (table_id, id, data, created_at, updated_at)
       SELECT $1, 'bench_' || g, jsonb_build_object('email', 'c' || g || '@example.com', 'seen_at',
              to_char(timestamp '2026-01-01' + g * interval '13 seconds', 'YYYY-MM-DD"T"HH24:MI:SS')), now(), now()
         FROM generate_series(1, $2::int) AS g`,
      [seeded.id, ROWS],
    );
    await db.exec('ANALYZE gds.records');
    const table = await loadGateTable(db, seeded.workspaceId, seeded.id);
    const view = await db.transaction((tx) => publishCertifiedView(tx, table));
    await db.exec(
      `CREATE VIEW public.bench_plain_cast AS SELECT id, (data->>'seen_at')::timestamptz AS seen_at
         FROM gds.records WHERE table_id = '${seeded.id.replaceAll("'", "''")}'`,
    );
    const times: Record<'case' | 'plain', number[]> = { case: [], plain: [] };
    const read = async (key: 'case' | 'plain', relation: string) => {
      const started = performance.now();
      await db.query(`SELECT count(*) FROM ${relation} ${FILTER}`);
      times[key].push(performance.now() - started);
    };
    for (let i = 0; i < READS; i++) {
      await read('case', view);
      await read('plain', 'public.bench_plain_cast');
    }
    const [zoned, plain] = [median(times.case), median(times.plain)];
    const note = `${engine}, ${(ROWS / 1e6).toFixed(1)}M records, median of ${READS} taken in turn`;
    return [
      {
        section: 'certified view',
        name: `timestamp filter, the zone test (${engine})`,
        value: `${zoned.toFixed(0)} ms`,
        note: `${note}; ${(zoned / plain).toFixed(2)}× the plain cast, +${((zoned - plain) / (ROWS / 1e6)).toFixed(0)} ms a million records`,
      },
      {
        section: 'certified view',
        name: `timestamp filter, the plain cast before b129f47e (${engine})`,
        value: `${plain.toFixed(0)} ms`,
        note,
      },
    ];
  } finally {
    await db.close();
    await database?.drop();
  }
}

export const run: BenchModule = async () => [
  ...(await measure('PGlite')),
  ...(process.env.GDS_TEST_DATABASE_URL ? await measure('PostgreSQL') : []),
];
