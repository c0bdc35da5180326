// The auto-baseline job profiles every column count PostgreSQL allows: each column
// takes two entries of the profiling select list and PostgreSQL allows 1,664, so a view of 832 columns
// or more used to register and then fail its job with "target lists can have at most 1664 entries". A
// 1,600-column table (PostgreSQL's own limit) and a view over it of 833 columns, on PGlite and on
// PostgreSQL: the job succeeds, and every column's null and distinct counts are right, including the
// columns profiled by the second statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASELINE_COLUMNS_PER_STATEMENT } from '../../../src/server/governance/baseline.js';
import { pushDevDefinition } from '../../helpers/push.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const WIDTH = 1600;
const names = (count: number) => Array.from({ length: count }, (_, i) => `c${i + 1}`);

/**
 * Column cK holds: row 1: 1; row 2: K when K is even, else NULL; row 3: 1 when K is a multiple of 3,
 * else 3. So cK has 1 NULL when K is odd, and 1, 2 or 3 distinct values.
 */
function expected(k: number): { nullCount: number; distinctCount: number } {
  const values = [1, k % 2 === 0 ? k : null, k % 3 === 0 ? 1 : 3].filter((v) => v !== null);
  return { nullCount: k % 2 === 0 ? 0 : 1, distinctCount: new Set(values).size };
}

async function createWide(server: TestServer): Promise<void> {
  const columns = names(WIDTH);
  await server.sql(`CREATE TABLE analytics_dev.wide_1600 (${columns.map((c) => `${c} int`).join(', ')})`);
  const row = (value: (k: number) => string) => `(${columns.map((_, i) => value(i + 1)).join(', ')})`;
  await server.sql(
    `INSERT INTO analytics_dev.wide_1600 VALUES ${row(() => '1')}, ${row((k) => (k % 2 === 0 ? String(k) : 'NULL'))}, ${row((k) => (k % 3 === 0 ? '1' : '3'))}`,
  );
  await server.sql(
    `CREATE VIEW analytics_dev.wide_833 AS SELECT ${names(833).join(', ')} FROM analytics_dev.wide_1600`,
  );
}

async function baseline(server: TestServer, object: string, columns: string[]) {
  const pushed = await pushDevDefinition(server, object, columns);
  expect(pushed.status).toBe(202);
  const jobId = pushed.body.job.id as string;
  expect(await server.jobs.runPending()).toEqual([jobId]);
  const [job] = await server.sql('SELECT status, error, result FROM gds.jobs WHERE id = $1', [jobId]);
  return job as {
    status: string;
    error: unknown;
    result: { rowCount: number; columns: Array<{ name: string; nullCount: number; distinctCount: number }> };
  };
}

function checkProfile(job: Awaited<ReturnType<typeof baseline>>, width: number): void {
  expect(job.error).toBeNull();
  expect(job.status).toBe('SUCCEEDED');
  expect(job.result.rowCount).toBe(3);
  expect(job.result.columns).toHaveLength(width);
  expect(job.result.columns.map((c) => c.name)).toEqual(names(width));
  for (const [i, column] of job.result.columns.entries()) {
    expect({ name: column.name, nullCount: column.nullCount, distinctCount: column.distinctCount }).toEqual({
      name: `c${i + 1}`,
      ...expected(i + 1),
    });
  }
}

for (const database of ['pglite', 'postgres'] as const) {
  describe(
    `the baseline job on wide objects (${database})`,
    needs(database === 'postgres' ? noPostgres : undefined),
    () => {
      let server: TestServer;

      beforeAll(async () => {
        server = await startTestServer({ jobs: 'manual', ...(database === 'postgres' ? { database } : {}) });
        await createWide(server);
      });

      afterAll(async () => {
        await server?.close();
      });

      it("profiles a table of 1,600 columns, PostgreSQL's limit, in several statements", async () => {
        expect(WIDTH).toBeGreaterThan(BASELINE_COLUMNS_PER_STATEMENT);
        checkProfile(await baseline(server, 'wide_1600', names(WIDTH)), WIDTH);
      });

      it('profiles a view of 833 columns, the first count one statement could not hold', async () => {
        checkProfile(await baseline(server, 'wide_833', names(833)), 833);
      });
    },
  );
}
