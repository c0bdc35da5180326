// A read under a generic plan (plan_cache_mode = force_generic_plan: what a prepared statement reused, or a
// pooler's server-side prepares, give), and how many rows of one table it read: what the tests of the lists'
// index use hold to the rows a page needs, on PGlite and PostgreSQL.
import type { Db, Queryable } from '../../src/server/db/handle.js';

/**
 * What `read` answers in a transaction whose statements are planned generically, and the rows it read of
 * gds.`relation`: its scans' rows, sequential and by index (pg_stat_xact_user_tables).
 */
export function genericRead<T>(
  db: Db,
  relation: string,
  read: (tx: Queryable) => Promise<T>,
): Promise<{ answer: T; rowsRead: number }> {
  return db.transaction(async (tx) => {
    await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
    const rowsRead = async () => {
      const [stats] = await tx.query<{ tuples: string | number }>(
        `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS tuples FROM pg_stat_xact_user_tables
          WHERE schemaname = 'gds' AND relname = $1`,
        [relation],
      );
      return Number(stats?.tuples ?? 0);
    };
    const before = await rowsRead();
    const answer = await read(tx);
    return { answer, rowsRead: (await rowsRead()) - before };
  });
}
