// Read access to warehouse objects (a connector's schema). The service never writes to them.
import type { Queryable } from './db/handle.js';
import type { Column, ColumnType } from './records/columns.js';
import { INTEGER_BYTES } from './records/columns.js';

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `schema.table` as a quoted SQL name. */
export function quoteSource(source: string): string {
  const [schema, table] = splitSource(source);
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

export function splitSource(source: string): [string, string] {
  const dot = source.indexOf('.');
  if (dot <= 0 || dot === source.length - 1) throw new Error(`not a schema.table source: ${source}`);
  return [source.slice(0, dot), source.slice(dot + 1)];
}

/** PostgreSQL type names (information_schema / format_type, typmods stripped) as registered column types. */
export const COLUMN_TYPE_OF: Record<string, ColumnType> = {
  text: 'text',
  'character varying': 'text',
  character: 'text',
  integer: 'integer',
  bigint: 'integer',
  smallint: 'integer',
  numeric: 'numeric',
  real: 'numeric',
  'double precision': 'numeric',
  boolean: 'boolean',
  date: 'date',
  'timestamp with time zone': 'timestamp',
  'timestamp without time zone': 'timestamp',
};

interface ColumnInfo {
  table_schema: string;
  table_name: string;
  column_name: string;
  data_type: string;
  is_nullable: string;
  numeric_precision: number | null;
  numeric_scale: number | null;
}

/** The columns of every table of `schemas`, or (with `table`) of that table only. */
async function columnsOf(q: Queryable, schemas: string[], table?: string): Promise<ColumnInfo[]> {
  return q.query<ColumnInfo>(
    `SELECT table_schema, table_name, column_name, data_type, is_nullable, numeric_precision, numeric_scale
       FROM information_schema.columns
      WHERE table_schema = ANY($1::text[])${table === undefined ? '' : ' AND table_name = $2'}
      ORDER BY table_schema, table_name, ordinal_position`,
    table === undefined ? [schemas] : [schemas, table],
  );
}

function toColumn(info: ColumnInfo): Column {
  return {
    name: info.column_name,
    type: COLUMN_TYPE_OF[info.data_type] ?? 'text',
    required: info.is_nullable === 'NO',
    // The storage the warehouse declares: an integer's size; a numeric's precision and scale (numeric(p,s)),
    // which information_schema gives only when the column declares them.
    ...(INTEGER_BYTES[info.data_type] === undefined ? {} : { integerBytes: INTEGER_BYTES[info.data_type] }),
    ...(info.data_type === 'numeric' && info.numeric_precision !== null
      ? { precision: Number(info.numeric_precision), scale: Number(info.numeric_scale ?? 0) }
      : {}),
  };
}

/** The columns of a warehouse object, or null when it does not exist. */
export async function describeWarehouseObject(q: Queryable, source: string): Promise<Column[] | null> {
  const [schema, table] = splitSource(source);
  // The table's own columns only: a schema of 2,000 dbt models holds 20,000, read on every push and status.
  const columns = (await columnsOf(q, [schema], table)).map(toColumn);
  return columns.length > 0 ? columns : null;
}

export interface WarehouseObject {
  connectorId: string;
  source: string;
  columns: Array<{ name: string; type: ColumnType }>;
}

/** Every table in the given connectors' schemas: what an artifact's source may name. */
export async function listWarehouseObjects(
  q: Queryable,
  connectors: Array<{ id: string; schema: string }>,
): Promise<WarehouseObject[]> {
  const bySchema = new Map(connectors.map((c) => [c.schema, c.id]));
  const objects = new Map<string, WarehouseObject>();
  for (const info of await columnsOf(q, [...bySchema.keys()])) {
    const source = `${info.table_schema}.${info.table_name}`;
    let object = objects.get(source);
    if (!object) {
      object = { connectorId: bySchema.get(info.table_schema) ?? '', source, columns: [] };
      objects.set(source, object);
    }
    const { name, type } = toColumn(info);
    object.columns.push({ name, type });
  }
  return [...objects.values()];
}
