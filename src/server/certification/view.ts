// The certified projection (§1): a plain SQL view `certified_<env>.<table>` over the registered
// columns, published on certification. Mode A reads the warehouse object; Mode B reads its records.
// Workspaces share one database, so the schema is named within the workspace's warehouse namespace:
// `<prefix>certified_<env>` (the first workspace's prefix is empty, a later one's e.g. `globex_`).
import { recordAudits } from '../audit.js';
import { fileRecertificationRequests } from '../governance/engine.js';
import { certifiedSchema } from './view-name.js';
import type { ViewSource } from './view-name.js';
import { getWorkspaceConfig } from './config.js';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/handle.js';
import { HttpError } from '../errors.js';
import type { ColumnType } from '../records/columns.js';
import { quoteIdent, quoteSource, splitSource } from '../warehouse.js';

const CAST: Record<ColumnType, string> = {
  text: 'text',
  integer: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
};

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * A Mode B record's value as its column's type. A timestamp written without a zone (`2026-03-01T10:00:00`) is a
 * time at UTC, as the gates read it (their transactions are in UTC), whatever TimeZone the session reading the
 * view has: else each reader would get it in their own zone, and not the time the checks passed. A value with a
 * zone (`Z`, `+01:00`, `UTC`) has a character past its day other than a digit, `:`, `.`, `T` or a space.
 */
function recordValue(name: string, type: ColumnType): string {
  const text = `(data->>${literal(name)})`;
  if (type !== 'timestamp') return `${text}::${CAST[type]}`;
  return `CASE WHEN substr(${text}, 11) ~ ${literal(ZONE_TEST)} THEN ${text}::timestamptz
    ELSE ${text}::timestamp AT TIME ZONE 'UTC' END`;
}

/** What a timestamp with a zone has past its day; a view whose definition lacks it reads none at UTC. */
const ZONE_TEST = '[^0-9:. T]';

function selectOf(table: ViewSource): string {
  if (table.mode === 'MODE_A') {
    if (!table.source) throw new Error(`Mode A table ${table.id} has no source`);
    return `SELECT ${table.columns.map((c) => quoteIdent(c.name)).join(', ')} FROM ${quoteSource(table.source)}`;
  }
  const columns = table.columns.map((c) => `${recordValue(c.name, c.type)} AS ${quoteIdent(c.name)}`);
  return `SELECT ${['id', ...columns].join(', ')} FROM gds.records WHERE table_id = ${literal(table.id)}`;
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
  /**
   * When a rebuild of the relation was first found (the open `rebuild` recertification request): the rows
   * have not been gated since. Null when none is open.
   */
  ungatedSince?: string | null;
}

type ViewSeen = { columns: string[]; comment: string | null };

/**
 * The certified views of `wanted` (schema, name pairs) with their columns in order and their comments, in one
 * catalog read whatever their number; a view that does not exist is absent from the map (key `schema\0name`).
 */
async function readViews(
  q: Queryable,
  wanted: ReadonlyArray<readonly [schema: string, name: string]>,
): Promise<Map<string, ViewSeen>> {
  const views = new Map<string, ViewSeen>();
  if (wanted.length === 0) return views;
  const rows = await q.query<{ schema: string; name: string; column: string | null; comment: string | null }>(
    `SELECT n.nspname AS schema, c.relname AS name, a.attname AS column,
            obj_description(c.oid, 'pg_class') AS comment
       FROM unnest($1::text[], $2::text[]) AS w(schema, name)
       JOIN pg_catalog.pg_namespace n ON n.nspname = w.schema
       JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = w.name AND c.relkind = 'v'
       LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY n.nspname, c.relname, a.attnum`,
    [wanted.map(([schema]) => schema), wanted.map(([, name]) => name)],
  );
  for (const row of rows) {
    const key = `${row.schema}\0${row.name}`;
    const view = views.get(key) ?? { columns: [], comment: row.comment };
    if (row.column !== null) view.columns.push(row.column);
    views.set(key, view);
  }
  return views;
}

const wantedColumns = (table: ViewSource) => [
  ...(table.mode === 'MODE_B' ? ['id'] : []),
  ...table.columns.map((c) => c.name),
];

/** The health of a view as `readViews` saw it (`view` undefined: there is none). */
function healthOf(table: ViewSource, schema: string, view: ViewSeen | undefined): CertifiedViewStatus {
  const name = `${schema}.${table.name}`;
  if (view === undefined) {
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

/** The schema of each table's certified view, by table id: one read of the workspaces whatever their number. */
async function certifiedSchemas(q: Queryable, tables: readonly ViewSource[]): Promise<Map<string, string>> {
  const workspaces = [...new Set(tables.map((t) => t.workspaceId))];
  const rows = await q.query<{ id: string; warehouse_prefix: string }>(
    'SELECT id, warehouse_prefix FROM gds.workspaces WHERE id = ANY($1::text[])',
    [workspaces],
  );
  const prefix = new Map(rows.map((r) => [r.id, r.warehouse_prefix]));
  return new Map(
    tables.map((t) => {
      const of = prefix.get(t.workspaceId);
      if (of === undefined) throw new Error(`no workspace ${t.workspaceId}`);
      return [t.id, `${of}certified_${t.environmentLabel}`];
    }),
  );
}

/** The health of each table's view as it is now, by table id, in two reads whatever their number. */
async function viewHealths(
  q: Queryable,
  tables: readonly ViewSource[],
): Promise<Map<string, CertifiedViewStatus>> {
  const schemas = await certifiedSchemas(q, tables);
  const schemaOf = (t: ViewSource) => schemas.get(t.id) ?? '';
  const views = await readViews(
    q,
    tables.map((t) => [schemaOf(t), t.name]),
  );
  return new Map(tables.map((t) => [t.id, healthOf(t, schemaOf(t), views.get(`${schemaOf(t)}\0${t.name}`))]));
}

/** The health of a CERTIFIED table's view, as it is now. */
export async function certifiedViewStatus(q: Queryable, table: ViewSource): Promise<CertifiedViewStatus> {
  return (await viewHealths(q, [table])).get(table.id) as CertifiedViewStatus;
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
  return (await repairCertifiedViews(q, [table], audit)).get(table.id) ?? null;
}

/**
 * `repairCertifiedView` of many tables at once (a signal of a whole dbt run): the catalog is read, the rows
 * locked and the views published in a handful of statements whatever the number of tables, so a view costs
 * its DDL, not a dozen round trips. By table id; a table no longer CERTIFIED is absent.
 */
export async function repairCertifiedViews(
  q: Queryable,
  tables: readonly ViewSource[],
  audit: { clock: Clock; userId: string | null; via: string },
): Promise<Map<string, CertifiedViewStatus>> {
  const result = await viewHealths(q, tables);
  const missing = tables.filter((t) => result.get(t.id)?.health === 'missing');
  if (missing.length > 0) await repairMissing(q, missing, result, audit);
  const rebuilt = await q.query<{ table_id: string; created_at: Date | string }>(
    `SELECT table_id, created_at FROM gds.recertification_requests
      WHERE table_id = ANY($1::text[]) AND cause = 'rebuild' AND status = 'OPEN'`,
    [[...result.keys()]],
  );
  const since = new Map(rebuilt.map((r) => [r.table_id, new Date(r.created_at).toISOString()]));
  for (const [id, status] of result) result.set(id, { ...status, ungatedSince: since.get(id) ?? null });
  return result;
}

/** The part of `repairCertifiedViews` for the views found missing: `result` is updated in place. */
async function repairMissing(
  q: Queryable,
  missing: readonly ViewSource[],
  result: Map<string, CertifiedViewStatus>,
  audit: { clock: Clock; userId: string | null; via: string },
): Promise<void> {
  // Under the tables' row locks: a submission or replacement moving one out of CERTIFIED (which drops the
  // view) either committed already, and nothing is published, or waits for this transaction, and drops it.
  const locked = await q.query<{ id: string; state: string }>(
    'SELECT id, state FROM gds.tables WHERE id = ANY($1::text[]) AND active ORDER BY id FOR UPDATE',
    [missing.map((t) => t.id)],
  );
  const certified = new Set(locked.filter((r) => r.state === 'CERTIFIED').map((r) => r.id));
  for (const t of missing) if (!certified.has(t.id)) result.delete(t.id);
  const again = await viewHealths(
    q,
    missing.filter((t) => certified.has(t.id)),
  );
  const lacking = await missingSourceColumns(
    q,
    missing.filter((t) => t.mode === 'MODE_A'),
  );
  const byId = new Map(missing.map((t) => [t.id, t]));
  const publish: ViewSource[] = [];
  for (const [id, status] of again) {
    result.set(id, status);
    if (status.health !== 'missing') continue;
    const table = byId.get(id) as ViewSource;
    const absent = table.mode === 'MODE_A' ? lacking.get(table.id) : [];
    if (absent === null) {
      result.set(id, {
        ...status,
        detail: `${status.name} is missing and cannot be published again: the warehouse object ${table.source ?? ''} does not exist.`,
      });
    } else if (absent !== undefined && absent.length > 0) {
      result.set(id, {
        ...status,
        detail: `${status.name} is missing and cannot be published again: ${table.source ?? ''} no longer has the certified column${absent.length === 1 ? '' : 's'} ${absent.join(', ')}. Push the definition again and certify it.`,
      });
    } else {
      publish.push(table);
    }
  }
  // A rebuild is not a certification: each rebuilt relation files a request (cause rebuild) whether or not
  // its view is published again, which the workspace decides. A recertification signal files its own
  // (ingest or drift) for the same rebuild.
  await fileRecertificationRequests(
    q,
    audit.clock,
    (audit.via === 'recertify' ? [] : publish).map((table) => ({
      tableId: table.id,
      cause: 'rebuild' as const,
      details: { view: (again.get(table.id) as CertifiedViewStatus).name, via: audit.via },
      actor: { userId: audit.userId },
    })),
  );
  const withheld = new Set<string>();
  for (const workspaceId of new Set(publish.map((t) => t.workspaceId))) {
    if ((await getWorkspaceConfig(q, workspaceId)).certifiedViewAfterRebuild !== 'withhold') continue;
    for (const t of publish) if (t.workspaceId === workspaceId) withheld.add(t.id);
  }
  for (const id of withheld) {
    const status = again.get(id) as CertifiedViewStatus;
    result.set(id, {
      ...status,
      detail: `${status.name} is missing (the warehouse object was rebuilt) and is withheld until the table is certified again (workspace setting certified_view_after_rebuild: withhold).`,
    });
  }
  publish.splice(0, publish.length, ...publish.filter((t) => !withheld.has(t.id)));
  const versions = await publishMissingViews(q, publish);
  await recordAudits(
    q,
    audit.clock,
    publish.map((table) => ({
      workspaceId: table.workspaceId,
      userId: audit.userId,
      tableId: table.id,
      action: 'CERTIFIED_VIEW_REPUBLISHED',
      resource: 'certified_view',
      environmentLabel: table.environmentLabel,
      details: {
        view: (again.get(table.id) as CertifiedViewStatus).name,
        version: versions.get(table.id) ?? null,
        via: audit.via,
      },
    })),
  );
  for (const table of publish) {
    const published = (again.get(table.id) as CertifiedViewStatus).name;
    const version = versions.get(table.id) ?? null;
    // The health is what the call found (missing); republished says it is there again now.
    result.set(table.id, {
      name: published,
      health: 'missing',
      version,
      republished: true,
      detail: `${published} was missing (the warehouse object was rebuilt) and is published again over ${table.mode === 'MODE_A' ? (table.source ?? '') : 'the service rows'}.`,
    });
  }
}

/**
 * Publishes the views of `tables`, none of which exists now, in one script of DDL; returns the contract
 * version each serves (absent when the table has none).
 */
async function publishMissingViews(
  q: Queryable,
  tables: readonly ViewSource[],
): Promise<Map<string, number>> {
  if (tables.length === 0) return new Map();
  const schemas = await certifiedSchemas(q, tables);
  const rows = await q.query<{ table_id: string; version: number | null }>(
    `SELECT table_id, max(version) AS version FROM gds.contract_versions
      WHERE table_id = ANY($1::text[]) GROUP BY table_id`,
    [tables.map((t) => t.id)],
  );
  const versions = new Map(
    rows.flatMap((r) => (r.version === null ? [] : [[r.table_id, Number(r.version)]])),
  );
  const script = [...new Set(schemas.values())].map((s) => `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(s)};`);
  for (const table of tables) {
    const view = `${quoteIdent(schemas.get(table.id) ?? '')}.${quoteIdent(table.name)}`;
    const served = versions.get(table.id);
    script.push(
      `CREATE OR REPLACE VIEW ${view} AS ${selectOf(table)};`,
      `COMMENT ON VIEW ${view} IS ${literal(`${VIEW_COMMENT} ${table.id}${served === undefined ? '' : ` v${served}`}`)};`,
    );
  }
  try {
    await q.exec(script.join('\n'));
  } catch (error) {
    const names = tables.map((t) => `${schemas.get(t.id) ?? ''}.${t.name}`);
    throw new HttpError(
      422,
      'view_publish_failed',
      `The certified view${names.length === 1 ? '' : 's'} ${names.slice(0, 10).join(', ')}${names.length > 10 ? ` and ${names.length - 10} more` : ''} could not be published: ${(error as Error).message}`,
      names.length === 1 ? { view: names[0] } : { views: names },
    );
  }
  return versions;
}

/**
 * The certified columns each Mode A table's warehouse object lacks, by table id (null when the object does not
 * exist), in one catalog read whatever their number.
 */
async function missingSourceColumns(
  q: Queryable,
  tables: readonly ViewSource[],
): Promise<Map<string, string[] | null>> {
  if (tables.length === 0) return new Map();
  const sources = tables.map((t) => splitSource(t.source ?? ''));
  const rows = await q.query<{ schema: string; object: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS object, a.attname AS name
       FROM (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS w(schema, object)) w
       JOIN pg_catalog.pg_namespace n ON n.nspname = w.schema
       JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = w.object
       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped`,
    [sources.map(([schema]) => schema), sources.map(([, object]) => object)],
  );
  const have = new Map<string, Set<string>>();
  for (const row of rows) {
    const key = `${row.schema}\0${row.object}`;
    const columns = have.get(key) ?? new Set<string>();
    columns.add(row.name);
    have.set(key, columns);
  }
  return new Map(
    tables.map((t, i) => {
      const [schema, object] = sources[i] as [string, string];
      const columns = have.get(`${schema}\0${object}`);
      return [
        t.id,
        columns === undefined ? null : t.columns.map((c) => c.name).filter((c) => !columns.has(c)),
      ];
    }),
  );
}

/**
 * Mode B certified views published before their timestamps written without a zone read at UTC (b129f47e) read
 * such a timestamp in the zone of whoever reads them until the table is certified again. At start-up each is
 * replaced in place by today's form, over the same columns of the same types, so its grants, comment (the
 * version served) and the views built on it stay. Only a view found published with the certified columns and
 * without the zone test is touched, and each under its table's row lock, which a certification or a move out of
 * CERTIFIED takes too. A view locked past `lockTimeoutMs` (a long read of it), or one PostgreSQL will not replace,
 * keeps its form until the next start or certification, said by `warn`. The start that leaves none ends the
 * task (filed by migration 78): a later start reads that row only, not every certified view.
 * Answers the views replaced, `schema.table`.
 */
export async function upgradeZonelessViews(
  db: Db,
  clock: Clock,
  lockTimeoutMs = 5_000,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string[]> {
  const [task] = await db.query(`SELECT 1 FROM gds.start_up_tasks WHERE name = '${ZONELESS_VIEWS_TASK}'`);
  if (task === undefined) return [];
  const upgraded: string[] = [];
  let left = false;
  const views = await zonelessViews(db);
  for (let start = 0; start < views.length; start += REPLACED_AT_ONCE) {
    const batch = views.slice(start, start + REPLACED_AT_ONCE);
    if (batch.length > 1) {
      try {
        upgraded.push(...(await replaceZonelessViews(db, clock, batch, lockTimeoutMs)));
        continue;
      } catch {
        // One view of the batch failed it (held by a read, or refused): each is tried alone, to say which.
      }
    }
    for (const view of batch) {
      try {
        upgraded.push(...(await replaceZonelessViews(db, clock, [view], lockTimeoutMs)));
      } catch (error) {
        const { id, table, name: viewName, version } = view;
        if (mayPassLater(error)) {
          left = true;
          warn(
            `certified view of table ${id}: not republished to read timestamps written without a zone at UTC (${(error as Error).message}); it reads them in its reader's zone until the next start or certification`,
          );
          continue;
        }
        // PostgreSQL refuses to replace it (its columns' types changed by hand, say): no later start would do
        // better, so it is given up, said and audited, and does not keep the task (a scan of every certified
        // view at each start) alive. Its next certification publishes it in today's form.
        warn(
          `certified view ${viewName} of table ${id}: given up, PostgreSQL will not replace it (${(error as Error).message}); it reads timestamps written without a zone in its reader's zone until the table is certified again, and later starts no longer try`,
        );
        await recordAudits(db, clock, [
          {
            workspaceId: table.workspaceId,
            userId: null,
            tableId: id,
            action: 'CERTIFIED_VIEW_REPUBLISH_GIVEN_UP',
            resource: 'certified_view',
            environmentLabel: table.environmentLabel,
            details: { view: viewName, version, via: 'start-up', error: (error as Error).message },
          },
        ]);
      }
    }
  }
  if (!left) await db.query(`DELETE FROM gds.start_up_tasks WHERE name = '${ZONELESS_VIEWS_TASK}'`);
  return upgraded;
}

/**
 * Views a start replaces in one transaction: one lock wait, one DDL round trip and one audit insert for them
 * all, not a transaction each (the commit message of this constant's change has the figures).
 */
const REPLACED_AT_ONCE = 100;

/**
 * Replaces `views` (found of the old form) by today's form in one transaction, each still of the old form under
 * its table's row lock, and records each; answers the views replaced. Throws when any cannot be replaced: the
 * transaction replaces none then.
 */
async function replaceZonelessViews(
  db: Db,
  clock: Clock,
  views: readonly ZonelessView[],
  lockTimeoutMs: number,
): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
    const found = await zonelessViews(
      tx,
      views.map((v) => v.id),
    );
    if (found.length === 0) return [];
    await tx.exec(found.map((f) => `CREATE OR REPLACE VIEW ${f.view} AS ${selectOf(f.table)};`).join('\n'));
    await recordAudits(
      tx,
      clock,
      found.map((f) => ({
        workspaceId: f.table.workspaceId,
        userId: null,
        tableId: f.id,
        action: 'CERTIFIED_VIEW_REPUBLISHED',
        resource: 'certified_view',
        environmentLabel: f.table.environmentLabel,
        details: { view: f.name, version: f.version, via: 'start-up', timestampsWithoutZone: 'UTC' },
      })),
    );
    return found.map((f) => f.name);
  });
}

/**
 * Whether a failed replacement may pass at a later start. Only PostgreSQL refusing the view's new definition (a
 * class 42 error, its columns' types changed by hand say, or 0A, a feature it lacks) is for good; a permission
 * not granted yet (42501), a lock not granted in time, a cancel or timeout, a deadlock, a lost connection, a full
 * disk or short memory (53), an I/O or internal error (58, XX), or no SQLSTATE at all may pass, and giving the
 * view up on them would leave a certified view stale until its next certification.
 */
function mayPassLater(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return true;
  if (code === '42501') return true;
  return !(code.startsWith('42') || code.startsWith('0A'));
}

/** The row of gds.start_up_tasks that stays while a certified view of the old form may be left. */
const ZONELESS_VIEWS_TASK = 'zoneless_certified_views';

type ZonelessView = { id: string; table: ViewSource; view: string; name: string; version: number | null };

/**
 * The CERTIFIED Mode B tables with a timestamp column whose view is published with their columns and without the
 * zone test: every one, or those of `ids`, their rows locked until the transaction ends.
 */
async function zonelessViews(q: Queryable, ids?: readonly string[]): Promise<ZonelessView[]> {
  const rows = await q.query<{
    id: string;
    workspace_id: string;
    name: string;
    environment_label: string;
    columns: ViewSource['columns'];
  }>(
    `SELECT id, workspace_id, name, environment_label, columns FROM gds.tables
      WHERE active AND state = 'CERTIFIED' AND mode = 'MODE_B' AND columns @> '[{"type": "timestamp"}]'
        AND ($1::text[] IS NULL OR id = ANY($1::text[])) ORDER BY id ${ids === undefined ? '' : 'FOR UPDATE'}`,
    [ids === undefined ? null : [...ids]],
  );
  const tables = rows.map((t): ViewSource => ({
    id: t.id,
    workspaceId: t.workspace_id,
    name: t.name,
    mode: 'MODE_B',
    environmentLabel: t.environment_label,
    source: null,
    columns: t.columns,
  }));
  if (tables.length === 0) return [];
  const [healths, schemas] = [await viewHealths(q, tables), await certifiedSchemas(q, tables)];
  const published: ZonelessView[] = tables.flatMap((table) => {
    const health = healths.get(table.id);
    if (health?.health !== 'published') return [];
    const view = `${quoteIdent(schemas.get(table.id) ?? '')}.${quoteIdent(table.name)}`;
    return [{ id: table.id, table, view, name: health.name, version: health.version }];
  });
  const old = await q.query<{ id: string }>(
    `SELECT v.id FROM unnest($1::text[], $2::text[]) AS v(id, view)
      WHERE strpos(pg_catalog.pg_get_viewdef(to_regclass(v.view)), $3) = 0`,
    [published.map((v) => v.id), published.map((v) => v.view), ZONE_TEST],
  );
  const oldForm = new Set(old.map((r) => r.id));
  return published.filter((v) => oldForm.has(v.id));
}
