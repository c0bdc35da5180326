// What the shared rate limit costs a request: the window lives in the database so that
// every server process counts against it, at one upsert per counted request. Measured on the service's own
// database handle, beside a `SELECT 1` (the round trip no statement can beat), on PGlite and on PostgreSQL:
// one token's window counted many times, and as many tokens' windows counted once each.
import { performance } from 'node:perf_hooks';
import type { Db } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { migrate } from '../../src/server/db/migrations.js';
import { RateLimiter } from '../../src/server/rate-limit.js';
import { createPostgresDatabase } from '../../test/helpers/server.js';
import type { BenchModule, BenchRow } from './types.js';

const COUNTS = 5_000;

async function microseconds(times: number, step: (i: number) => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i += 1) await step(-1 - i); // warm-up
  const started = performance.now();
  for (let i = 0; i < times; i += 1) await step(i);
  return ((performance.now() - started) * 1000) / times;
}

async function measure(db: Db, engine: string): Promise<BenchRow[]> {
  await migrate(db);
  const limiter = new RateLimiter('bench', 1_000_000_000, db, Date.now);
  const floor = await microseconds(COUNTS, () => db.query('SELECT 1'));
  const oneKey = await microseconds(COUNTS, () => limiter.take('token:one'));
  const manyKeys = await microseconds(COUNTS, (i) => limiter.take(`token:${i}`));
  const note = `${engine}, mean of ${COUNTS.toLocaleString('en-US')} sequential counts`;
  const row = (name: string, value: number, extra: string): BenchRow => ({
    section: 'rate limit',
    name: `${name} (${engine})`,
    value: `${value.toFixed(0)} µs`,
    note: `${note}; ${extra}`,
  });
  return [
    row('a count of one token’s window', oneKey, `SELECT 1 takes ${floor.toFixed(0)} µs on the same handle`),
    row('a count of a new token’s window', manyKeys, 'each count inserts a window row'),
  ];
}

export const run: BenchModule = async () => {
  const lite = await openDb({});
  const rows: BenchRow[] = [];
  try {
    rows.push(...(await measure(lite, 'PGlite')));
  } finally {
    await lite.close();
  }
  if (process.env.GDS_TEST_DATABASE_URL === undefined) {
    rows.push({
      section: 'rate limit',
      name: 'a count of one token’s window (PostgreSQL)',
      value: 'skipped',
      note: 'GDS_TEST_DATABASE_URL is not set, so no PostgreSQL is reachable',
    });
    return rows;
  }
  const database = await createPostgresDatabase();
  const pg = await openDb({ databaseUrl: database.url });
  try {
    rows.push(...(await measure(pg, 'PostgreSQL')));
  } finally {
    await pg.close();
    await database.drop();
  }
  return rows;
};
