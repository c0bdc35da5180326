// The certified projection (§1): a plain SQL view `certified_<env>.<table>` over the registered
// columns, published on certification. Mode A reads the warehouse object; Mode B reads its records.
import type { Queryable } from '../db/index.js';
import { HttpError } from '../errors.js';
import type { Column, ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource } from '../warehouse.js';

export interface ViewSource {
  id: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  environmentLabel: string;
  source: string | null;
  columns: Column[];
}

export function certifiedSchema(environmentLabel: string): string {
  return `certified_${environmentLabel}`;
}

const CAST: Record<ColumnType, string> = {
  text: 'text',
  integer: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
};

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

function selectOf(table: ViewSource): string {
  if (table.mode === 'MODE_A') {
    if (!table.source) throw new Error(`Mode A table ${table.id} has no source`);
    return `SELECT ${table.columns.map((c) => quoteIdent(c.name)).join(', ')} FROM ${quoteSource(table.source)}`;
  }
  const columns = table.columns.map(
    (c) => `(data->>${literal(c.name)})::${CAST[c.type]} AS ${quoteIdent(c.name)}`,
  );
  return `SELECT ${['id', ...columns].join(', ')} FROM gds.records WHERE table_id = ${literal(table.id)}`;
}

/** Drops the table's certified view, if published: the table is no longer certified under that name. */
export async function dropCertifiedView(
  q: Queryable,
  table: Pick<ViewSource, 'name' | 'environmentLabel'>,
): Promise<void> {
  const schema = certifiedSchema(table.environmentLabel);
  await q.exec(`DROP VIEW IF EXISTS ${quoteIdent(schema)}.${quoteIdent(table.name)}`);
}

/** Creates (or replaces) the certified view; returns its qualified name, `schema.table`. */
export async function publishCertifiedView(q: Queryable, table: ViewSource): Promise<string> {
  const schema = certifiedSchema(table.environmentLabel);
  const view = `${quoteIdent(schema)}.${quoteIdent(table.name)}`;
  const select = selectOf(table);
  await q.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
  // CREATE OR REPLACE cannot drop or rename columns: a definition whose columns changed replaces the view.
  const existing = await q.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2
      ORDER BY ordinal_position`,
    [schema, table.name],
  );
  const wanted = [...(table.mode === 'MODE_B' ? ['id'] : []), ...table.columns.map((c) => c.name)];
  if (existing.length > 0 && existing.map((c) => c.column_name).join('\0') !== wanted.join('\0')) {
    await q.exec(`DROP VIEW IF EXISTS ${view}`);
  }
  try {
    await q.exec(`CREATE OR REPLACE VIEW ${view} AS ${select}`);
  } catch (error) {
    throw new HttpError(
      422,
      'view_publish_failed',
      `The certified view ${schema}.${table.name} could not be published: ${(error as Error).message}`,
      { view: `${schema}.${table.name}` },
    );
  }
  return `${schema}.${table.name}`;
}
