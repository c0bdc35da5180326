// Read access to warehouse objects (a connector's schema). The service never writes to them.
import type { Queryable } from './db/handle.js';
import { jsonRows } from './db/handle.js';
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

/**
 * The columns of every table of `schemas`, or (with `table`) of that table only, as information_schema.columns
 * gives them (the tables the server's role may use; `data_type` as there; precision and scale of a declared
 * numeric only) but read from pg_catalog: information_schema's view took 1.0-1.9 s for a schema of 2,000 tables
 * and 26,000 columns on PostgreSQL 15, this 0.2 s.
 */
async function columnsOf(q: Queryable, schemas: string[], table?: string): Promise<ColumnInfo[]> {
  return q.query<ColumnInfo>(
    `SELECT n.nspname AS table_schema, c.relname AS table_name, a.attname AS column_name,
            ${DATA_TYPE} AS data_type,
            CASE WHEN a.attnotnull OR (t.typtype = 'd' AND t.typnotnull) THEN 'NO' ELSE 'YES' END AS is_nullable,
            CASE WHEN et.oid = 'numeric'::regtype AND m.typmod <> -1 THEN ((m.typmod - 4) >> 16) & 65535 END
              AS numeric_precision,
            CASE WHEN et.oid = 'numeric'::regtype AND m.typmod <> -1 THEN (m.typmod - 4) & 65535 END AS numeric_scale
       ${COLUMNS_FROM}
       CROSS JOIN LATERAL (SELECT CASE WHEN t.typtype = 'd' THEN t.typtypmod ELSE a.atttypmod END AS typmod) m
      WHERE ${COLUMNS_WHERE}${table === undefined ? '' : ' AND c.relname = $2'}
      ORDER BY n.nspname, c.relname, a.attnum`,
    table === undefined ? [schemas] : [schemas, table],
  );
}

/** information_schema.columns' `data_type`, from pg_catalog (see columnsOf). */
const DATA_TYPE = `CASE WHEN et.typelem <> 0 AND et.typlen = -1 THEN 'ARRAY'
                 WHEN ent.nspname = 'pg_catalog' THEN format_type(et.oid, NULL)
                 ELSE 'USER-DEFINED' END`;

/** A column's type `t`, its base type `et` (a domain's, else itself) and that one's schema `ent`. */
const TYPES_FROM = `pg_type t
       JOIN pg_type et ON et.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
       JOIN pg_namespace ent ON ent.oid = et.typnamespace`;

/** The columns `a` of the relations `c` in the schemas `n`. */
const RELATIONS_FROM = `FROM pg_attribute a
       JOIN pg_class c ON c.oid = a.attrelid
       JOIN pg_namespace n ON n.oid = c.relnamespace`;

const COLUMNS_FROM = `${RELATIONS_FROM}
       JOIN ${TYPES_FROM} ON t.oid = a.atttypid`;

/** The tables, views and foreign or partitioned tables `c` of the schemas $1. */
const RELATION_WHERE = `n.nspname = ANY($1::text[]) AND c.relkind IN ('r', 'v', 'f', 'p')`;

/** The columns `a` of the relation `c` that information_schema shows: not dropped, and usable by the role. */
const COLUMN_WHERE = `a.attnum > 0 AND NOT a.attisdropped
        AND (pg_has_role(c.relowner, 'USAGE')
             OR has_column_privilege(c.oid, a.attnum, 'SELECT, INSERT, UPDATE, REFERENCES'))`;

/** The columns of tables, views and foreign or partitioned tables of the schemas $1, as information_schema shows. */
const COLUMNS_WHERE = `${RELATION_WHERE} AND ${COLUMN_WHERE}`;

/**
 * Each table of `schemas` with its columns' names and data types (as columnsOf gives them) in order: one row a
 * table, not a column. On PGlite most of the cost of reading a schema of 2,000 tables is each row's way from
 * the database to JavaScript: 16,000 rows of seven fields took 190-310 ms of the database thread's CPU, 2,000
 * of three 110-150 ms, the 2,000 as one JSON text (jsonRows) 86-90 ms against 100-108.
 * Each table's columns are read by its oid (the catalog's index on attrelid, attnum) as two arrays, their
 * names and their type oids, and each type's data type is looked up once afterwards (a handful of types, not a
 * lookup a column). Grouping every column of the schemas by table (a sort in each group) and building a JSON
 * pair a column cost the request of a schema of 2,000 tables and 16,000 columns 57-58 ms of PGlite's database
 * thread and 24 ms of PostgreSQL's backend; this answers the same bytes in 37-40 and 18 ms (docs/bench.md,
 * "Plans at once, twentieth pass").
 */
async function tablesOf(
  q: Queryable,
  schemas: string[],
): Promise<Array<{ table_schema: string; table_name: string; columns: Array<[string, string]> }>> {
  const tables = await jsonRows<{
    table_schema: string;
    table_name: string;
    names: string[];
    types: number[];
  }>(
    q,
    `SELECT n.nspname AS table_schema, c.relname AS table_name, read.names, read.types
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       CROSS JOIN LATERAL (SELECT to_json(array_agg(a.attname ORDER BY a.attnum)) AS names,
                                  to_json(array_agg(a.atttypid ORDER BY a.attnum)) AS types
                             FROM pg_attribute a
                            WHERE a.attrelid = c.oid AND ${COLUMN_WHERE}) read
      WHERE ${RELATION_WHERE} AND read.names IS NOT NULL
      ORDER BY n.nspname, c.relname`,
    'table_schema, table_name',
    [schemas],
  );
  const typeOids = [...new Set(tables.flatMap((t) => t.types))];
  const dataTypes =
    typeOids.length === 0
      ? []
      : await q.query<{ oid: number; data_type: string }>(
          `SELECT t.oid, ${DATA_TYPE} AS data_type FROM ${TYPES_FROM} WHERE t.oid = ANY($1::oid[])`,
          [typeOids],
        );
  const dataTypeOf = new Map(dataTypes.map((t) => [Number(t.oid), t.data_type]));
  return tables.map(({ table_schema, table_name, names, types }) => ({
    table_schema,
    table_name,
    columns: names.map((name, at): [string, string] => [name, dataTypeOf.get(Number(types[at])) ?? '']),
  }));
}

const columnType = (dataType: string): ColumnType => COLUMN_TYPE_OF[dataType] ?? 'text';

function toColumn(info: ColumnInfo): Column {
  return {
    name: info.column_name,
    type: columnType(info.data_type),
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
  return (await tablesOf(q, [...bySchema.keys()])).map((table) => ({
    connectorId: bySchema.get(table.table_schema) ?? '',
    source: `${table.table_schema}.${table.table_name}`,
    columns: table.columns.map(([name, dataType]) => ({ name, type: columnType(dataType) })),
  }));
}
