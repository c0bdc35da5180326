// The rows a gate reads, as SQL: a Mode A table's warehouse object (the connector's schema and the
// table's source), or a Mode B table's own rows projected from gds.records as typed columns. Every
// check is `WITH gate_rows AS (…) SELECT … FROM gate_rows`, so checks see exactly the registered
// columns (by their names) and nothing else.
import type { Queryable } from '../db/index.js';
import type { ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import type { SampleSpec } from './sample.js';
import { sampleFilter } from './sample.js';
import type { GateTable } from './table.js';

/** Bind parameters of one statement: `add` returns the placeholder of a new one. */
export class Params {
  readonly values: unknown[] = [];
  add = (value: unknown): string => {
    this.values.push(value);
    return `$${this.values.length}`;
  };
}

const PG_TYPE: Record<ColumnType, string> = {
  text: 'text',
  integer: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
};

export interface WarehouseColumn {
  name: string;
  dataType: string;
}

export interface Relation {
  /** Human name for details: `schema.table`, or `gds.records of <table>`. */
  label: string;
  /** The registered columns the relation actually has (all of them for Mode B). */
  present: string[];
  /** Registered columns missing from the warehouse object. */
  missing: string[];
  /** The warehouse object's own columns (Mode A), for structural checks. */
  warehouseColumns: WarehouseColumn[];
  /** False when the Mode A object does not exist. */
  exists: boolean;
  /** Builds `WITH … gate_rows AS (…)` for one statement, binding into `params`. */
  rowsCte(params: Params): string;
}

export interface RowsOptions {
  sample?: SampleSpec;
  seed?: string;
}

/** Describes the table's relation (reads the catalog for Mode A). */
export async function resolveRelation(
  q: Queryable,
  table: GateTable,
  options: RowsOptions = {},
): Promise<Relation> {
  if (table.mode === 'MODE_B') return modeBRelation(table, options);
  const source = table.source ?? '';
  const info = await catalogColumns(q, source);
  const warehouseColumns = info.map((i) => ({ name: i.name, dataType: i.type }));
  const have = new Set(warehouseColumns.map((c) => c.name));
  const present = table.columns.map((c) => c.name).filter((c) => have.has(c));
  const missing = table.columns.map((c) => c.name).filter((c) => !have.has(c));
  const physical = ['r', 'm'].includes(info[0]?.relkind ?? '');
  const order = naturalOrder(table, present, physical ? 'b.ctid' : null);
  return {
    label: source,
    present,
    missing,
    warehouseColumns,
    exists: info.length > 0,
    rowsCte: (params) => rowsCte(`${quoteSource(source)} AS b`, present, order, options, params),
  };
}

/** A warehouse object's columns (in order, with their SQL types) and its kind; none when it does not exist. */
export async function catalogColumns(
  q: Queryable,
  source: string,
): Promise<Array<{ name: string; type: string; relkind: string }>> {
  const [schema, name] = splitSource(source);
  return q.query(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, c.relkind::text AS relkind
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relname = $2
      ORDER BY a.attnum`,
    [schema, name],
  );
}

function modeBRelation(table: GateTable, options: RowsOptions): Relation {
  const present = table.columns.map((c) => c.name);
  return {
    label: `the service's rows of ${table.name}`,
    present,
    missing: [],
    warehouseColumns: table.columns.map((c) => ({ name: c.name, dataType: PG_TYPE[c.type] })),
    exists: true,
    rowsCte: (params) => {
      const projection = table.columns
        .map((c) => `(r.data ->> ${params.add(c.name)})::${PG_TYPE[c.type]} AS ${quoteIdent(c.name)}`)
        .join(', ');
      const from = `(SELECT r.seq AS __gds_seq${projection ? `, ${projection}` : ''}
                       FROM gds.records r WHERE r.table_id = ${params.add(table.id)}) AS b`;
      return rowsCte(from, present, naturalOrder(table, present, 'b.__gds_seq'), options, params);
    },
  };
}

/**
 * The natural order rows are numbered in: the grain key columns when declared, else the physical
 * order (ctid for a Mode A table, insertion order for Mode B), else (a view) every column.
 */
function naturalOrder(table: GateTable, present: string[], physical: string | null): string {
  const keys = table.grainKeyColumns.filter((k) => present.includes(k));
  if (keys.length > 0 && keys.length === table.grainKeyColumns.length) {
    return [...keys.map((k) => `b.${quoteIdent(k)}`), ...(physical ? [physical] : [])].join(', ');
  }
  return physical ?? present.map((c) => `b.${quoteIdent(c)}`).join(', ');
}

function rowsCte(
  from: string,
  present: string[],
  order: string,
  options: RowsOptions,
  params: Params,
): string {
  const columns = present.map(quoteIdent).join(', ') || 'NULL AS __gds_none';
  if (!options.sample) return `WITH gate_rows AS (SELECT ${columns} FROM ${from})`;
  const filter = sampleFilter(
    options.sample,
    options.seed ?? '',
    params.add,
    `(SELECT count(*) FROM ${from})`,
  );
  return `WITH src AS (
      SELECT ${present.map((c) => `b.${quoteIdent(c)}`).join(', ') || 'NULL AS __gds_none'},
             row_number() OVER (ORDER BY ${order || 'true'}) AS __gds_ord, count(*) OVER () AS __gds_total
        FROM ${from}),
    gate_rows AS (SELECT ${columns} FROM src ${filter})`;
}
