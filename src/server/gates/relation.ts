// The rows a gate reads, as SQL: a Mode A table's warehouse object (the connector's schema and the
// table's source), or a Mode B table's own rows projected from gds.records as typed columns. Every
// check is `WITH gate_rows AS (…) SELECT … FROM gate_rows`, so checks see exactly the registered
// columns (by their names) and nothing else.
import type { Queryable } from '../db/handle.js';
import type { ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import type { RowsSource, SampleSpec } from './sample.js';
import { drawSample } from './sample.js';
import { Params } from './params.js';
import type { GateTable } from './table.js';

export { Params } from './params.js';

// A Mode B timestamp without a zone is read at UTC by the gate transaction's TimeZone (read-only.ts); the
// certified view spells that out (certification/view.ts recordValue), whatever its reader's zone.
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
  /**
   * With a sample: draws it once into a temporary table (before the transaction turns read-only), which
   * every check's gate_rows then reads; returns how it was drawn (the cost). Absent without a sample.
   */
  drawSample?: (tx: Queryable) => Promise<string>;
  /** How the sample was drawn, once it was (for the proof). */
  sampleMethod?: string;
}

export interface RowsOptions {
  sample?: SampleSpec;
  seed?: string;
  /**
   * The sample, drawn elsewhere (on PGlite: in the service's database, then copied into a sandbox): the
   * table holding its rows (the registered columns present) and how it was drawn. The checks read it as
   * they read a sample drawn here; nothing is drawn again.
   */
  drawn?: DrawnSample;
}

export interface DrawnSample {
  from: string;
  method: string;
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
  // A sample by a grain key that a unique btree index orders (NOT NULL columns) reads it through the index.
  const keyIndexed =
    options.sample !== undefined &&
    physical &&
    hasGrainKey(table, present) &&
    (await uniqueKeyIndex(q, source, table.grainKeyColumns));
  const rows: RowsSource = {
    from: `${quoteSource(source)} AS b`,
    present,
    order: keyIndexed
      ? table.grainKeyColumns.map((k) => `b.${quoteIdent(k)}`)
      : naturalOrder(table, present, physical ? 'b.ctid' : null),
    ...(keyIndexed ? { keyIndexed } : {}),
    storageOrdered: physical && !hasGrainKey(table, present),
    ...(physical ? { sampleable: quoteSource(source), identity: 'b.ctid::text' } : { identity: 'b::text' }),
  };
  return {
    label: source,
    present,
    missing,
    warehouseColumns,
    exists: info.length > 0,
    ...sampledRows(rows, options),
  };
}

/**
 * Whether a valid unique btree index of `source` has exactly `columns`, in that order, all NOT NULL: the
 * rows are then ordered by those columns alone (no tie), and ORDER BY them LIMIT N reads N index entries.
 */
async function uniqueKeyIndex(q: Queryable, source: string, columns: string[]): Promise<boolean> {
  const [schema, name] = splitSource(source);
  const [found] = await q.query<{ found: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM pg_catalog.pg_index i
         JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
         JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
         JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_catalog.pg_am am ON am.oid = ic.relam
        WHERE n.nspname = $1 AND t.relname = $2 AND am.amname = 'btree'
          AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL
          AND i.indnkeyatts = cardinality($3::text[])
          AND (SELECT array_agg(a.attname::text ORDER BY k.ord) FILTER (WHERE a.attnotnull)
                 FROM unnest(i.indkey[0:i.indnkeyatts - 1]) WITH ORDINALITY AS k(attnum, ord)
                 JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum)
              = $3::text[]) AS found`,
    [schema, name, columns],
  );
  return found?.found === true;
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
    ...sampledRows((params) => {
      const projection = table.columns
        .map((c) => `(r.data ->> ${params.add(c.name)})::${PG_TYPE[c.type]} AS ${quoteIdent(c.name)}`)
        .join(', ');
      return {
        from: `(SELECT r.seq AS __gds_seq${projection ? `, ${projection}` : ''}
                    FROM gds.records r WHERE r.table_id = ${params.add(table.id)}) AS b`,
        present,
        // Insertion order is the records_by_seq index: read in order, no sort.
        order: naturalOrder(table, present, 'b.__gds_seq'),
        storageOrdered: false,
        identity: 'b.__gds_seq::text',
      };
    }, options),
  };
}

const hasGrainKey = (table: GateTable, present: string[]) =>
  table.grainKeyColumns.length > 0 && table.grainKeyColumns.every((k) => present.includes(k));

/**
 * The natural order rows are numbered in: the grain key columns when declared, else the physical
 * order (ctid for a Mode A table, insertion order for Mode B), else (a view) every column.
 */
function naturalOrder(table: GateTable, present: string[], physical: string | null): string[] {
  if (hasGrainKey(table, present)) {
    return [...table.grainKeyColumns.map((k) => `b.${quoteIdent(k)}`), ...(physical ? [physical] : [])];
  }
  return physical ? [physical] : present.map((c) => `b.${quoteIdent(c)}`);
}

/** Temporary table of one run's sample (dropped at the end of the run's transaction). */
export const SAMPLE_TABLE = 'pg_temp.__gds_gate_sample';

function sampledRows(
  source: RowsSource | ((params: Params) => RowsSource),
  options: RowsOptions,
): Pick<Relation, 'rowsCte' | 'drawSample' | 'sampleMethod'> {
  const build = typeof source === 'function' ? source : () => source;
  const { sample, drawn } = options;
  if (drawn) {
    return {
      rowsCte: () =>
        `WITH gate_rows AS (SELECT ${columnList(build(new Params()).present)} FROM ${drawn.from})`,
      sampleMethod: drawn.method,
    };
  }
  if (!sample) {
    return {
      rowsCte: (params) => {
        const rows = build(params);
        return `WITH gate_rows AS (SELECT ${columnList(rows.present)} FROM ${rows.from})`;
      },
    };
  }
  return {
    rowsCte: () =>
      `WITH gate_rows AS (SELECT ${columnList(build(new Params()).present)} FROM ${SAMPLE_TABLE})`,
    drawSample: (tx) => drawSample(tx, SAMPLE_TABLE, build, sample, options.seed ?? ''),
  };
}

function columnList(present: string[]): string {
  return present.map(quoteIdent).join(', ') || 'NULL AS __gds_none';
}
