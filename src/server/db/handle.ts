// What every part of the server talks to the database through, PGlite or PostgreSQL alike (index.ts opens one).
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs one or more statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
  /**
   * PGlite only: runs `COPY (select) TO …` (text format) and answers what it wrote. The rows leave
   * PostgreSQL a few kilobytes at a time, instead of one value built in PGlite's heap (which never shrinks).
   */
  copyOut?(select: string): Promise<Uint8Array>;
  /** PGlite only: runs `COPY table FROM …` over `data` (what copyOut answered). */
  copyIn?(table: string, data: Uint8Array): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Every statement's deadline: statement_timeout on PostgreSQL, a worker ended and restarted on PGlite. */
  readonly queryTimeoutMs: number;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * PGlite only: runs `fn` on a private in-memory database of the server's own (a sandbox, lent to one
   * caller at a time). PGlite has a single connection, so SQL a member wrote (gate checks) runs there,
   * over rows copied into it, and a slow check holds a sandbox instead of the service's database (see
   * gates/snapshot.ts). PostgreSQL has none: each statement has a connection of its own.
   */
  sandbox?<T>(fn: (sandbox: Db) => Promise<T>): Promise<T>;
  /**
   * PGlite only: runs gate work (gates/snapshot.ts) in the bounded queue of gate-queue.ts (a request's work
   * that cannot start in time is refused with 503 and Retry-After; `background` work waits), on a view of
   * this database whose statements give way to other requests' when both wait for the one connection.
   */
  gateWork?<T>(work: (db: Db) => Promise<T>, background?: boolean): Promise<T>;
  /**
   * PGlite only: the most rows one piece of work over a table's every row may read (a gate run, a
   * baseline); past it the work is refused (see embedded-limit.ts). PostgreSQL has none.
   */
  readonly rowLimit?: number;
  /**
   * PostgreSQL only: runs `fn` while holding a session advisory lock named `name`, so that server
   * processes sharing the database do it one at a time (start-up: migrations, seed, signing key). PGlite
   * has none: its data is one process's (see `exclusively`).
   */
  processLock?<T>(name: string, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * The rows of `select`, in its own order (`orderBy` names that order by the select list's names). On PGlite
 * they come as one JSON text, aggregated in `orderBy`'s order and parsed on the calling thread: each row's
 * fields would cost PGlite's database thread (which runs every request's statements, one at a time) their
 * decoding and their copy to the request thread, which one string does not (a page of 500 held tables:
 * 42-44 -> 28-30 ms of that thread). Then each row is an object keyed by the select list's names, jsonb
 * values parsed and timestamps as ISO text. On PostgreSQL building the JSON costs the server more than it
 * saves node (15 ms more a page of held tables), so `select` runs as it is.
 */
export async function jsonRows<T>(
  q: Queryable,
  select: string,
  orderBy: string,
  params?: unknown[],
): Promise<T[]> {
  if ((q as Partial<Db>).kind !== 'pglite') return q.query<T>(select, params);
  const [row] = await q.query<{ rows: string }>(
    `SELECT coalesce(json_agg(selected ORDER BY ${orderBy}), '[]')::text AS rows FROM (${select}) selected`,
    params,
  );
  return JSON.parse(row?.rows ?? '[]') as T[];
}
