// Reading and writing records. Mode A rows come from the warehouse object (read only); Mode B rows
// live in the service's own storage (gds.records).
import type { TableRecord } from '../../contract/types.js';
import type { Queryable } from '../db/handle.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { decodeRecordsCursor, encodeListCursor, notACursor } from '../list-cursor.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import { parseLossless, valueKey } from '../../core/lossless-json.js';
import type { Column } from './columns.js';
import { checkValues, describeProblems } from './columns.js';
import type { GovernedTable } from './tables.js';

export interface ListOptions {
  /** The spec's 1-based page: read by offset, as a deep page must; ignored when `cursor` is given. */
  page: number;
  limit: number;
  search?: string;
  /** The previous page's `nextCursor`: the page after it, read by key whatever its depth. */
  cursor?: string;
}

export interface ListResult {
  records: TableRecord[];
  /** Counted once per listing, on its first page (page 1 without a cursor); absent on later pages. */
  total?: number;
  /** The cursor of the next page, null on the last one. */
  nextCursor: string | null;
  /** On the last page of a listing that may have skipped or repeated a row written while it was read. */
  changedWhileListed?: true;
}

function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const textColumns = (columns: Column[]) => columns.filter((c) => c.type === 'text').map((c) => c.name);

/**
 * A page cursor: the key of the last row served, opaque to the caller (base64url of JSON). The key is
 * compared in the database with the ordering column's own type, so any key type pages in its order.
 */
export function encodeCursor(key: string): string {
  return encodeListCursor({ after: key });
}

export async function listRecords(
  q: Queryable,
  table: GovernedTable,
  options: ListOptions,
): Promise<ListResult> {
  return table.mode === 'MODE_A'
    ? listWarehouseRows(q, table, options)
    : listStoredRecords(q, table, options);
}

async function listWarehouseRows(
  q: Queryable,
  table: GovernedTable,
  options: ListOptions,
): Promise<ListResult> {
  try {
    return await readWarehouseRows(q, table, options);
  } catch (error) {
    throw await driftOr(q, table, error);
  }
}

/** The warehouse object lost declared columns (or is gone): 409 naming them, never the database's 500. */
async function driftOr(q: Queryable, table: GovernedTable, error: unknown): Promise<unknown> {
  const code = (error as { code?: unknown }).code;
  if (code !== '42703' && code !== '42P01') return error;
  const [schema, name] = splitSource(table.source ?? '');
  const present = new Set(
    (
      await q.query<{ column_name: string }>(
        'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
        [schema, name],
      )
    ).map((r) => r.column_name),
  );
  const missingColumns = table.columns.map((c) => c.name).filter((c) => !present.has(c));
  return new HttpError(
    409,
    'schema_drift',
    present.size === 0
      ? `The warehouse object ${table.source} of table ${table.name} is gone; restore it or push the definition again.`
      : `The warehouse object ${table.source} of table ${table.name} lacks declared columns: ${missingColumns.join(', ')}. Restore them or push the definition again (--replace).`,
    { source: table.source, missingColumns },
  );
}

async function readWarehouseRows(
  q: Queryable,
  table: GovernedTable,
  options: ListOptions,
): Promise<ListResult> {
  if (!table.source) throw new Error(`Mode A table ${table.id} has no source`);
  const params: unknown[] = [];
  // Names every declared column, so that one the warehouse object lost fails the read (42703) and is
  // answered as drift instead of silently missing from the records.
  const declared = table.columns.map((c) => `t.${quoteIdent(c.name)}`);
  const conditions: string[] = declared.length > 0 ? [`(ROW(${declared.join(', ')}) IS NULL OR true)`] : [];
  const searchable = textColumns(table.columns);
  if (options.search !== undefined) {
    params.push(likePattern(options.search));
    conditions.push(
      searchable.length ? `(${searchable.map((c) => `t.${quoteIdent(c)} ILIKE $1`).join(' OR ')})` : 'false',
    );
  }
  const hasId = table.columns.some((c) => c.name === 'id');
  // Rows page by key when the object's `id` is a key (a table whose unique index on id, NOT NULL, gives an
  // index range at any depth). A table without one pages by its physical row id, also a key: a row deleted
  // or inserted under the listing moves no other (an offset would skip or repeat one). A view without a key
  // pages by offset, in a deterministic order (the id, if it has one, and the whole row).
  const [relation] = await q.query<{ relkind: string; id_is_key: boolean; filenode: string | null }>(
    `SELECT c.relkind, pg_relation_filenode(c.oid)::text AS filenode, EXISTS (
        SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
         WHERE i.indrelid = c.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL
           AND a.attname = 'id' AND a.attnotnull) AS id_is_key
       FROM pg_class c WHERE c.oid = to_regclass($1)`,
    [quoteSource(table.source)],
  );
  // Only a table or a materialized view has physical rows (a view has no ctid to read).
  const hasRowId = relation === undefined || relation.relkind === 'r' || relation.relkind === 'm';
  const byKey = hasId && relation?.id_is_key === true;
  const byRowId = !byKey && relation !== undefined && relation.filenode !== null && hasRowId;
  // A row's record id is its `id` column when the object has one, else (and where it is NULL) its physical
  // row id; a view's row with a NULL id has none to give.
  const rowId = hasRowId ? `'row:' || t.ctid::text` : "''";
  const idExpr = hasId ? `COALESCE(t.id::text, ${rowId})` : rowId;
  const from = `${quoteSource(table.source)} t`;
  const listing = byRowId ? await rowIdListing(q, from, relation.filenode ?? '', options) : undefined;
  const page = await pageOf<{ rid: string; key: string; row: string }>(q, options, {
    select: `${idExpr} AS rid, ${byKey ? 't.id::text' : byRowId ? 't.ctid::text' : "''"} AS key, to_jsonb(t)::text AS row`,
    from,
    conditions,
    orderBy:
      byKey || byRowId
        ? byKey
          ? 't.id'
          : 't.ctid'
        : hasId
          ? 't.id, to_jsonb(t)::text'
          : 'to_jsonb(t)::text',
    ...(byRowId ? { keyType: 'tid' } : {}),
    byOffset: !byKey && !byRowId,
    params,
    ...(listing === undefined ? {} : { after: listing.after, cursorOf: listing.cursorOf }),
  });
  const { rows, ...rest } = page;
  const changed =
    listing !== undefined &&
    options.cursor !== undefined &&
    rest.nextCursor === null &&
    (await listing.changedSinceStart(conditions, params));
  return {
    ...rest,
    ...(changed ? { changedWhileListed: true } : {}),
    records: rows.map((r) => toRecord(table, { id: r.rid, data: warehouseRow(r.row) })),
  };
}

/**
 * A listing of a keyless warehouse table by physical row id. Its cursor carries the object's file (a TRUNCATE,
 * a rebuild under the same name or a VACUUM FULL gives it a new one, and row ids that mean other rows: 409
 * `listing_changed`) and the transactions the listing's start could not see (the next one, and those still
 * running then): an update writes a new version of a row elsewhere in the file, maybe before the cursor
 * (never served) or after it (served twice), so the last page says `changedWhileListed` when any row the
 * listing serves was written by one of them.
 */
async function rowIdListing(
  q: Queryable,
  from: string,
  filenode: string,
  options: ListOptions,
): Promise<{
  after: string | undefined;
  cursorOf: (key: string) => string;
  changedSinceStart: (conditions: string[], params: unknown[]) => Promise<boolean>;
}> {
  let next: string;
  let running: string[];
  let after: string | undefined;
  if (options.cursor !== undefined) {
    const match = /^rowid:(\d+):(\d+):((?:\d+(?:,\d+)*)?):(\(\d+,\d+\))$/.exec(
      decodeRecordsCursor(options.cursor),
    );
    if (match === null) throw notACursor();
    next = match[2] ?? '';
    running = match[3] === '' || match[3] === undefined ? [] : match[3].split(',');
    // The transaction ids are 32-bit, as the listing's start writes them: a longer one was the database's
    // 22003 on PGlite (400 invalid_input), and was read as another transaction on PostgreSQL.
    if (![next, ...running].every(isXid32)) throw notACursor();
    if (match[1] !== filenode) {
      throw new HttpError(
        409,
        'listing_changed',
        'The warehouse object was rewritten since this listing began (a TRUNCATE, a rebuild under its name or a VACUUM FULL): its cursor points at rows it no longer holds. Start the listing again from its first page.',
        { parameter: 'cursor' },
      );
    }
    after = match[4];
  } else {
    // Row versions carry 32-bit transaction ids; the snapshot gives 64-bit ones. Many transactions running at
    // once (a cursor should stay short) count as from the oldest of them on: more may be said changed, none less.
    const [row] = await q.query<{ next: string; oldest: string; running: string[] }>(
      `SELECT (pg_snapshot_xmax(s)::text::bigint % 4294967296)::text AS next,
              (pg_snapshot_xmin(s)::text::bigint % 4294967296)::text AS oldest,
              ARRAY(SELECT (x::text::bigint % 4294967296)::text FROM pg_snapshot_xip(s) AS x) AS running
         FROM pg_current_snapshot() AS s`,
    );
    const many = (row?.running.length ?? 0) > 32;
    next = (many ? row?.oldest : row?.next) ?? '0';
    running = many ? [] : (row?.running ?? []);
  }
  return {
    after,
    cursorOf: (key) => encodeCursor(`rowid:${filenode}:${next}:${running.join(',')}:${key}`),
    async changedSinceStart(conditions, params) {
      const n = params.length;
      const where = [
        ...conditions,
        `(age(t.xmin) <= age($${n + 1}::text::xid) OR t.xmin::text = ANY($${n + 2}::text[]))`,
      ];
      const [row] = await q.query<{ changed: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM ${from} WHERE ${where.join(' AND ')}) AS changed`,
        [...params, next, running],
      );
      return row?.changed === true;
    },
  };
}

async function listStoredRecords(
  q: Queryable,
  table: GovernedTable,
  options: ListOptions,
): Promise<ListResult> {
  const params: unknown[] = [table.id];
  const conditions = ['table_id = $1'];
  const searchable = textColumns(table.columns);
  if (options.search !== undefined) {
    params.push(likePattern(options.search), searchable);
    conditions.push(`EXISTS (SELECT 1 FROM unnest($3::text[]) AS c(name) WHERE data->>c.name ILIKE $2)`);
  }
  const page = await pageOf<{ id: string; key: string; data: string }>(q, options, {
    select: 'id, seq::text AS key, data::text AS data',
    from: 'gds.records',
    conditions,
    orderBy: 'seq',
    keyType: 'bigint',
    params,
  });
  const { rows, ...rest } = page;
  return { ...rest, records: rows.map((r) => toRecord(table, { id: r.id, data: warehouseRow(r.data) })) };
}

/**
 * One page, read by key after a cursor (an index range, at any depth) or by offset for the spec's `page`;
 * no window over the whole relation. The total is counted on a listing's first page only, and one row more
 * than the page tells whether another follows.
 */
async function pageOf<T extends { key: string }>(
  q: Queryable,
  options: ListOptions,
  sql: {
    select: string;
    from: string;
    conditions: string[];
    orderBy: string;
    keyType?: string;
    /** No key orders the rows uniquely: a cursor carries the offset of the next page instead. */
    byOffset?: boolean;
    params: unknown[];
    /** The key the cursor carries, decoded by the caller (with `cursorOf` encoding the next one). */
    after?: string | undefined;
    cursorOf?: (key: string) => string;
  },
): Promise<{ rows: T[]; total?: number; nextCursor: string | null; changedWhileListed?: true }> {
  const params = [...sql.params];
  const conditions = [...sql.conditions];
  const filter = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  if (sql.byOffset === true) {
    // No key to continue after (a view): the offset, and the count of rows when the listing began. A listing
    // whose count differs at its last page had rows inserted or deleted meanwhile, which shift an offset's
    // rows (one skipped or repeated): it says so. (An insertion and a deletion together keep the count.)
    const at =
      options.cursor !== undefined
        ? offsetOf(decodeRecordsCursor(options.cursor))
        : { offset: (options.page - 1) * options.limit, count: undefined };
    const { offset } = at;
    const rows = await q.query<T>(
      `SELECT ${sql.select} FROM ${sql.from} ${filter} ORDER BY ${sql.orderBy}
        LIMIT ${options.limit + 1} OFFSET ${offset}`,
      params,
    );
    const more = rows.length > options.limit;
    const served = more ? rows.slice(0, options.limit) : rows;
    const first = options.cursor === undefined && options.page === 1;
    const count = first ? (more ? await countOf(q, sql.from, filter, sql.params) : served.length) : at.count;
    const nextCursor = more
      ? encodeCursor(`offset:${offset + options.limit}${count === undefined ? '' : `:${count}`}`)
      : null;
    if (!first) {
      const changed =
        !more && at.count !== undefined && (await countOf(q, sql.from, filter, sql.params)) !== at.count;
      return { rows: served, nextCursor, ...(changed ? { changedWhileListed: true as const } : {}) };
    }
    return { rows: served, total: count ?? served.length, nextCursor };
  }
  if (options.cursor !== undefined) {
    params.push(sql.cursorOf === undefined ? decodeRecordsCursor(options.cursor) : sql.after);
    conditions.push(
      `${sql.orderBy} > $${params.length}${sql.keyType === undefined ? '' : `::${sql.keyType}`}`,
    );
  } else if (options.page > 1) {
    // The spec's numbered page: its offset is walked over the ordering key alone (an index), and only the
    // page's own rows are read whole.
    const offset = (options.page - 1) * options.limit;
    conditions.push(
      `${sql.orderBy} >= (SELECT ${sql.orderBy} FROM ${sql.from} ${filter} ORDER BY ${sql.orderBy} OFFSET ${offset} LIMIT 1)`,
    );
  }
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const rows = await q
    .query<T>(
      `SELECT ${sql.select} FROM ${sql.from} ${where} ORDER BY ${sql.orderBy} LIMIT ${options.limit + 1}`,
      params,
    )
    .catch((error: unknown) => {
      // The key is compared as the ordering column's type: one the type refuses is no key a page ended at.
      throw options.cursor !== undefined && KEY_TYPE_SQLSTATES.has((error as { code?: unknown }).code)
        ? notACursor()
        : error;
    });
  const more = rows.length > options.limit;
  const served = more ? rows.slice(0, options.limit) : rows;
  const last = served.at(-1);
  const nextCursor = more && last !== undefined ? (sql.cursorOf ?? encodeCursor)(last.key) : null;
  if (options.cursor !== undefined || options.page !== 1) return { rows: served, nextCursor };
  const total = more ? await countOf(q, sql.from, filter, sql.params) : served.length;
  return { rows: served, total, nextCursor };
}

/** A transaction id as a row version holds it: 32 bits. */
const isXid32 = (digits: string) => digits.length <= 10 && Number(digits) <= 0xffff_ffff;

/** A value not of its type (22P02), out of its range (22003) or a date or time it cannot read (22007, 22008). */
const KEY_TYPE_SQLSTATES = new Set<unknown>(['22P02', '22003', '22007', '22008']);

async function countOf(q: Queryable, from: string, filter: string, params: unknown[]): Promise<number> {
  return (
    (await q.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${from} ${filter}`, params))[0]?.n ?? 0
  );
}

/**
 * The offset an offset cursor carries, and the rows its listing counted at its start (`offset:<n>:<count>`;
 * a cursor of an earlier version has no count); 400 for a key cursor given to an offset listing.
 */
function offsetOf(key: string): { offset: number; count: number | undefined } {
  const match = /^offset:(\d{1,12})(?::(\d{1,12}))?$/.exec(key);
  if (match === null) throw notACursor();
  return { offset: Number(match[1]), count: match[2] === undefined ? undefined : Number(match[2]) };
}

/** One record by its id (as a listing gives it); 404 when the table has none of that id. */
export async function getRecord(q: Queryable, table: GovernedTable, recordId: string): Promise<TableRecord> {
  if (table.mode === 'MODE_B') {
    const [row] = await q.query<{ id: string; data: string }>(
      'SELECT id, data::text AS data FROM gds.records WHERE table_id = $1 AND id = $2',
      [table.id, recordId],
    );
    if (!row) throw recordNotFound(table, recordId);
    return toRecord(table, { id: row.id, data: warehouseRow(row.data) });
  }
  let data: string | undefined;
  try {
    data = await findWarehouseRow(q, table, recordId);
  } catch (error) {
    throw await driftOr(q, table, error);
  }
  if (data === undefined) throw recordNotFound(table, recordId);
  return toRecord(table, { id: recordId, data: warehouseRow(data) });
}

/**
 * 404 unless the table holds a record of this id: a write to one record names one there (§7.1, "Record
 * missing or outside scope"), checked before its body is read. A record of another table is missing here.
 */
export async function assertRecord(q: Queryable, table: GovernedTable, recordId: string): Promise<void> {
  if (table.mode === 'MODE_A') return assertWarehouseRecord(q, table, recordId);
  const [row] = await q.query('SELECT 1 FROM gds.records WHERE table_id = $1 AND id = $2', [
    table.id,
    recordId,
  ]);
  if (!row) throw recordNotFound(table, recordId);
}

/**
 * 404 unless the warehouse object of a Mode A table holds a record of this id; an object that is gone holds
 * none (a write to it has no record to name, where a read of it is drift).
 */
async function assertWarehouseRecord(q: Queryable, table: GovernedTable, recordId: string): Promise<void> {
  let data: string | undefined;
  try {
    data = await findWarehouseRow(q, table, recordId);
  } catch (error) {
    if ((error as { code?: unknown }).code !== '42P01') throw error;
  }
  if (data === undefined) throw recordNotFound(table, recordId);
}

/** The JSON text of a warehouse row by the record id a listing gives it, or undefined. */
async function findWarehouseRow(
  q: Queryable,
  table: GovernedTable,
  recordId: string,
): Promise<string | undefined> {
  if (!table.source) throw new Error(`Mode A table ${table.id} has no source`);
  const physical = /^row:(\(\d+,\d+\))$/.exec(recordId)?.[1];
  const hasId = table.columns.some((c) => c.name === 'id');
  if (physical === undefined && !hasId) return undefined;
  // The id a listing gives: the `id` column's text, or the physical row id where there is none.
  const condition = physical === undefined ? 't.id::text = $1' : 't.ctid = $1::tid';
  try {
    const [row] = await q.query<{ data: string }>(
      `SELECT to_jsonb(t)::text AS data FROM ${quoteSource(table.source)} t WHERE ${condition} LIMIT 1`,
      [physical ?? recordId],
    );
    return row?.data;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // A view has no physical row ids; a bad tid is no record.
    if (code === '42703' || code === '22P02') return undefined;
    throw error;
  }
}

/**
 * A row (a warehouse's, or a Mode B record's stored data) from its JSON text, not the driver's parse of it: a numeric or bigint no double holds
 * (123456789012345678.123456, 9007199254740993) keeps the warehouse's digits in the answer.
 */
function warehouseRow(text: string): Record<string, unknown> {
  return parseLossless(text) as Record<string, unknown>;
}

/**
 * A record's keys are the table's column names (§2.3) plus `id`: a warehouse object's other columns, or
 * values a Mode B table no longer governs, are not part of the contract and are never served.
 */
function toRecord(table: GovernedTable, row: { id: string; data: Record<string, unknown> }): TableRecord {
  const governed = table.columns.filter((c) => c.name in row.data).map((c) => [c.name, row.data[c.name]]);
  return { ...Object.fromEntries(governed), id: row.id };
}

/** 400 naming the columns when `values` do not fit the table. */
export function assertValues(
  table: GovernedTable,
  values: Record<string, unknown>,
  partial: boolean,
  index?: number,
) {
  const problems = checkValues(table.columns, values, partial);
  if (!problems) return;
  const where = index === undefined ? '' : ` (item ${index})`;
  throw badRequest(
    'invalid_record',
    `The record does not fit table ${table.name}${where}: ${describeProblems(problems, table.columns)}.`,
    {
      ...(index === undefined ? {} : { index }),
      ...problems,
    },
  );
}

export async function insertRecord(
  q: Queryable,
  table: GovernedTable,
  values: Record<string, unknown>,
  now: string,
): Promise<TableRecord> {
  const id = newId('rec');
  await q.query(
    'INSERT INTO gds.records (table_id, id, data, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)',
    [table.id, id, JSON.stringify(values), now],
  );
  return { ...values, id };
}

/** Merges `values` into the record; 404 when the table has no such record. */
export async function updateRecord(
  q: Queryable,
  table: GovernedTable,
  recordId: string,
  values: Record<string, unknown>,
  now: string,
): Promise<TableRecord> {
  const [row] = await q.query<{ id: string; data: string }>(
    `UPDATE gds.records SET data = data || $3::jsonb, updated_at = $4 WHERE table_id = $1 AND id = $2
     RETURNING id, data::text AS data`,
    [table.id, recordId, JSON.stringify(values), now],
  );
  if (!row) throw recordNotFound(table, recordId);
  return toRecord(table, { id: row.id, data: warehouseRow(row.data) });
}

export async function deleteRecord(q: Queryable, table: GovernedTable, recordId: string): Promise<void> {
  const rows = await q.query('DELETE FROM gds.records WHERE table_id = $1 AND id = $2 RETURNING id', [
    table.id,
    recordId,
  ]);
  if (rows.length === 0) throw recordNotFound(table, recordId);
}

/**
 * Upserts rows on a key column, set-based (one read, one insert, one update), with the semantics of
 * applying the rows in order: a row updates every record whose key equals its own (including one
 * inserted by an earlier row of the same import), else it is inserted and must then hold every
 * required column. The caller runs it in a transaction.
 */
export async function upsertByKey(
  q: Queryable,
  table: GovernedTable,
  key: string,
  rows: Array<Record<string, unknown>>,
  now: string,
): Promise<{ inserted: number; updated: number }> {
  // Two imports at once would each read the records of their keys before the other's inserts commit, and
  // both insert a key neither found (two records for one key). The table's row lock, taken first, makes
  // the second wait for the first to commit; its read below then sees the first one's records. (Every
  // data-plane write already locks this row at its end, when it bumps data_version.)
  await q.query('SELECT 1 FROM gds.tables WHERE id = $1 FOR NO KEY UPDATE', [table.id]);
  const keys = [...new Set(rows.map((row) => JSON.stringify(row[key])))];
  // Read as text: a record's other values are written back whole, to the digit.
  const existing = (
    await q.query<{ id: string; data: string }>(
      `SELECT id, data::text AS data FROM gds.records
        WHERE table_id = $1 AND data -> $2 IN (SELECT jsonb_array_elements($3::jsonb)) ORDER BY seq FOR UPDATE`,
      [table.id, key, `[${keys.join(',')}]`],
    )
  ).map((record) => ({ id: record.id, data: warehouseRow(record.data) }));
  const byKey = new Map<string, Array<{ id: string; data: Record<string, unknown> }>>();
  // Matched as jsonb matched them above: by value, not by how each number is written (a stored 1.50, a sent
  // 1.5 or 15e-1; a number kept to the digit).
  for (const record of existing) {
    const k = valueKey(record.data[key]);
    byKey.set(k, [...(byKey.get(k) ?? []), record]);
  }
  const inserted: Array<{ id: string; data: Record<string, unknown> }> = [];
  const touched = new Set<{ id: string; data: Record<string, unknown> }>();
  let updated = 0;
  for (const [index, row] of rows.entries()) {
    const k = valueKey(row[key]);
    const matches = byKey.get(k);
    if (matches) {
      for (const record of matches) {
        record.data = { ...record.data, ...row };
        touched.add(record);
      }
      updated += matches.length;
    } else {
      assertValues(table, row, false, index);
      const record = { id: newId('rec'), data: row };
      inserted.push(record);
      byKey.set(k, [record]);
    }
  }
  const fresh = new Set(inserted);
  const changed = [...touched].filter((record) => !fresh.has(record));
  if (inserted.length > 0) {
    await q.query(
      `INSERT INTO gds.records (table_id, id, data, created_at, updated_at)
       SELECT $1, e.value ->> 'id', e.value -> 'data', $3, $3
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, n) ORDER BY e.n`,
      [table.id, JSON.stringify(inserted), now],
    );
  }
  if (changed.length > 0) {
    await q.query(
      `UPDATE gds.records r SET data = e.value -> 'data', updated_at = $3
         FROM jsonb_array_elements($2::jsonb) AS e(value)
        WHERE r.table_id = $1 AND r.id = e.value ->> 'id'`,
      [table.id, JSON.stringify(changed), now],
    );
  }
  return { inserted: inserted.length, updated };
}

function recordNotFound(table: GovernedTable, recordId: string) {
  return notFound('record_not_found', `Record ${recordId} does not exist in table ${table.id}.`, {
    tableId: table.id,
    recordId,
  });
}
