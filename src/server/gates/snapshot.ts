// Where gate SQL runs. Gate checks are the one place the server evaluates SQL a member wrote: allowed by
// the predicate checker, yet able to be slow on enough rows. On PostgreSQL they run in a read-only
// transaction on a connection of their own, and every other request goes on over the pool's others.
// PGlite has a single connection, so a slow check would hold every request until the deadline: there
// the rows the checks read (the table's warehouse object or its gds.records rows, and every object a
// column's `references` names) are copied out in one read-only snapshot, with the service state the run
// needs, into one of the database's sandboxes (other PGlites, db/pglite.ts), and the checks run there.
// The copy is one scan, however hostile the checks; the checks see the same names, types and row order.
// A sampled run (`--sample`) draws the sample in that snapshot first and copies the sample alone: the
// table's own rows are not copied, so a sample of a large table costs its draw, not a copy of the table.
import { assertWithinEmbedded } from '../db/embedded-limit.js';
import type { Db, Queryable } from '../db/handle.js';
import { QueryDeadlineError } from '../db/pglite.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import { GATE_SETTINGS, readOnly } from './read-only.js';
import type { DrawnSample, Relation, RowsOptions } from './relation.js';
import { catalogColumns, resolveRelation, SAMPLE_TABLE } from './relation.js';
import type { GateTable } from './table.js';
import { parseReference } from './table.js';

export interface GateRead<S, T> {
  /** Reads the service state the run needs (versions, rules), in the same snapshot as the rows. */
  state: (tx: Queryable) => Promise<S>;
  /** The checks, over the table's relation. */
  run: (tx: Queryable, relation: Relation, state: S) => Promise<T>;
  rows?: RowsOptions;
  /** Work no client waits on (a detached job): on PGlite it waits for its turn however long, never refused. */
  background?: boolean;
}

/** For a run that needs no service state beside the rows. */
export const noState = async (): Promise<null> => null;

/**
 * Runs a gate's checks on one snapshot of the table's rows: in place on PostgreSQL, in the sandbox on PGlite.
 * With a sample on PGlite, the sample is drawn in the service's database (the server's own SQL, at most one
 * pass over the rows, as the copy would be) and only the sample goes into the sandbox: the table's rows are
 * neither copied nor loaded, and the checks read the sample there. On PGlite the work waits its turn in the
 * database's gate queue (db/gate-queue.ts): a request's that cannot start in time is refused with 503.
 */
export async function gateRead<S, T>(db: Db, table: GateTable, read: GateRead<S, T>): Promise<T> {
  if (db.gateWork) return db.gateWork((queued) => readInTurn(queued, table, read), read.background);
  return readInTurn(db, table, read);
}

async function readInTurn<S, T>(db: Db, table: GateTable, read: GateRead<S, T>): Promise<T> {
  if (!read.rows?.sample) {
    const hint = 'check a sample of it (gds gate run --sample)';
    await assertWithinEmbedded(db, db, readTargets(table), `Checking every row of ${table.name}`, hint);
  }
  const inPlace = () => checkRows(db, db.queryTimeoutMs, table, read, read.state);
  if (!db.sandbox) return inPlace();
  let drawn: DrawnSample | undefined;
  const draw = read.rows?.sample
    ? async (tx: Queryable) => {
        const relation = await resolveRelation(tx, table, read.rows);
        if (relation.exists && relation.drawSample) {
          drawn = { from: SANDBOX_SAMPLE, method: await relation.drawSample(tx) };
        }
      }
    : undefined;
  const { state, copies } = await readOnly(
    db,
    db.queryTimeoutMs,
    async (tx) => ({
      state: await read.state(tx),
      copies: await copyOut(tx, readTargets(table), drawn !== undefined),
    }),
    draw,
  );
  if (!copies) return inPlace();
  const inSandbox: GateRead<S, T> = drawn ? { ...read, rows: { drawn } } : read;
  const outcome = await db.sandbox(async (sandbox) => {
    if (!(await loadCopies(sandbox, copies))) return { loaded: false as const };
    const value = await checkRows(sandbox, db.queryTimeoutMs, table, inSandbox, async () => state);
    return { loaded: true as const, value };
  });
  // A column type a fresh cluster does not know (an enum, a domain) cannot be made there: check in place.
  return outcome.loaded ? outcome.value : inPlace();
}

/**
 * The checks over the table's rows in one read-only snapshot; with a sample, the sample is drawn first,
 * once, in that snapshot (its method is on the relation the checks get).
 */
async function checkRows<S, T>(
  db: Db,
  timeoutMs: number,
  table: GateTable,
  read: GateRead<S, T>,
  state: (tx: Queryable) => Promise<S>,
): Promise<T> {
  let relation: Relation | undefined;
  const prepare = read.rows?.sample
    ? async (tx: Queryable) => {
        relation = await resolveRelation(tx, table, read.rows);
        if (relation.exists && relation.drawSample) relation.sampleMethod = await relation.drawSample(tx);
      }
    : undefined;
  return readOnly(
    db,
    timeoutMs,
    async (tx) => {
      // In place on PGlite: the checks' sorts and hashes spill to temporary files rather than grow the
      // service's heap, which never shrinks (a sandbox's goes when it closes).
      if (db.kind === 'pglite' && db.sandbox) await tx.query(`SET LOCAL work_mem = '${PGLITE_WORK_MEM}'`);
      const known = await state(tx);
      return read.run(tx, relation ?? (await resolveRelation(tx, table, read.rows)), known);
    },
    prepare,
  );
}

/**
 * A digest of every row the table's checks read, as they are in `tx`'s snapshot. Certify takes it with
 * the checks and again in its transaction: a write in between means the checks did not see the data
 * that would be certified. It is taken over the tables the rows come from (a view's base tables, not
 * its output, which may hold now() or random()), as a row count and a sum of per-row hashes: no sort,
 * no large value, and the same whatever order the rows are stored in.
 */
export async function rowsDigest(tx: Queryable, table: GateTable): Promise<string> {
  // A row's text holds its values as the session prints them (timestamptz in its zone, dates in its DateStyle,
  // floats to its extra_float_digits…): the digest is taken with the gate's settings, also in certify's
  // transaction, which has the database's; those are then set back.
  const restore = await withGateSettings(tx);
  const digests: string[] = [];
  for (const target of readTargets(table)) {
    const from =
      target.kind === 'records'
        ? [{ sql: 'gds.records', where: 'WHERE __gds_row.table_id = $1', params: [target.tableId] }]
        : (await baseTables(tx, target.source)).map((name) => ({ sql: name, where: '', params: [] }));
    if (from.length === 0) digests.push(`${rowsLabel(target)}:missing`);
    for (const relation of from) {
      const [row] = await tx.query<{ n: string; s: string }>(
        `SELECT count(*)::text AS n,
                coalesce(sum(('x' || substr(md5((__gds_row.*)::text), 1, 15))::bit(60)::bigint), 0)::text AS s
           FROM ${relation.sql} AS __gds_row ${relation.where}`,
        relation.params,
      );
      digests.push(`${relation.sql}:${row?.n ?? 0}:${row?.s ?? 0}`);
    }
  }
  await restore();
  return digests.join(',');
}

/**
 * Sets in `tx` each GATE_SETTINGS that differs there (a gate's transaction has them all already); answers
 * what sets them back as they were.
 */
async function withGateSettings(tx: Queryable): Promise<() => Promise<void>> {
  const was = await tx.query<Setting>(
    'SELECT name, current_setting(name) AS value FROM unnest($1::text[]) AS name',
    [Object.keys(GATE_SETTINGS)],
  );
  const differing = was.filter(({ name, value }) => value !== GATE_SETTINGS[name]);
  if (differing.length === 0) return async () => {};
  await setLocally(
    tx,
    differing.map(({ name }) => ({ name, value: GATE_SETTINGS[name] ?? '' })),
  );
  return () => setLocally(tx, differing);
}

type Setting = { name: string; value: string };

/** Sets each setting until the transaction ends, in one statement. */
async function setLocally(tx: Queryable, settings: Setting[]): Promise<void> {
  await tx.query(
    'SELECT set_config(name, value, true) FROM unnest($1::text[], $2::text[]) AS s(name, value)',
    [settings.map((s) => s.name), settings.map((s) => s.value)],
  );
}

const rowsLabel = (target: ReadTarget) => (target.kind === 'records' ? 'gds.records' : target.source);

/**
 * The tables (plain, materialized, partitioned or foreign) a warehouse object's rows come from, as
 * quoted names: the object itself when it is one, a view's base tables through nested views otherwise.
 */
async function baseTables(tx: Queryable, source: string): Promise<string[]> {
  const [schema, name] = splitSource(source);
  const rows = await tx.query<{ name: string }>(
    `WITH RECURSIVE object AS (
       SELECT c.oid FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = $2),
     reads(oid) AS (
       SELECT oid FROM object
       UNION
       SELECT d.refobjid FROM reads
         JOIN pg_catalog.pg_rewrite rw ON rw.ev_class = reads.oid
         JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = rw.oid
          AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid <> reads.oid)
     SELECT format('%I.%I', n.nspname, c.relname) AS name
       FROM reads JOIN pg_catalog.pg_class c ON c.oid = reads.oid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'm', 'p', 'f')
      ORDER BY 1`,
    [schema, name],
  );
  return rows.map((r) => r.name);
}

/** Whether the rows changed since `digest` was taken: certification must not rest on checks of other data. */
export async function rowsChangedSince(tx: Queryable, table: GateTable, digest: string): Promise<boolean> {
  return (await rowsDigest(tx, table)) !== digest;
}

type ReadTarget = { kind: 'warehouse'; source: string } | { kind: 'records'; tableId: string };

/** What is copied into a sandbox: a read target, or a run's sample (drawn into SAMPLE_TABLE of the run's transaction). */
type CopyTarget = ReadTarget | { kind: 'sample' };

/** Where a sample drawn in the service's database is loaded in the sandbox. */
const SANDBOX_SAMPLE = 'gds_sandbox_rows.sample';

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

/** The columns of gds.records a Mode B check reads. */
const RECORD_COLUMNS = [
  { name: 'table_id', type: 'text' },
  { name: 'id', type: 'text' },
  { name: 'seq', type: 'bigint' },
  { name: 'data', type: 'jsonb' },
];

async function describe(tx: Queryable, target: CopyTarget): Promise<Shape | null> {
  if (target.kind === 'records') return { columns: RECORD_COLUMNS, relkind: 'records' };
  if (target.kind === 'sample') {
    const columns = await tx.query<{ name: string; type: string }>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_catalog.pg_attribute a
        WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [SAMPLE_TABLE],
    );
    return { columns, relkind: 'sample' };
  }
  const rows = await catalogColumns(tx, target.source);
  const relkind = rows[0]?.relkind ?? '';
  if (!READABLE.includes(relkind)) return null;
  return { columns: rows.map((r) => ({ name: r.name, type: r.type })), relkind };
}

/**
 * Every row in COPY's text format (each value through its type's output, NULL as \N), in a stable order:
 * read back by COPY FROM, through each type's input, the values are exactly the same.
 */
function copyQuery(target: CopyTarget, shape: Shape): string {
  const values = shape.columns.map((c) => `__gds_row.${quoteIdent(c.name)}`).join(', ');
  const select = (from: string, order: string, where = '') =>
    `SELECT ${values} FROM ${from} AS __gds_row${where} ORDER BY ${order}`;
  if (target.kind === 'records') {
    // COPY takes no parameters: the table's id (the server's own) is written as a literal.
    const id = `'${target.tableId.replaceAll("'", "''")}'`;
    return select('gds.records', '__gds_row.seq', ` WHERE __gds_row.table_id = ${id}`);
  }
  if (target.kind === 'sample') return select(SAMPLE_TABLE, '__gds_row.ctid');
  const order = PHYSICAL.includes(shape.relkind) ? '__gds_row.ctid' : '(__gds_row.*)::text';
  return select(quoteSource(target.source), order);
}

interface Copy {
  target: CopyTarget;
  shape: Shape;
  /** The rows in COPY's text format. */
  data: Uint8Array;
}

/** work_mem of the copy out of the service's PGlite, and of checks run in place there: PostgreSQL's default. */
const PGLITE_WORK_MEM = '4MB';

/** The database's COPY (…) TO (PGlite's; the sandbox exists only there). */
function copyOutOf(q: Queryable): NonNullable<Queryable['copyOut']> {
  if (!q.copyOut) throw new Error('copying rows out needs PGlite');
  return q.copyOut.bind(q);
}

/** The database's COPY … FROM (PGlite's). */
function copyInto(q: Queryable): NonNullable<Queryable['copyIn']> {
  if (!q.copyIn) throw new Error('copying rows in needs PGlite');
  return q.copyIn.bind(q);
}

/** Past this size on disk (of the tables the rows come from) the checks run in place: no copy that large. */
const MAX_COPY_BYTES = 32 * 1024 * 1024;

/**
 * The copies of the targets' rows; null when they are too large to copy (the checks then run in place).
 * `sampled`: the first target (the table's own rows) was sampled into SAMPLE_TABLE: the sample is copied
 * instead of its rows, and the object itself as its shape alone (the checks describe it, and read the sample).
 */
async function copyOut(tx: Queryable, targets: ReadTarget[], sampled = false): Promise<Copy[] | null> {
  // The copy's sort by storage order spills to temporary files rather than growing the service's
  // PGlite heap, which never shrinks (the run's transaction set 64 MB for its sample's draw).
  await tx.query(`SET LOCAL work_mem = '${PGLITE_WORK_MEM}'`);
  const copies: Copy[] = [];
  let bytes = 0;
  const [own, ...others] = targets;
  let copied: CopyTarget[] = targets;
  if (sampled && own) {
    const shape = await describe(tx, own);
    if (shape) copies.push({ target: own, shape, data: new Uint8Array() });
    copied = [{ kind: 'sample' }, ...others];
  }
  for (const target of copied) {
    const shape = await describe(tx, target);
    if (!shape) continue; // absent in the sandbox too: the checks report it missing
    bytes += await sizeOnDisk(tx, target);
    if (bytes > MAX_COPY_BYTES) return null;
    copies.push({ target, shape, data: await copyOutOf(tx)(copyQuery(target, shape)) });
  }
  return copies;
}

async function sizeOnDisk(tx: Queryable, target: CopyTarget): Promise<number> {
  if (target.kind === 'sample') {
    const [row] = await tx.query<{ bytes: string }>(`SELECT pg_table_size($1::regclass)::text AS bytes`, [
      SAMPLE_TABLE,
    ]);
    return Number(row?.bytes ?? 0);
  }
  if (target.kind === 'records') {
    const [row] = await tx.query<{ bytes: string }>(
      'SELECT coalesce(sum(pg_column_size(data)), 0)::text AS bytes FROM gds.records WHERE table_id = $1',
      [target.tableId],
    );
    return Number(row?.bytes ?? 0);
  }
  let bytes = 0;
  for (const name of await baseTables(tx, target.source)) bytes += await relationBytes(tx, name);
  return bytes;
}

/**
 * A table's size on disk with its partitions'. pg_partition_tree lists no row at all for a plain table (only
 * a partitioned table or a partition has a tree), so the relation itself is counted beside it.
 */
export async function relationBytes(tx: Queryable, name: string): Promise<number> {
  const [row] = await tx.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_table_size(relid)), 0)::text AS bytes
       FROM (SELECT relid FROM pg_partition_tree($1::regclass) UNION SELECT $1::regclass) AS tree`,
    [name],
  );
  return Number(row?.bytes ?? 0);
}

/**
 * Empties the sandbox and loads the copies; false when they cannot be made there (a column type a
 * fresh cluster does not know, an enum or a domain; a value naming an object only the warehouse has).
 */
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
    if (error instanceof QueryDeadlineError) throw error;
    return false;
  }
}

async function loadCopy(tx: Queryable, copy: Copy, index: number): Promise<void> {
  const columns = copy.shape.columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ');
  const fill = async (table: string) => {
    await tx.exec(`CREATE TABLE ${table} (${columns})`);
    // In the copy's order: a physical object's rows get their ctids in the order they had.
    if (copy.data.length > 0) await copyInto(tx)(table, copy.data);
  };
  if (copy.target.kind === 'records') {
    await tx.exec('CREATE SCHEMA IF NOT EXISTS gds');
    return fill('gds.records');
  }
  if (copy.target.kind === 'sample') return fill(SANDBOX_SAMPLE);
  const [schema, name] = splitSource(copy.target.source);
  await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  // A physical object is copied as a table; anything else (a view) as a view over a table of its rows,
  // so the checks order and describe it as they would in place.
  if (PHYSICAL.includes(copy.shape.relkind)) return fill(quoteSource(copy.target.source));
  const rows = `gds_sandbox_rows.${quoteIdent(`t${index}`)}`;
  await fill(rows);
  await tx.exec(`CREATE VIEW ${quoteIdent(schema)}.${quoteIdent(name)} AS SELECT * FROM ${rows}`);
}
