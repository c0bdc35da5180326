// What the embedded database (PGlite) will take on. PGlite is one PostgreSQL in a 2 GB WebAssembly heap
// on one connection: past a size, a gate run over every row takes minutes and gigabytes and then fails
// with "out of memory" (a 500), holding every other request meanwhile. So, on PGlite only, work over a
// table's every row first counts those rows (a bounded count: at most the limit plus one are read) and
// is refused past `--embedded-row-limit` with a 422 saying what to do instead. PostgreSQL has no limit.
import { HttpError } from '../errors.js';
import { quoteSource } from '../warehouse.js';
import type { Db, Queryable } from './handle.js';

/**
 * The default limit. Measured on PGlite (Gate 1 over the orders table, 6 columns, one pattern and one
 * predicate): see the README's "Where PGlite ends" and `npm run bench embedded-memory`.
 */
export const DEFAULT_EMBEDDED_ROW_LIMIT = 1_000_000;

/** Rows a piece of work reads: a warehouse object's, or a Mode B table's rows in gds.records. */
export type RowSource = { kind: 'warehouse'; source: string } | { kind: 'records'; tableId: string };

export class BeyondEmbeddedError extends HttpError {
  /** `what` says what the work would do ("A gate run on orders would read analytics_dev.orders"). */
  constructor(what: string, limit: number, hint: string | undefined) {
    const most = limit.toLocaleString('en-US');
    super(
      422,
      'beyond_embedded_database',
      `${what}: more than ${most} rows is beyond the embedded database (PGlite; this server's --embedded-row-limit is ${most}); start the server with --database-url to use PostgreSQL${hint ? `, or ${hint}` : ''}.`,
      { limit },
    );
  }
}

/**
 * Rows of `target`, counted up to `limit + 1` (so a count past the limit reads limit + 1 rows, never the
 * whole object). Views are counted as they answer.
 */
async function boundedCount(q: Queryable, target: RowSource, limit: number): Promise<number> {
  const [row] =
    target.kind === 'records'
      ? await q.query<{ n: string }>(
          'SELECT count(*)::text AS n FROM (SELECT 1 FROM gds.records WHERE table_id = $1 LIMIT $2) AS r',
          [target.tableId, limit + 1],
        )
      : await q.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM (SELECT 1 FROM ${quoteSource(target.source)} LIMIT $1) AS r`,
          [limit + 1],
        );
  return Number(row?.n ?? 0);
}

/**
 * On PGlite, refuses (BeyondEmbeddedError, 422) work over `targets` when one of them holds more rows
 * than the database's limit; on PostgreSQL, and for objects that do not exist, does nothing. `what`
 * names the work in the message ("A gate run on orders"); `hint` is another way out (a sampled run).
 */
export async function assertWithinEmbedded(
  db: Db,
  q: Queryable,
  targets: RowSource[],
  what: string,
  hint?: string,
): Promise<void> {
  const limit = db.rowLimit;
  if (limit === undefined) return;
  for (const target of targets) {
    if (target.kind === 'warehouse' && !(await exists(q, target.source))) continue;
    const rows = await boundedCount(q, target, limit);
    const label = target.kind === 'records' ? 'its rows' : target.source;
    if (rows > limit) throw new BeyondEmbeddedError(`${what} would read ${label}`, limit, hint);
  }
}

/**
 * On PGlite, refuses (BeyondEmbeddedError, 422) a write that leaves a Mode B table holding more rows than
 * the limit: called in the write's transaction, after its inserts, so the refusal rolls them back. Every
 * gate run of such a table would be refused; an import is stopped where the table would pass the limit.
 */
export async function assertRecordsWithinEmbedded(
  db: Db,
  tx: Queryable,
  table: { id: string; name: string },
  what: string,
): Promise<void> {
  const limit = db.rowLimit;
  if (limit === undefined) return;
  if ((await boundedCount(tx, { kind: 'records', tableId: table.id }, limit)) <= limit) return;
  throw new BeyondEmbeddedError(
    `${what} into table ${table.name} would grow it past the limit`,
    limit,
    undefined,
  );
}

async function exists(q: Queryable, source: string): Promise<boolean> {
  const [row] = await q.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
    quoteSource(source),
  ]);
  return row?.found === true;
}
