// Gate SQL runs in a READ ONLY, REPEATABLE READ transaction (one snapshot for every check, no
// write possible even through a predicate) with a statement timeout. Each check runs under a
// savepoint so a failing statement (a cast error in a predicate) fails that check only; a statement
// past the server's deadline (QueryDeadlineError) fails the whole run, naming the deadline.
import type { Db, Queryable } from '../db/index.js';
import { QueryDeadlineError } from '../db/pglite.js';

const WORK_MEM = '64MB';

export async function readOnly<T>(db: Db, timeoutMs: number, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)
    throw new Error(`bad statement timeout ${timeoutMs}`);
  return db.transaction(async (tx) => {
    await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await tx.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
    // Samples number rows with a window over the whole object: sort in memory, not in temp files.
    await tx.query(`SET LOCAL work_mem = '${WORK_MEM}'`);
    return fn(tx);
  });
}

export type Attempt<T> = { ok: true; value: T } | { ok: false; error: string };

/** Runs one statement under a savepoint; a failure is returned, and the transaction stays usable. */
export async function attempt<T>(tx: Queryable, fn: () => Promise<T>): Promise<Attempt<T>> {
  await tx.query('SAVEPOINT gate_check');
  try {
    const value = await fn();
    await tx.query('RELEASE SAVEPOINT gate_check');
    return { ok: true, value };
  } catch (error) {
    if (error instanceof QueryDeadlineError) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT gate_check');
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
