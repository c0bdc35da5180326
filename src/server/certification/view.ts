// The certified projection (§1): a plain SQL view `certified_<env>.<table>` over the registered
// columns, published on certification. Mode A reads the warehouse object; Mode B reads its records.
// Workspaces share one database, so the schema is named within the workspace's warehouse namespace:
// `<prefix>certified_<env>` (the first workspace's prefix is empty, a later one's e.g. `globex_`).
import { recordAudit } from '../audit.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/index.js';
import { HttpError } from '../errors.js';
import type { Column, ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';

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
    // The contract version the view serves, for status to report (see certifiedViewStatus).
    const [latest] = await q.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM gds.contract_versions WHERE table_id = $1',
      [table.id],
    );
    const served = latest?.version ?? null;
    await q.exec(
      `COMMENT ON VIEW ${view} IS ${literal(`${VIEW_COMMENT} ${table.id}${served === null ? '' : ` v${served}`}`)}`,
    );
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

const VIEW_COMMENT = 'gds certified view of';

/** What a CERTIFIED table's view looks like in the warehouse (status, recertify). */
export interface CertifiedViewStatus {
  /** `schema.table`. */
  name: string;
  /**
   * As the call found it: `published`: there, with the certified columns; `missing`: not there;
   * `columns_differ`: there, other columns.
   */
  health: 'published' | 'missing' | 'columns_differ';
  /** The contract version the view serves (null when there is none, or it is not known). */
  version: number | null;
  /** True when this call found it missing and published it again (the relation still has the columns). */
  republished: boolean;
  detail: string;
}

/** The certified view's columns in order and its comment; null when there is no such view. */
async function readView(
  q: Queryable,
  schema: string,
  name: string,
): Promise<{ columns: string[]; comment: string | null } | null> {
  const rows = await q.query<{ column: string | null; comment: string | null }>(
    `SELECT a.attname AS column, obj_description(c.oid, 'pg_class') AS comment
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'v'
      ORDER BY a.attnum`,
    [schema, name],
  );
  if (rows.length === 0) return null;
  return {
    columns: rows.flatMap((r) => (r.column === null ? [] : [r.column])),
    comment: rows[0]?.comment ?? null,
  };
}

const wantedColumns = (table: ViewSource) => [
  ...(table.mode === 'MODE_B' ? ['id'] : []),
  ...table.columns.map((c) => c.name),
];

/** The health of a CERTIFIED table's view, as it is now. */
export async function certifiedViewStatus(q: Queryable, table: ViewSource): Promise<CertifiedViewStatus> {
  const schema = await certifiedSchema(q, table.workspaceId, table.environmentLabel);
  const name = `${schema}.${table.name}`;
  const view = await readView(q, schema, table.name);
  if (view === null) {
    return { name, health: 'missing', version: null, republished: false, detail: `${name} does not exist.` };
  }
  const served = new RegExp(`^${VIEW_COMMENT} ${table.id}(?: v(\\d+))?$`).exec(view.comment ?? '');
  const version = served?.[1] === undefined ? null : Number(served[1]);
  const wanted = wantedColumns(table);
  if (view.columns.join('\0') !== wanted.join('\0')) {
    return {
      name,
      health: 'columns_differ',
      version,
      republished: false,
      detail: `${name} has the columns (${view.columns.join(', ')}); the certified version has (${wanted.join(', ')}).`,
    };
  }
  return {
    name,
    health: 'published',
    version,
    republished: false,
    detail: `${name} serves ${version === null ? 'the certified version' : `v${version}`}.`,
  };
}

/**
 * A CERTIFIED table's view, published again when it is missing (a warehouse rebuild dropped it with
 * `drop … cascade`) and the relation still has the certified columns: the certified version's columns
 * over the current relation. Otherwise the status says why it stays missing. Null when the table is no
 * longer CERTIFIED. `q` is a transaction.
 */
export async function repairCertifiedView(
  q: Queryable,
  table: ViewSource,
  audit: { clock: Clock; userId: string | null; via: string },
): Promise<CertifiedViewStatus | null> {
  const seen = await certifiedViewStatus(q, table);
  if (seen.health !== 'missing') return seen;
  // Under the table's row lock: a submission or replacement moving it out of CERTIFIED (which drops the
  // view) either committed already, and nothing is published, or waits for this transaction, and drops it.
  const [row] = await q.query<{ state: string }>(
    'SELECT state FROM gds.tables WHERE id = $1 AND active FOR UPDATE',
    [table.id],
  );
  if (row?.state !== 'CERTIFIED') return null;
  const status = await certifiedViewStatus(q, table);
  if (status.health !== 'missing') return status;
  if (table.mode === 'MODE_A') {
    const missing = await missingSourceColumns(q, table);
    if (missing === null) {
      return {
        ...status,
        detail: `${status.name} is missing and cannot be published again: the warehouse object ${table.source ?? ''} does not exist.`,
      };
    }
    if (missing.length > 0) {
      return {
        ...status,
        detail: `${status.name} is missing and cannot be published again: ${table.source ?? ''} no longer has the certified column${missing.length === 1 ? '' : 's'} ${missing.join(', ')}. Push the definition again and certify it.`,
      };
    }
  }
  await publishCertifiedView(q, table);
  const published = await certifiedViewStatus(q, table);
  await recordAudit(q, audit.clock, {
    workspaceId: table.workspaceId,
    userId: audit.userId,
    tableId: table.id,
    action: 'CERTIFIED_VIEW_REPUBLISHED',
    resource: 'certified_view',
    environmentLabel: table.environmentLabel,
    details: { view: published.name, version: published.version, via: audit.via },
  });
  // The health is what the call found (missing); republished says it is there again now.
  return {
    ...published,
    health: 'missing',
    republished: true,
    detail: `${published.name} was missing (the warehouse object was rebuilt) and is published again over ${table.mode === 'MODE_A' ? (table.source ?? '') : 'the service rows'}.`,
  };
}

/** The certified columns the table's warehouse object lacks; null when the object does not exist. */
async function missingSourceColumns(q: Queryable, table: ViewSource): Promise<string[] | null> {
  const [schema, name] = splitSource(table.source ?? '');
  const rows = await q.query<{ name: string }>(
    `SELECT a.attname AS name
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relname = $2`,
    [schema, name],
  );
  if (rows.length === 0) return null;
  const have = new Set(rows.map((r) => r.name));
  return table.columns.map((c) => c.name).filter((c) => !have.has(c));
}
