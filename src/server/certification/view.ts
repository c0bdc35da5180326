// The certified projection (§1): a plain SQL view `certified_<env>.<table>` over the registered
// columns, published on certification. Mode A reads the warehouse object; Mode B reads its records.
// Workspaces share one database, so the schema is named within the workspace's warehouse namespace:
// `<prefix>certified_<env>` (the first workspace's prefix is empty, a later one's e.g. `globex_`).
import type { Queryable } from '../db/index.js';
import { HttpError } from '../errors.js';
import type { Column, ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource } from '../warehouse.js';

export interface ViewSource {
  id: string;
  workspaceId: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  environmentLabel: string;
  source: string | null;
  columns: Column[];
}

/** The schema of the workspace's certified views in this environment. */
export async function certifiedSchema(
  q: Queryable,
  workspaceId: string,
  environmentLabel: string,
): Promise<string> {
  const [workspace] = await q.query<{ warehouse_prefix: string }>(
    'SELECT warehouse_prefix FROM gds.workspaces WHERE id = $1',
    [workspaceId],
  );
  if (!workspace) throw new Error(`no workspace ${workspaceId}`);
  return `${workspace.warehouse_prefix}certified_${environmentLabel}`;
}

/** `schema.table` of the table's certified view (published or not). */
export async function certifiedViewName(
  q: Queryable,
  table: Pick<ViewSource, 'workspaceId' | 'name' | 'environmentLabel'>,
): Promise<string> {
  return `${await certifiedSchema(q, table.workspaceId, table.environmentLabel)}.${table.name}`;
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
  table: Pick<ViewSource, 'workspaceId' | 'name' | 'environmentLabel'>,
): Promise<void> {
  const schema = await certifiedSchema(q, table.workspaceId, table.environmentLabel);
  await q.exec(`DROP VIEW IF EXISTS ${quoteIdent(schema)}.${quoteIdent(table.name)}`);
}

/** Creates (or replaces) the certified view; returns its qualified name, `schema.table`. */
export async function publishCertifiedView(q: Queryable, table: ViewSource): Promise<string> {
  const schema = await certifiedSchema(q, table.workspaceId, table.environmentLabel);
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
