// Gate SQL runs in a READ ONLY, REPEATABLE READ transaction (one snapshot for every check, no
// write possible even through a predicate) with a statement timeout, in UTC, reading and printing values
// as PostgreSQL does by default (GATE_SETTINGS). Each check runs under a savepoint so a failing statement
// (a cast error in a predicate) fails that check only; a statement past the server's deadline
// (QueryDeadlineError) fails the whole run, naming the deadline.
import type { Db, Queryable } from '../db/handle.js';
import { QueryDeadlineError } from '../db/pglite.js';

const WORK_MEM = '64MB';

/**
 * The settings every gate transaction runs with, whatever the database, its role or its server defaults to
 * (docs/gate1.md): the clock's zone, and every setting that changes a value's text or how a date literal is
 * read, at PostgreSQL's built-in defaults (the locale's at C). A check then has one answer on every engine and
 * machine, a row reads as the same text in the gate's transaction and in certify's (rowsDigest), and a copy into
 * PGlite's sandbox reads back as the same values.
 */
export const GATE_SETTINGS: Readonly<Record<string, string>> = {
  TimeZone: 'UTC',
  // ISO prints dates year first, read the same whatever the order; MDY reads `01/02/2026` as 2 January.
  DateStyle: 'ISO, MDY',
  IntervalStyle: 'postgres',
  // PostgreSQL 12 on: a float prints in the fewest digits that read back as the same value.
  extra_float_digits: '1',
  bytea_output: 'hex',
  // C's, which every server has: money's text and input ($1,234.50, not 1.234,50 €), to_char's and to_number's
  // separators (9G999D9: 1,234.5) and its month and day names (TMMonth: March). PGlite formats in C whatever
  // these say; PostgreSQL's default is the locale initdb ran in.
  lc_monetary: 'C',
  lc_numeric: 'C',
  lc_time: 'C',
};

/**
 * `prepare`, when given, runs first in the same snapshot while the transaction may still write its own
 * temporary tables (a run's sample, written by the server's own SQL); the transaction is READ ONLY
 * before `fn` (the checks, SQL a member wrote) runs.
 */
export async function readOnly<T>(
  db: Db,
  timeoutMs: number,
  fn: (tx: Queryable) => Promise<T>,
  prepare?: (tx: Queryable) => Promise<void>,
): Promise<T> {
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)
    throw new Error(`bad statement timeout ${timeoutMs}`);
  return db.transaction(async (tx) => {
    await tx.query(
      prepare
        ? 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ'
        : 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY',
    );
    await tx.query(`SET LOCAL statement_timeout = ${timeoutMs}`);
    // The clock a check reads (now(), current_date, a timestamptz cast to date) is UTC's, whatever TimeZone
    // the database or its server is set to, and a value's text is PostgreSQL's default one.
    await tx.exec(gateSettingsSql());
    // A sample that must number rows by a sort does it once, in memory rather than in temp files.
    await tx.query(`SET LOCAL work_mem = '${WORK_MEM}'`);
    if (prepare) {
      // A scan from the first block, on one process: LIMIT then reads the first rows in storage order.
      await tx.query('SET LOCAL synchronize_seqscans = off');
      await tx.query('SET LOCAL max_parallel_workers_per_gather = 0');
      await prepare(tx);
      await tx.query('SET TRANSACTION READ ONLY');
    }
    return fn(tx);
  });
}

/** `SET LOCAL` of every GATE_SETTINGS, as one round trip. */
function gateSettingsSql(): string {
  return Object.entries(GATE_SETTINGS)
    .map(([name, value]) => `SET LOCAL ${name} = '${value}'`)
    .join('; ');
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
