// PGlite runs no autovacuum, so its planner had no statistics: it took any range of a column for a third of the
// table, and `gds audit list --since` read the whole audit log for a window a page could hold. The service's own
// database now analyses its stale tables as autovacuum would (never analysed, or more than 50 rows and a tenth
// changed since), once a minute by itself. Rows read are counted with EXPLAIN ANALYZE, not timed.
import { afterEach, describe, expect, it } from 'vitest';
import { listAudit } from '../../../src/server/audit.js';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { countingQueryable } from '../../helpers/rows-read.js';

const HISTORY = 30_000;
const DAY_MS = 86_400_000;
const opened: Db[] = [];

afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

/** A migrated in-memory PGlite with HISTORY audit entries a month old, then 10 of a minute ago. */
async function databaseWithHistory(analyzeEveryMs?: number): Promise<Db> {
  const db = await openDb(analyzeEveryMs === undefined ? {} : { analyzeEveryMs });
  opened.push(db);
  await migrate(db);
  await db.query(`INSERT INTO gds.workspaces (id, name, created_at) VALUES ('ws_a', 'a', now())`);
  for (const [count, age] of [
    [HISTORY, '30 days'],
    [10, '1 minute'],
  ] as const)
    await db.query(
      `INSERT INTO gds.audit_log (id, workspace_id, action, resource, created_at)
       SELECT 'aud_' || $1 || '_' || g, 'ws_a', 'RECORD_CREATED', 'record', now() - $1::interval
         FROM generate_series(1, $2::int) g`,
      [age, count],
    );
  return db;
}

const counted = (db: Db) =>
  countingQueryable({ sql: <T>(sql: string, params?: unknown[]) => db.query<T>(sql, params) });

describe('the embedded database keeps its planner statistics', () => {
  it('analyses a table never analysed, or changed by a tenth, and then reads a recent window by time', async () => {
    const db = await databaseWithHistory(DAY_MS); // analysed here only when the test asks
    const reads = counted(db);
    const since = { limit: 50, since: new Date(Date.now() + 3_600_000).toISOString() };
    await listAudit(reads, 'ws_a', since);
    // Without statistics, the window read by time reads the workspace's whole log.
    expect(reads.read()).toBeGreaterThan(HISTORY);

    expect(await db.analyzeStale?.()).toContain('audit_log');
    reads.reset();
    const page = await listAudit(reads, 'ws_a', since);
    expect(page.entries).toEqual([]);
    expect(reads.read()).toBeLessThan(1_000);
    // Recent entries are listed as before, newest first.
    const recent = await listAudit(db, 'ws_a', {
      limit: 50,
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    expect(recent.entries.map((entry) => entry.id)).toHaveLength(10);

    // Nothing changed since: nothing to analyse. A tenth more rows: analysed again.
    expect(await db.analyzeStale?.()).not.toContain('audit_log');
    await db.query(
      `INSERT INTO gds.audit_log (id, workspace_id, action, resource, created_at)
       SELECT 'aud_more_' || g, 'ws_a', 'RECORD_CREATED', 'record', now() FROM generate_series(1, $1::int) g`,
      [HISTORY / 10 + 100],
    );
    // PostgreSQL publishes a backend's counts of changed rows at most once a second: the table is stale once
    // they are (within a tick of the database's own minute).
    for (;;) {
      const analysed = await db.analyzeStale?.();
      if (analysed?.length !== 0) {
        expect(analysed).toEqual(['audit_log']);
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1_100));
    }
  });

  it('analyses by itself, on the interval it was opened with', async () => {
    const db = await databaseWithHistory(50);
    for (;;) {
      const [row] = await db.query<{ tuples: number }>(
        `SELECT reltuples::int AS tuples FROM pg_class WHERE oid = 'gds.audit_log'::regclass`,
      );
      if ((row?.tuples ?? 0) >= HISTORY) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const reads = counted(db);
    await listAudit(reads, 'ws_a', { limit: 50, since: new Date(Date.now() + 3_600_000).toISOString() });
    expect(reads.read()).toBeLessThan(1_000);
  });
});
