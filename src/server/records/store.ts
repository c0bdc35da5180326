// Reading and writing records. Mode A rows come from the warehouse object (read only); Mode B rows
// live in the service's own storage (gds.records).
import type { TableRecord } from '../../contract/types.js';
import type { Queryable } from '../db/index.js';
import { badRequest, notFound } from '../errors.js';
import { newId } from '../ids.js';
import { quoteIdent, quoteSource } from '../warehouse.js';
import type { Column } from './columns.js';
import { checkValues, describeProblems } from './columns.js';
import type { GovernedTable } from './tables.js';

export interface ListOptions {
  page: number;
  limit: number;
  search?: string;
}

export interface ListResult {
  records: TableRecord[];
  total: number;
}

function likePattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const textColumns = (columns: Column[]) => columns.filter((c) => c.type === 'text').map((c) => c.name);

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
  if (!table.source) throw new Error(`Mode A table ${table.id} has no source`);
  const params: unknown[] = [];
  let where = '';
  const searchable = textColumns(table.columns);
  if (options.search !== undefined) {
    params.push(likePattern(options.search));
    where = searchable.length
      ? `WHERE ${searchable.map((c) => `t.${quoteIdent(c)} ILIKE $1`).join(' OR ')}`
      : 'WHERE false';
  }
  const from = `${quoteSource(table.source)} t ${where}`;
  const hasId = table.columns.some((c) => c.name === 'id');
  // A row's record id is its `id` column when the object has one, else its physical row id.
  const idExpr = hasId ? 't.id::text' : `'row:' || t.ctid::text`;
  const [count] = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${from}`, params);
  const rows = await q.query<{ rid: string; row: Record<string, unknown> }>(
    `SELECT ${idExpr} AS rid, to_jsonb(t) AS row FROM ${from} ORDER BY ${hasId ? 't.id' : 't.ctid'}
      LIMIT ${options.limit} OFFSET ${(options.page - 1) * options.limit}`,
    params,
  );
  return { records: rows.map((r) => ({ ...r.row, id: r.rid })), total: count?.n ?? 0 };
}

async function listStoredRecords(
  q: Queryable,
  table: GovernedTable,
  options: ListOptions,
): Promise<ListResult> {
  const params: unknown[] = [table.id];
  let filter = '';
  const searchable = textColumns(table.columns);
  if (options.search !== undefined) {
    params.push(likePattern(options.search), searchable);
    filter = `AND EXISTS (SELECT 1 FROM unnest($3::text[]) AS c(name) WHERE data->>c.name ILIKE $2)`;
  }
  const [count] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1 ${filter}`,
    params,
  );
  const rows = await q.query<{ id: string; data: Record<string, unknown> }>(
    `SELECT id, data FROM gds.records WHERE table_id = $1 ${filter} ORDER BY seq
      LIMIT ${options.limit} OFFSET ${(options.page - 1) * options.limit}`,
    params,
  );
  return { records: rows.map(toRecord), total: count?.n ?? 0 };
}

function toRecord(row: { id: string; data: Record<string, unknown> }): TableRecord {
  return { ...row.data, id: row.id };
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
    `The record does not fit table ${table.name}${where}: ${describeProblems(problems)}.`,
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
  const [row] = await q.query<{ id: string; data: Record<string, unknown> }>(
    `UPDATE gds.records SET data = data || $3::jsonb, updated_at = $4 WHERE table_id = $1 AND id = $2
     RETURNING id, data`,
    [table.id, recordId, JSON.stringify(values), now],
  );
  if (!row) throw recordNotFound(table, recordId);
  return toRecord(row);
}

export async function deleteRecord(q: Queryable, table: GovernedTable, recordId: string): Promise<void> {
  const rows = await q.query('DELETE FROM gds.records WHERE table_id = $1 AND id = $2 RETURNING id', [
    table.id,
    recordId,
  ]);
  if (rows.length === 0) throw recordNotFound(table, recordId);
}

/** Updates every record whose `key` column equals the row's; returns how many matched. */
export async function updateByKey(
  q: Queryable,
  table: GovernedTable,
  key: string,
  values: Record<string, unknown>,
  now: string,
): Promise<number> {
  const rows = await q.query(
    `UPDATE gds.records SET data = data || $4::jsonb, updated_at = $5
      WHERE table_id = $1 AND data -> $2 = $3::jsonb RETURNING id`,
    [table.id, key, JSON.stringify(values[key]), JSON.stringify(values), now],
  );
  return rows.length;
}

function recordNotFound(table: GovernedTable, recordId: string) {
  return notFound('record_not_found', `Record ${recordId} does not exist in table ${table.id}.`, {
    tableId: table.id,
    recordId,
  });
}
