// Where gate SQL runs. Gate checks are the one place the server evaluates SQL a member wrote: allowed by
// the predicate checker, yet able to be slow on enough rows. On PostgreSQL they run in a read-only
// transaction on a connection of their own, and every other request goes on over the pool's others.
// PGlite has a single connection, so a slow check would hold every request until the deadline: there
// the rows the checks read (the table's warehouse object or its gds.records rows, and every object a
// column's `references` names) are copied out in one read-only snapshot, with the service state the run
// needs, into the database's sandbox (a second PGlite, db/pglite.ts), and the checks run there. The
// copy is one scan, however hostile the checks; the checks see the same names, types and row order.
import type { Db, Queryable } from '../db/index.js';
import { HttpError } from '../errors.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import { readOnly } from './read-only.js';
import type { Relation, RowsOptions } from './relation.js';
import { catalogColumns, resolveRelation } from './relation.js';
import type { GateTable } from './table.js';
import { parseReference } from './table.js';

export interface GateRead<S, T> {
  /** Reads the service state the run needs (versions, rules), in the same snapshot as the rows. */
  state: (tx: Queryable) => Promise<S>;
  /** The checks, over the table's relation. */
  run: (tx: Queryable, relation: Relation, state: S) => Promise<T>;
  rows?: RowsOptions;
}

/** Runs a gate's checks on one snapshot of the table's rows: in place on PostgreSQL, in the sandbox on PGlite. */
export async function gateRead<S, T>(db: Db, table: GateTable, read: GateRead<S, T>): Promise<T> {
  const inPlace = () =>
    readOnly(db, db.queryTimeoutMs, async (tx) => {
      const state = await read.state(tx);
      return read.run(tx, await resolveRelation(tx, table, read.rows), state);
    });
  if (!db.sandbox) return inPlace();
  const { state, copies } = await readOnly(db, db.queryTimeoutMs, async (tx) => ({
    state: await read.state(tx),
    copies: await copyOut(tx, readTargets(table)),
  }));
  if (!copies) return inPlace();
  const outcome = await db.sandbox(async (sandbox) => {
    if (!(await loadCopies(sandbox, copies))) return { loaded: false as const };
    const value = await readOnly(sandbox, db.queryTimeoutMs, async (tx) =>
      read.run(tx, await resolveRelation(tx, table, read.rows), state),
    );
    return { loaded: true as const, value };
  });
  // A column type a fresh cluster does not know (an enum, a domain) cannot be made there: check in place.
  return outcome.loaded ? outcome.value : inPlace();
}

/**
 * A digest of every row the table's checks read, as they are in `tx`'s snapshot. Certify takes it with
 * the checks and again in its transaction: a write in between means the checks did not see the data
 * that would be certified.
 */
export async function rowsDigest(tx: Queryable, table: GateTable): Promise<string> {
  const digests: string[] = [];
  for (const target of readTargets(table)) {
    const shape = await describe(tx, target);
    if (!shape) {
      digests.push('missing');
      continue;
    }
    const { sql, params } = rowsQuery(target, shape);
    const [row] = await tx.query<{ digest: string }>(`SELECT md5(${sql}) AS digest`, params);
    digests.push(row?.digest ?? 'missing');
  }
  return digests.join(',');
}

/** 422 when the rows changed since `digest` was taken: certification must not rest on checks of other data. */
export async function assertRowsUnchanged(tx: Queryable, table: GateTable, digest: string): Promise<void> {
  if ((await rowsDigest(tx, table)) === digest) return;
  throw new HttpError(
    422,
    'data_changed_during_checks',
    `The rows of ${table.name} changed while the certification checks ran, so the checks did not see the data that would be certified; nothing was certified. Run certify again.`,
    { tableId: table.id },
  );
}

type ReadTarget = { kind: 'warehouse'; source: string } | { kind: 'records'; tableId: string };

/** The relations a gate run reads: the table's own rows, and each declared reference's object. */
function readTargets(table: GateTable): ReadTarget[] {
  const targets: ReadTarget[] =
    table.mode === 'MODE_B'
      ? [{ kind: 'records', tableId: table.id }]
      : table.source
        ? [{ kind: 'warehouse', source: table.source }]
        : [];
  for (const column of table.columns) {
    const reference = typeof column.references === 'string' ? parseReference(column.references) : null;
    if (!reference || !table.warehouseSchemas.includes(reference.schema)) continue;
    const source = `${reference.schema}.${reference.table}`;
    if (!targets.some((t) => t.kind === 'warehouse' && t.source === source))
      targets.push({ kind: 'warehouse', source });
  }
  return targets;
}

interface Shape {
  columns: Array<{ name: string; type: string }>;
  relkind: string;
}

/** Relations that hold rows of their own (ordered by ctid), and the others a copy can read. */
const PHYSICAL = ['r', 'm'];
const READABLE = ['r', 'm', 'v', 'p', 'f'];

async function describe(tx: Queryable, target: ReadTarget): Promise<Shape | null> {
  if (target.kind === 'records') return { columns: [], relkind: 'records' };
  const rows = await catalogColumns(tx, target.source);
  const relkind = rows[0]?.relkind ?? '';
  if (!READABLE.includes(relkind)) return null;
  return { columns: rows.map((r) => ({ name: r.name, type: r.type })), relkind };
}

/** `coalesce(json_agg(…)::text, '[]') FROM …`: every row as one JSON array, in a stable order. */
function rowsQuery(target: ReadTarget, shape: Shape): { sql: string; params: unknown[] } {
  if (target.kind === 'records') {
    return {
      sql: `(SELECT coalesce(json_agg(r ORDER BY r.seq)::text, '[]')
               FROM (SELECT table_id, id, seq, data FROM gds.records WHERE table_id = $1) AS r)`,
      params: [target.tableId],
    };
  }
  // The alias cannot be taken for a column of the object (a bare name resolves to a column first).
  const order = PHYSICAL.includes(shape.relkind) ? '__gds_row.ctid' : '__gds_row::text';
  return {
    sql: `(SELECT coalesce(json_agg(__gds_row ORDER BY ${order})::text, '[]')
             FROM ${quoteSource(target.source)} AS __gds_row)`,
    params: [],
  };
}

interface Copy {
  target: ReadTarget;
  shape: Shape;
  rows: string;
}

/**
 * Past this size on disk a warehouse table is checked in place: its rows as one JSON text would near
 * V8's longest string, and copying it twice would cost more than the isolation is worth.
 */
const MAX_COPY_BYTES = 128 * 1024 * 1024;

/** The copies of the targets' rows; null when one is too large to copy (the checks then run in place). */
async function copyOut(tx: Queryable, targets: ReadTarget[]): Promise<Copy[] | null> {
  const copies: Copy[] = [];
  for (const target of targets) {
    const shape = await describe(tx, target);
    if (!shape) continue; // absent in the sandbox too: the checks report it missing
    if (target.kind === 'warehouse' && PHYSICAL.includes(shape.relkind)) {
      const [size] = await tx.query<{ bytes: string }>('SELECT pg_table_size($1::regclass)::text AS bytes', [
        quoteSource(target.source),
      ]);
      if (Number(size?.bytes) > MAX_COPY_BYTES) return null;
    }
    const { sql, params } = rowsQuery(target, shape);
    const [row] = await tx.query<{ rows: string }>(`SELECT ${sql} AS rows`, params);
    copies.push({ target, shape, rows: row?.rows ?? '[]' });
  }
  return copies;
}

/** PostgreSQL's codes for a type or schema a fresh cluster does not have. */
const UNKNOWN_TYPE = new Set(['42704', '3F000']);

/** Empties the sandbox and loads the copies; false when a column type cannot be made there. */
async function loadCopies(sandbox: Db, copies: Copy[]): Promise<boolean> {
  try {
    await sandbox.transaction(async (tx) => {
      const schemas = await tx.query<{ nspname: string }>(
        `SELECT nspname FROM pg_catalog.pg_namespace
          WHERE nspname <> 'information_schema' AND nspname NOT LIKE 'pg\\_%'`,
      );
      for (const { nspname } of schemas) await tx.exec(`DROP SCHEMA ${quoteIdent(nspname)} CASCADE`);
      await tx.exec('CREATE SCHEMA public; CREATE SCHEMA gds_sandbox_rows');
      for (const [index, copy] of copies.entries()) await loadCopy(tx, copy, index);
    });
    return true;
  } catch (error) {
    if (UNKNOWN_TYPE.has(String((error as { code?: unknown }).code))) return false;
    throw error;
  }
}

async function loadCopy(tx: Queryable, copy: Copy, index: number): Promise<void> {
  if (copy.target.kind === 'records') {
    await tx.exec(`CREATE SCHEMA IF NOT EXISTS gds;
      CREATE TABLE gds.records (table_id text, id text, seq bigint, data jsonb)`);
    await tx.query(
      'INSERT INTO gds.records SELECT * FROM json_populate_recordset(NULL::gds.records, $1::json)',
      [copy.rows],
    );
    return;
  }
  const [schema, name] = splitSource(copy.target.source);
  const columns = copy.shape.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
  // A physical object is copied as a table (rows inserted in ctid order keep that order); anything else
  // (a view) as a view over a table of its rows, so the checks order and describe it as they would there.
  const physical = PHYSICAL.includes(copy.shape.relkind);
  const table = physical ? quoteSource(copy.target.source) : `gds_sandbox_rows.${quoteIdent(`t${index}`)}`;
  await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}; CREATE TABLE ${table} (${columns})`);
  await tx.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [
    copy.rows,
  ]);
  if (!physical)
    await tx.exec(`CREATE VIEW ${quoteIdent(schema)}.${quoteIdent(name)} AS SELECT * FROM ${table}`);
}
