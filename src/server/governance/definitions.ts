// Registering and replacing a Mode A definition (spec §4.7, `push`): parse the artifact, resolve its source
// on the connector's warehouse, check collisions through the lifecycle table, then carry out the effects
// (reconcile columns, file a recertification, enqueue the auto-baseline job).
import { checkIds, checkInput } from '../input-rule.js';
import type { ArtifactKind, GovernanceArtifact } from '../../core/artifacts/index.js';
import {
  definitionSummary,
  formatArtifactError,
  parseArtifact,
  resolveSource,
  sameDefinition,
} from '../../core/artifacts/index.js';
import { transition } from '../../core/lifecycle/index.js';
import { promotedName } from '../../core/promoted-name.js';
import { slugOf } from '../../core/table-slug.js';
import type { Effect, TransitionContext } from '../../core/lifecycle/index.js';
import { inEnvironmentScope } from '../certification/access.js';
import { isRole, roleAtLeast } from '../../core/scopes.js';
import type { Caller } from '../auth/caller.js';
import { getWorkspaceConfig } from '../certification/config.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/handle.js';
import { badRequest, forbidden, HttpError, isUniqueViolation, notFound } from '../errors.js';
import { newId } from '../ids.js';
import type { Column, ColumnType } from '../records/columns.js';
import { INTEGER_BYTES } from '../records/columns.js';
import { describeWarehouseObject, splitSource } from '../warehouse.js';
import { applyTrigger, fileRecertificationRequest, governedTransaction } from './engine.js';
import type { Job } from './jobs.js';
import { enqueueJob, recentJobs } from './jobs.js';
import { checkVersion } from './precondition.js';
import type { Query } from '../query.js';
import { stringParam } from '../query.js';
import type { TableRow } from './tables.js';
import { TABLE_COLUMNS, toTableRow } from './tables.js';
import { longerThan } from '../../core/text-bounds.js';

export const BASELINE_JOB = 'gate-baseline-auto';

export interface DefinitionInput {
  filename: string;
  content: string;
  /** Required on `POST /api/workspace/definitions`; on the CLI path the file name's extension may decide. */
  mimeType?: string;
  /** Required on `POST /api/workspace/definitions`; on the CLI path the source's schema may decide. */
  connectorId?: string;
  replaceId?: string;
  source?: string;
  /**
   * The project (`gds apply`) that registers or replaces the table: recorded on a new table; a replacement
   * of a table another project owns, or one registered without a project, is 409 `owned_elsewhere`.
   */
  project?: string;
  /** `If-Match` of a replacement: the definition version the client compared with (not a body field). */
  expectedVersion?: number;
}

/** The input with the request's `If-Match` version, when it carries one. */
export function withPrecondition(input: DefinitionInput, expected: number | undefined): DefinitionInput {
  return expected === undefined ? input : { ...input, expectedVersion: expected };
}

export interface ConnectorRow {
  id: string;
  name: string;
  type: string;
  status: string;
  environmentLabel: string;
  schema: string;
}

export interface RegistrationOutcome {
  status: 200 | 202;
  body: {
    governanceId: string;
    trackingUrl: string;
    job: { id: string; type: string; status: string };
    tableId: string;
    state: string;
    definitionVersion: number;
    columns?: { added: string[]; removed: string[] };
    changed?: boolean;
  };
}

const KINDS: readonly string[] = ['sql', 'yaml', 'json'];

/**
 * Reads the JSON body into a definition, 400 naming the first field that is missing or of the wrong type.
 * `definitionsEndpoint`: §4.7's body, where mimeType and connectorId are required; the CLI's push path
 * lets the file name give the type and the source's schema give the connector (`push [--connector]`).
 */
export function readDefinitionBody(body: unknown, definitionsEndpoint: boolean): DefinitionInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest(
      'invalid_request',
      'Send a JSON object with filename, content, mimeType and connectorId.',
    );
  }
  const fields = body as Record<string, unknown>;
  const allowed = ['filename', 'content', 'mimeType', 'connectorId', 'replaceId', 'source', 'project'];
  const unknown = Object.keys(fields).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw badRequest(
      'invalid_request',
      `Unknown fields: ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`,
      {
        unknown,
      },
    );
  }
  const text = (name: string, required: boolean, allowEmpty = false): string | undefined => {
    const value = fields[name];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'string' || (!allowEmpty && value.trim() === '')) {
      throw badRequest('invalid_request', `${name} is required and must be a non-empty string.`, {
        field: name,
      });
    }
    return value;
  };
  const input: DefinitionInput = {
    filename: text('filename', true) ?? '',
    content: text('content', true, true) ?? '',
  };
  checkInput(fields, 'body');
  const replaced = input.content.indexOf('\uFFFD');
  if (replaced >= 0) {
    // U+FFFD is what a decoder puts where the bytes were not UTF-8: the artifact was read as something else.
    throw badRequest(
      'artifact_not_utf8',
      `The artifact ${input.filename} is not UTF-8: it holds a replacement character (U+FFFD) at offset ${replaced}. Save it as UTF-8 and push again.`,
      { field: 'content', offset: replaced },
    );
  }
  const connectorId = text('connectorId', definitionsEndpoint);
  if (connectorId !== undefined) input.connectorId = connectorId;
  const mimeType = text('mimeType', definitionsEndpoint);
  const replaceId = text('replaceId', false);
  const source = text('source', false);
  if (mimeType !== undefined) {
    if (!KINDS.includes(mimeType))
      throw badRequest('unsupported_file_type', 'Unsupported file type', { mimeType });
    input.mimeType = mimeType;
  }
  if (replaceId !== undefined) input.replaceId = replaceId;
  if (source !== undefined) input.source = source;
  const project = text('project', false);
  if (project !== undefined) input.project = checkProjectId(project, 'project');
  return input;
}

/** The most a project id takes. */
export const MAX_PROJECT_ID = 200;

/** A project id as stored: 1-200 printable characters, no control characters; 400 naming `field` otherwise. */
export function checkProjectId(value: string, field: string): string {
  if (longerThan(value, MAX_PROJECT_ID) || /[\u0000-\u001f\u007f]/.test(value) || value.trim() !== value) {
    throw badRequest(
      'invalid_request',
      `${field} must be 1-${MAX_PROJECT_ID} characters without control characters or surrounding spaces.`,
      { field },
    );
  }
  return value;
}

/** 409 `owned_elsewhere`: `table` is not `project`'s (another project's, or registered without one). */
export function ownedElsewhere(table: Pick<TableRow, 'id' | 'name' | 'project'>, project: string): HttpError {
  const owner = table.project === null ? 'registered without a project' : `owned by project ${table.project}`;
  return new HttpError(
    409,
    'owned_elsewhere',
    `Table ${table.name} (${table.id}) is ${owner}, not by ${project}: adopt it first (gds apply --adopt ${table.name}).`,
    { tableId: table.id, project: table.project },
  );
}

/**
 * A write naming `project` (`gds apply`) goes only onto that project's table: 409 `owned_elsewhere` when `table`
 * is another project's or registered without one. Call it on the row the write holds locked, so that an
 * adoption committed meanwhile is seen. Nothing without a project (push, gate apply by hand).
 */
export function checkOwner(
  table: Pick<TableRow, 'id' | 'name' | 'project'>,
  project: string | undefined,
): void {
  if (project !== undefined && table.project !== project) throw ownedElsewhere(table, project);
}

/** `?project=` of a write: the project (`gds apply`) it is for, compared by checkOwner. */
export function projectParam(query: unknown): string | undefined {
  return stringParam((query ?? {}) as Query, 'project');
}

/** A connector of the workspace; 404 `Connector not found` for unknown ids and other workspaces' connectors. */
export async function loadConnector(
  q: Queryable,
  workspaceId: string,
  connectorId: string,
): Promise<ConnectorRow> {
  checkIds({ connectorId });
  const [row] = await q.query<ConnectorRow>(
    `SELECT id, name, type, status, environment_label AS "environmentLabel", warehouse_schema AS schema
       FROM gds.connectors WHERE id = $1 AND workspace_id = $2`,
    [connectorId, workspaceId],
  );
  if (!row) throw notFound('connector_not_found', 'Connector not found', { connectorId });
  return row;
}

/** Without --connector: the one connector of the workspace whose warehouse schema holds the source. */
async function connectorReading(q: Queryable, workspaceId: string, schema: string): Promise<ConnectorRow> {
  const rows = await q.query<ConnectorRow>(
    `SELECT id, name, type, status, environment_label AS "environmentLabel", warehouse_schema AS schema
       FROM gds.connectors WHERE workspace_id = $1 AND warehouse_schema = $2 ORDER BY id`,
    [workspaceId, schema],
  );
  if (rows.length === 1 && rows[0]) return rows[0];
  throw badRequest(
    'connector_required',
    rows.length === 0
      ? `No connector of the workspace reads schema ${schema}: pass --connector <id> (gds connectors list).`
      : `Several connectors read schema ${schema} (${rows.map((r) => r.id).join(', ')}): pass --connector <id>.`,
    { schema, connectors: rows.map((r) => r.id) },
  );
}

function checkConnectorEnvironment(caller: Caller, connector: ConnectorRow): void {
  checkEnvironment(
    caller,
    connector.environmentLabel,
    `connector ${connector.name}, whose environment the table inherits,`,
  );
}

function checkReplacedTable(caller: Caller, table: Pick<TableRow, 'environmentLabel' | 'name'>): void {
  checkEnvironment(caller, table.environmentLabel, `the table being replaced (${table.name})`);
}

/** How a registration's checks before its transaction are made: by which door, and whether a refusal is audited. */
export interface PrepareOptions {
  via?: 'definitions' | 'push';
  /** false for a dry run: nothing was attempted, so a refusal leaves no trace. */
  auditRefusal?: boolean;
}

/**
 * The table a replacement names, checked on the table as it is now before the artifact is read (§7.2's
 * order: authorization, then the body): none is 404, outside the caller's environments 403, the lifecycle's
 * refusal of this caller (a Mode B table, a caller who may not replace it: audited as the write's), a named
 * connector of another environment 404. The write checks them all again under the table's lock.
 */
async function checkReplaced(
  ctx: AppContext,
  caller: Caller,
  input: DefinitionInput & { replaceId: string },
  connector: ConnectorRow | undefined,
  options: PrepareOptions,
): Promise<void> {
  checkIds({ replaceId: input.replaceId });
  const [row] = await ctx.db.query<Parameters<typeof toTableRow>[0]>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables WHERE workspace_id = $1 AND active AND (governance_id = $2 OR id = $2)`,
    [caller.workspaceId, input.replaceId],
  );
  const table = row ? toTableRow(row) : null;
  if (table) checkReplacedTable(caller, table);
  if (table === null || !mayReplace(caller, table)) {
    // The lifecycle refuses this trigger (no table, or this caller): applying it throws its refusal, written
    // nothing, and governedTransaction audits the refusal as the write would.
    const refuse = (tx: Queryable) =>
      applyTrigger(tx, {
        table,
        trigger: 'replaced',
        context: {
          mode: table?.mode ?? 'MODE_A',
          tableName: table?.name ?? '',
          actor: replacingActor(caller, table),
        },
        actor: caller,
        clock: ctx.clock,
        details: { via: options.via ?? 'push', replaceId: input.replaceId, fileName: input.filename },
      });
    await (options.auditRefusal === false
      ? ctx.db.transaction(refuse)
      : governedTransaction(ctx.db, ctx.clock, refuse));
  }
  if (table && connector) checkSameEnvironment(table, connector);
}

/** Refuses a connector in an environment the caller cannot act in (403). */
function checkEnvironment(caller: Caller, environmentLabel: string, what: string): void {
  if (inEnvironmentScope(caller, environmentLabel)) return;
  const held =
    caller.kind === 'integration'
      ? `This token is scoped to environment ${caller.env}`
      : `Your environment scope is ${caller.envScope.join(', ') || 'empty'}`;
  throw forbidden('environment_mismatch', `${held}; ${what} is in ${environmentLabel}.`, {
    environmentLabel,
  });
}

async function parse(input: DefinitionInput): Promise<GovernanceArtifact> {
  const parsed = await parseArtifact({
    fileName: input.filename,
    content: input.content,
    ...(input.mimeType ? { kind: input.mimeType as ArtifactKind } : {}),
  });
  if (parsed.ok) return parsed.artifact;
  const { error } = parsed;
  if (error.code === 'unsupported_file_type')
    throw badRequest('unsupported_file_type', 'Unsupported file type');
  throw badRequest('invalid_artifact', formatArtifactError(input.filename, error), {
    code: error.code,
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.column === undefined ? {} : { column: error.column }),
  });
}

const DECLARED_TYPES: Record<string, ColumnType> = {
  text: 'text',
  string: 'text',
  varchar: 'text',
  char: 'text',
  integer: 'integer',
  int: 'integer',
  int2: 'integer',
  int4: 'integer',
  int8: 'integer',
  bigint: 'integer',
  smallint: 'integer',
  numeric: 'numeric',
  float4: 'numeric',
  float8: 'numeric',
  decimal: 'numeric',
  number: 'numeric',
  float: 'numeric',
  double: 'numeric',
  real: 'numeric',
  boolean: 'boolean',
  bool: 'boolean',
  date: 'date',
  timestamp: 'timestamp',
  timestamptz: 'timestamp',
  datetime: 'timestamp',
};

/**
 * A declared type's storage: `int4` → 4 bytes, `numeric(10,2)` → precision 10, scale 2 (`numeric(5)` scale 0).
 * What the type does not declare stays absent (any exact integer, any finite number).
 */
export function declaredStorage(
  declared: string | undefined,
): Pick<Column, 'integerBytes' | 'precision' | 'scale'> {
  const match = /^\s*([a-z][a-z0-9 ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$/.exec(
    declared?.toLowerCase() ?? '',
  );
  if (!match) return {};
  const [, base = '', precision, scale] = match;
  const integerBytes = INTEGER_BYTES[base];
  if (integerBytes !== undefined) return { integerBytes };
  if ((base === 'numeric' || base === 'decimal') && precision !== undefined) {
    const p = Number(precision);
    const s = scale === undefined ? 0 : Number(scale);
    // PostgreSQL takes precision 1..1000 and a scale within it; anything else is left unchecked here.
    if (p >= 1 && p <= 1000 && s >= 0 && s <= p) return { precision: p, scale: s };
  }
  return {};
}

/** The artifact's columns, typed by the warehouse object where it has the column, else by the declared type. */
function columnsOf(artifact: GovernanceArtifact, warehouse: Column[]): Column[] {
  return artifact.columns.map((column) => {
    const live = warehouse.find((c) => c.name === column.name);
    const declared = column.type?.toLowerCase().replace(/\(.*$/, '').trim() ?? '';
    const storage = live
      ? {
          ...(live.integerBytes === undefined ? {} : { integerBytes: live.integerBytes }),
          ...(live.precision === undefined ? {} : { precision: live.precision, scale: live.scale ?? 0 }),
        }
      : declaredStorage(column.type);
    return {
      name: column.name,
      type: live?.type ?? DECLARED_TYPES[declared] ?? 'text',
      required: column.required ?? false,
      ...(column.references === undefined ? {} : { references: column.references }),
      ...(column.min === undefined ? {} : { min: column.min }),
      ...(column.max === undefined ? {} : { max: column.max }),
      ...storage,
    };
  });
}

export interface Prepared {
  artifact: GovernanceArtifact;
  connector: ConnectorRow;
  source: string;
  columns: Column[];
}

/** What a registration reads before its transaction: the artifact parsed, its connector and warehouse object. */
export async function prepareDefinition(
  ctx: AppContext,
  caller: Caller,
  input: DefinitionInput,
  options: PrepareOptions = {},
): Promise<Prepared> {
  // What the caller names (the connector, the table replaced) is checked before the artifact is read: a
  // caller refused them gets 403 or 404 whatever the artifact holds, never a 400 about it.
  const named =
    input.connectorId === undefined
      ? undefined
      : await loadConnector(ctx.db, caller.workspaceId, input.connectorId);
  if (named) checkConnectorEnvironment(caller, named);
  const { replaceId } = input;
  if (replaceId !== undefined) await checkReplaced(ctx, caller, { ...input, replaceId }, named, options);
  const artifact = await parse(input);
  const resolved = resolveSource(artifact, input.source);
  if (!resolved.ok) throw badRequest(resolved.error.code, resolved.error.message);
  const source = `${resolved.source.schema}.${resolved.source.table}`;
  const connector = named ?? (await connectorReading(ctx.db, caller.workspaceId, resolved.source.schema));
  checkConnectorEnvironment(caller, connector);
  const warehouse =
    resolved.source.schema === connector.schema ? await describeWarehouseObject(ctx.db, source) : null;
  if (!warehouse) {
    throw badRequest(
      'unknown_source',
      `Source '${source}' is not a warehouse object on connector ${connector.name} (schema ${connector.schema}): pass --source / source naming one of its tables`,
      { source, connectorId: connector.id, schema: connector.schema },
    );
  }
  return { artifact, connector, source, columns: columnsOf(artifact, warehouse) };
}

/**
 * The name ($2) lowered as the name index lowers the names it holds, in each form another table may hold it:
 * as given, composed (NFC) and decomposed (NFD). "café" typed on one system and "café" (e and a combining
 * accent) on another are the same text to Unicode and look the same in every list: two tables of such names
 * are one name taken twice, not two names. Lowered before it is normalized (the database may lower only the
 * unaccented letters of "CAFÉ").
 */
const LOWERED_NAMES = 'ARRAY[lower($2), normalize(lower($2), NFC), normalize(lower($2), NFD)]';

/**
 * The active table (other than `except`) that already uses this name or source, with which, and whether a push
 * to `environmentLabel` could replace it. `promoted`: the table whose promotion this registration lands.
 */
async function findCollision(
  q: Queryable,
  caller: Caller,
  name: string,
  source: string,
  environmentLabel: string,
  except: string | null,
  promoted?: string,
): Promise<Collision | null> {
  const rows = await q.query<Holder & { by_name: boolean; mode: string }>(
    `SELECT (lower(name) = ANY(${LOWERED_NAMES}) OR slug = $3) AS by_name, id, mode, name, environment_label,
            source, owner_id
       FROM gds.tables
      WHERE workspace_id = $1 AND active AND id IS DISTINCT FROM $5
        AND (lower(name) = ANY(${LOWERED_NAMES}) OR slug = $3 OR (mode = 'MODE_A' AND source = $4))
      ORDER BY 1 DESC LIMIT 1`,
    [caller.workspaceId, name, slugOf(name), source, except],
  );
  const [row] = rows;
  if (!row) return null;
  // A Mode B (custody) table is never replaced by a push, nor a table of another environment (a replacement
  // keeps its table's environment): say so instead of suggesting a replacement the service would refuse. A
  // table the caller may not read is neither named nor identified.
  const other = row.by_name ? 'table name' : 'source';
  const visible = await mayReadHolder(q, caller, row);
  if (promoted !== undefined) {
    // A promotion's landing: neither a push's advice nor another promotion's, but what frees the landing.
    const reason =
      row.id === promoted
        ? promotedOntoItselfReason(row, environmentLabel)
        : promotionLandingReason(visible ? row : null, other, row.by_name ? name : source, environmentLabel);
    return {
      kind: row.by_name ? 'name' : 'source',
      source,
      ...(visible ? { existingId: row.id } : {}),
      replaceable: false,
      reason,
    };
  }
  if (!visible) {
    return {
      kind: row.by_name ? 'name' : 'source',
      source,
      replaceable: false,
      reason: hiddenHolderReason(other),
    };
  }
  const custody =
    row.mode === 'MODE_B'
      ? {
          replaceable: false,
          reason: `'${row.name}' is a Mode B (custody) table, managed through the dashboard or API; a push cannot replace it. Give the artifact another table name.`,
        }
      : row.environment_label !== environmentLabel
        ? {
            replaceable: false,
            reason: await otherEnvironmentReason(q, caller, row, environmentLabel, other),
          }
        : { replaceable: true };
  return row.by_name
    ? { kind: 'name', existingId: row.id, ...custody }
    : { kind: 'source', source, existingId: row.id, ...custody };
}

/**
 * The table holding a registration's name or source; `existingId` absent when the caller may not read it
 * (mayReadHolder), `replaceable` false then.
 */
type Collision = ({ kind: 'name' } | { kind: 'source'; source: string }) & {
  existingId?: string;
  replaceable: boolean;
  reason?: string;
};

/**
 * Whether the caller may learn which table holds a name or source: a person reads every table of their
 * environment scope (gds status), a MANAGEMENT token acts only on its environment's tables its issuer owns or
 * could replace as a workspace admin (requireTokenTableWrite). Any other holder stays unnamed.
 */
async function mayReadHolder(
  q: Queryable,
  caller: Caller,
  holder: Pick<Holder, 'environment_label' | 'owner_id'>,
): Promise<boolean> {
  if (!inEnvironmentScope(caller, holder.environment_label)) return false;
  if (caller.kind === 'session' || holder.owner_id === caller.userId) return true;
  const [member] = await q.query<{ role: string }>(
    'SELECT role FROM gds.memberships WHERE workspace_id = $1 AND user_id = $2 AND active',
    [caller.workspaceId, caller.userId],
  );
  return member !== undefined && isRole(member.role) && roleAtLeast(member.role, 'ADMIN');
}

/** What a 409 says of a holder the caller may not read: that one exists, and who can act on it. */
function hiddenHolderReason(other: string): string {
  return `The ${other} is held by a table you cannot see (another owner's, or of an environment outside your scope): give the artifact another ${other}, or ask its owner or a workspace admin to free it or to replace that table's definition.`;
}

/**
 * The reason of the 409 of a promotion to `to` of `holder` whose landing takes the source `holder` holds (the
 * connector of `to` reads its schema too): neither a push's advice (its deletion would leave nothing to promote)
 * nor another promotion lands it there.
 */
function promotedOntoItselfReason(holder: Holder, to: string): string {
  return `'${holder.name}' (${holder.id}), the table promoted, holds the source it would take in ${to} (${holder.source ?? ''}): ${to}'s connector reads its schema too, and a source is one table's per workspace. It cannot be promoted to ${to} while that connector reads its schema.`;
}

/**
 * The reason of the 409 of a promotion to `to` whose landing takes a name or source (`other`, `value`) another
 * table holds (`holder`; null when the caller may not read it): a promotion lands under the name and on the
 * source it is given, so only freeing them lets it land; a --replace of the holder would put the promoted
 * definition over an unrelated table.
 */
function promotionLandingReason(
  holder: (Holder & { mode: string }) | null,
  other: string,
  value: string,
  to: string,
): string {
  const takes = `the ${other} ${value} the promotion would take in ${to}`;
  if (holder === null)
    return `A table you cannot see holds ${takes}: ask its owner or a workspace admin to free it, then promote again.`;
  const named = `'${holder.name}' (${holder.id}, ${holder.environment_label})`;
  const free =
    holder.mode === 'MODE_B'
      ? 'a custody (Mode B) table: rename it through the service'
      : `${other === 'source' ? 'point it at another source' : 'rename it'} (gds push --replace ${holder.id}) or delete it (gds delete ${holder.id})`;
  return `${named} holds ${takes}, and a ${other} is one table's per workspace: to land the promotion there, free it first (${free}), then promote again.`;
}

/** What a 409 reads of the table holding a pushed name or source. */
interface Holder {
  id: string;
  name: string;
  environment_label: string;
  source: string | null;
  owner_id: string;
}

/**
 * The reason of the 409 of a push to `to` whose name or source (`other`) `holder`, a Mode A table of another
 * environment, holds: a push cannot replace it (a replacement keeps its table's environment). The promotion
 * that gives its definition to `to` is named only where the caller could run it and it would land: a person
 * (a promotion is a person's) who owns the table or is a workspace admin (who may delete it, §7.3), in whose
 * scope it is (findCollision names no holder the caller may not read).
 */
async function otherEnvironmentReason(
  q: Queryable,
  caller: Caller,
  holder: Holder,
  to: string,
  other: string,
): Promise<string> {
  const named = `'${holder.name}' (${holder.id}) is a table of ${holder.environment_label}, and a push to ${to} cannot replace it: a replacement keeps its table's environment`;
  const another = `the artifact another ${other}.`;
  const mayPromote =
    caller.kind === 'session' && (holder.owner_id === caller.userId || roleAtLeast(caller.role, 'ADMIN'));
  if (!mayPromote || holder.source === null) return `${named}. Give ${another}`;
  const landing = await promotionLanding(q, caller.workspaceId, holder, holder.source, to);
  if ('name' in landing)
    return `${named}. To have its definition in ${to}, promote it (gds env promote ${holder.id} --to ${to}: it lands there as ${landing.name}, and ${holder.name} stays in ${holder.environment_label}); else give ${another}`;
  return `${named}, and promoting it would not land either: ${landing.refusal}. ${
    landing.sameSource
      ? `This push lands once ${holder.name} is deleted (gds delete ${holder.id}); else give ${another}`
      : `Give ${another}`
  }`;
}

/**
 * Where `gds env promote <holder> --to <to>` would land the holder (its name there), or why it would not: the
 * connector it picks (to's first active one, targetConnector's), the warehouse object there and the name and
 * source the landing takes, as landBundle registers them. `sameSource`: the landing's source is the holder's
 * own (to's connector reads the holder's schema), which only the holder's deletion frees.
 */
async function promotionLanding(
  q: Queryable,
  workspaceId: string,
  holder: Holder,
  holderSource: string,
  to: string,
): Promise<{ name: string } | { refusal: string; sameSource: boolean }> {
  const [connector] = await q.query<{ name: string; warehouse_schema: string }>(
    `SELECT name, warehouse_schema FROM gds.connectors WHERE workspace_id = $1 AND environment_label = $2
        AND status = 'ACTIVE' ORDER BY created_at, id LIMIT 1`,
    [workspaceId, to],
  );
  if (!connector) return { refusal: `${to} has no active connector`, sameSource: false };
  const name = promotedName(holder.name, holder.environment_label, to);
  const source = `${connector.warehouse_schema}.${splitSource(holderSource)[1]}`;
  if (source === holderSource) {
    return {
      refusal: `${to}'s connector ${connector.name} reads ${connector.warehouse_schema} too, so it would take the source ${source}, which ${holder.name} holds`,
      sameSource: true,
    };
  }
  if (!(await describeWarehouseObject(q, source)))
    return { refusal: `connector ${connector.name} of ${to} has no ${source}`, sameSource: false };
  const [taken] = await q.query<{ id: string }>(
    `SELECT id FROM gds.tables
      WHERE workspace_id = $1 AND active
        AND (lower(name) = ANY(${LOWERED_NAMES}) OR slug = $3 OR (mode = 'MODE_A' AND source = $4)) LIMIT 1`,
    [workspaceId, name, slugOf(name), source],
  );
  if (taken)
    return { refusal: `the name ${name} or the source ${source} it would take is held`, sameSource: false };
  return { name };
}

/**
 * Registrations of one workspace, one at a time (a transaction-scoped advisory lock, released at commit
 * or rollback): the collision check of a registration then sees every registration committed before it,
 * so parallel registrations of one name or source make one table and the others answer 409 naming it.
 */
export async function lockRegistrations(tx: Queryable, workspaceId: string): Promise<void> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
    `gds.registrations:${workspaceId}`,
  ]);
}

/**
 * A unique-constraint race this code did not serialize (PostgreSQL 23505) as the spec's 409, naming the
 * active table that holds the name: never a 500.
 */
export async function conflictOfUniqueViolation(
  db: Queryable,
  error: unknown,
  caller: Caller,
  name: string,
): Promise<unknown> {
  if (!isUniqueViolation(error)) return error;
  const [row] = await db.query<{ id: string; environment_label: string; owner_id: string }>(
    `SELECT COALESCE(governance_id, id) AS id, environment_label, owner_id FROM gds.tables
      WHERE workspace_id = $1 AND active AND (lower(name) = ANY(${LOWERED_NAMES}) OR slug = $3) LIMIT 1`,
    [caller.workspaceId, name, slugOf(name)],
  );
  const named = row !== undefined && (await mayReadHolder(db, caller, row));
  return new HttpError(409, 'name_conflict', `A governance artifact named '${name}' already exists`, {
    ...(named ? { existingId: row.id } : { replaceable: false, reason: hiddenHolderReason('table name') }),
  });
}

/** The table a replacement names, with its row lock (see `LoadOptions.lock`): one table's writes in turn. */
async function findByGovernanceId(q: Queryable, workspaceId: string, id: string): Promise<TableRow | null> {
  const [row] = await q.query<Parameters<typeof toTableRow>[0]>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables
      WHERE workspace_id = $1 AND active AND (governance_id = $2 OR id = $2) FOR NO KEY UPDATE`,
    [workspaceId, id],
  );
  return row ? toTableRow(row) : null;
}

const trackingUrl = (ctx: AppContext, tableId: string) => `${ctx.baseUrl()}/dashboard/tables/${tableId}`;

/** Registers (202) or replaces (202, with the reconciled columns) a Mode A definition. */
export async function registerDefinition(
  ctx: AppContext,
  caller: Caller,
  input: DefinitionInput,
  via: 'definitions' | 'push',
): Promise<RegistrationOutcome> {
  const prepared = await prepareDefinition(ctx, caller, input, { via });
  try {
    return await governedTransaction(ctx.db, ctx.clock, (tx) =>
      registerPrepared(ctx, tx, caller, prepared, input, via),
    );
  } catch (error) {
    throw await conflictOfUniqueViolation(ctx.db, error, caller, prepared.artifact.table);
  }
}

/** Ends a dry run's transaction (rolled back) with the outcome the write would have answered. */
class RolledBack {
  constructor(readonly outcome: RegistrationOutcome) {}
}

/**
 * What `registerDefinition` would answer, with nothing written: the same checks in the same order, in a
 * transaction rolled back at the end. A refusal is the write's (its status, code and message), though not
 * audited as a refused write is: nothing was attempted.
 */
export async function previewDefinition(
  ctx: AppContext,
  caller: Caller,
  input: DefinitionInput,
  via: 'definitions' | 'push',
): Promise<RegistrationOutcome> {
  const prepared = await prepareDefinition(ctx, caller, input, { via, auditRefusal: false });
  try {
    return await ctx.db.transaction(async (tx) => {
      throw new RolledBack(await registerPrepared(ctx, tx, caller, prepared, input, via));
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.outcome;
    throw await conflictOfUniqueViolation(ctx.db, error, caller, prepared.artifact.table);
  }
}

/** The transaction half of `registerDefinition`, for a caller that writes more in the same transaction. */
export function registerPrepared(
  ctx: AppContext,
  tx: Queryable,
  caller: Caller,
  prepared: Prepared,
  input: DefinitionInput,
  via: 'definitions' | 'push',
  promoted?: string,
): Promise<RegistrationOutcome> {
  return input.replaceId === undefined
    ? register(ctx, tx, caller, prepared, input, via, promoted)
    : replace(ctx, tx, caller, prepared, input, input.replaceId, via);
}

const storedArtifact = (prepared: Prepared, input: DefinitionInput) =>
  JSON.stringify({ ...prepared.artifact, fileName: input.filename });

async function register(
  ctx: AppContext,
  tx: Queryable,
  caller: Caller,
  prepared: Prepared,
  input: DefinitionInput,
  via: string,
  promoted?: string,
): Promise<RegistrationOutcome> {
  const { artifact, connector, source, columns } = prepared;
  const tableId = newId('tbl');
  await lockRegistrations(tx, caller.workspaceId);
  const { gateMode } = await getWorkspaceConfig(tx, caller.workspaceId);
  const conflict = await findCollision(
    tx,
    caller,
    artifact.table,
    source,
    connector.environmentLabel,
    null,
    promoted,
  );
  const result = await applyTrigger(tx, {
    table: null,
    trigger: 'registered',
    context: { mode: 'MODE_A', tableName: artifact.table, ...(conflict ? { conflict } : {}) },
    actor: caller,
    clock: ctx.clock,
    subject: { tableId, environmentLabel: connector.environmentLabel, gateMode },
    details: {
      via,
      fileName: input.filename,
      ...(input.project === undefined ? {} : { project: input.project }),
      source,
      connectorId: connector.id,
      columns: columns.map((c) => c.name),
    },
  });
  const now = new Date(ctx.clock()).toISOString();
  await tx.query(
    `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, connector_id,
       source, owner_id, columns, active, created_at, updated_at, governance_id, artifact, project)
     VALUES ($1, $2, $3, $4, 'MODE_A', $5, $6, $7, $8, $9, $10, $11, true, $12, $12, $1, $13, $14)`,
    [
      tableId,
      caller.workspaceId,
      slugOf(artifact.table),
      artifact.table,
      result.next,
      gateMode,
      connector.environmentLabel,
      connector.id,
      source,
      caller.userId,
      JSON.stringify(columns),
      now,
      storedArtifact(prepared, input),
      input.project ?? null,
    ],
  );
  const job = await carryOut(ctx, tx, caller, result.effects, { tableId, source, columns });
  return {
    status: 202,
    body: {
      governanceId: tableId,
      trackingUrl: trackingUrl(ctx, tableId),
      job: jobSummary(job),
      tableId,
      state: result.next,
      definitionVersion: 1,
    },
  };
}

async function replace(
  ctx: AppContext,
  tx: Queryable,
  caller: Caller,
  prepared: Prepared,
  input: DefinitionInput,
  replaceId: string,
  via: string,
): Promise<RegistrationOutcome> {
  const { artifact, connector, source, columns } = prepared;
  const table = await findByGovernanceId(tx, caller.workspaceId, replaceId);
  if (table) checkReplacedTable(caller, table);
  if (table) checkOwner(table, input.project);
  const context: TransitionContext = {
    mode: table?.mode ?? 'MODE_A',
    tableName: artifact.table,
    actor: replacingActor(caller, table),
  };
  // "No change" only for a caller the lifecycle would let replace; anyone else gets its refusal below.
  const unchanged =
    table !== null && mayReplace(caller, table) ? await unchangedReplacement(ctx, tx, table, prepared) : null;
  if (unchanged) return unchanged;
  const added = columns.filter((c) => !table?.columns.some((o) => o.name === c.name)).map((c) => c.name);
  const removed = (table?.columns ?? [])
    .filter((o) => !columns.some((c) => c.name === o.name))
    .map((o) => o.name);
  const result = await applyTrigger(tx, {
    table,
    trigger: 'replaced',
    context,
    actor: caller,
    clock: ctx.clock,
    details: { via, replaceId, fileName: input.filename, source, columns: { added, removed } },
  });
  if (!table) throw new Error('replace: the lifecycle table accepted a missing table');
  checkSameEnvironment(table, connector);
  checkVersion(
    `The definition of ${table.id}`,
    table.definitionVersion,
    input.expectedVersion,
    `Compare with gds push <file> --replace ${table.governanceId} --dry-run and push again.`,
  );
  const collision = await findCollision(
    tx,
    caller,
    artifact.table,
    source,
    connector.environmentLabel,
    table.id,
  );
  if (collision) throw replacementCollision(collision, table, artifact.table);
  const definitionVersion = table.definitionVersion + 1;
  await tx.query(
    `UPDATE gds.tables SET name = $2, connector_id = $3, environment_label = $4, source = $5, artifact = $6,
       updated_at = $7 WHERE id = $1`,
    [
      table.id,
      artifact.table,
      connector.id,
      connector.environmentLabel,
      source,
      storedArtifact(prepared, input),
      new Date(ctx.clock()).toISOString(),
    ],
  );
  const job = await carryOut(ctx, tx, caller, result.effects, {
    tableId: table.id,
    source,
    columns,
    reconcile: { added, removed, definitionVersion },
  });
  return {
    status: 202,
    body: {
      governanceId: table.governanceId,
      trackingUrl: trackingUrl(ctx, table.id),
      job: jobSummary(job),
      tableId: table.id,
      state: result.next,
      definitionVersion,
      columns: { added, removed },
    },
  };
}

/**
 * A replacement keeps its table's environment: a connector of another one is 404 (§7.2's "replaceId
 * mismatch": the id names no table there). Moving a table is promotion's, with its own rules.
 */
function checkSameEnvironment(table: TableRow, connector: ConnectorRow): void {
  if (table.environmentLabel === connector.environmentLabel) return;
  throw notFound(
    'replace_environment_mismatch',
    `Table ${table.name} (${table.id}) is in ${table.environmentLabel} and connector ${connector.name} is in ${connector.environmentLabel}: a replacement keeps its table's environment. To move the table to ${connector.environmentLabel}, promote it (gds env promote ${table.id} --to ${connector.environmentLabel}); to replace its definition, use a connector of ${table.environmentLabel}.`,
    {
      tableId: table.id,
      environmentLabel: table.environmentLabel,
      connectorId: connector.id,
      connectorEnvironmentLabel: connector.environmentLabel,
    },
  );
}

/** 409 of a replacement whose name or source another table holds: the replaceId sent is not the way out. */
function replacementCollision(collision: Collision, table: TableRow, name: string): HttpError {
  const holds =
    collision.kind === 'name'
      ? { code: 'name_conflict', what: `the name '${name}'` }
      : { code: 'source_conflict', what: `the source '${collision.source}'` };
  const { existingId } = collision;
  if (existingId === undefined) {
    return new HttpError(
      409,
      holds.code,
      `A table you cannot see holds ${holds.what}, so ${table.name} (${table.id}) cannot take it: give the definition another table name or source, or ask that table's owner or a workspace admin to free it.`,
      { replaceId: table.governanceId },
    );
  }
  return new HttpError(
    409,
    holds.code,
    `Another governance artifact (${existingId}) already holds ${holds.what}, so ${table.name} (${table.id}) cannot take it: give the definition another table name or source.`,
    { existingId, replaceId: table.governanceId },
  );
}

/** What the replace rule reads of a table. */
type Replaced = Pick<TableRow, 'id' | 'mode' | 'name' | 'state' | 'ownerId'>;

/** Whether the lifecycle would let `caller` replace `table`'s definition (the replace rule, nothing applied). */
export function mayReplace(caller: Caller, table: Replaced): boolean {
  return replaceRefusal(caller, table) === undefined;
}

/** The lifecycle's refusal of `caller` replacing `table`'s definition, as a replacement would answer it. */
export function replaceRefusal(caller: Caller, table: Replaced): HttpError | undefined {
  const context = { mode: table.mode, tableName: table.name, actor: replacingActor(caller, table) };
  const result = transition(table.state, 'replaced', context);
  return result.ok
    ? undefined
    : new HttpError(result.status, result.code, result.message, { tableId: table.id });
}

/** Who replaces, for the lifecycle's rule: a person's role and ownership, or a MANAGEMENT token's scopes. */
function replacingActor(caller: Caller, table: Replaced | null): TransitionContext['actor'] {
  if (caller.kind === 'integration') return { tokenScopes: caller.scopes };
  return { role: caller.role, isTableOwner: table?.ownerId === caller.userId };
}

/** A replacement declaring what the table already holds on the same connector changes nothing (200, `changed: false`). */
async function unchangedReplacement(
  ctx: AppContext,
  tx: Queryable,
  table: TableRow,
  prepared: Prepared,
): Promise<RegistrationOutcome | null> {
  const held = table.artifact && table.source ? definitionSummary(table.artifact, table.source) : null;
  const same =
    held !== null &&
    table.connectorId === prepared.connector.id &&
    sameDefinition(held, definitionSummary(prepared.artifact, prepared.source));
  const [job] = same ? await recentJobs(tx, table.id, 1) : [];
  if (!job) return null;
  return {
    status: 200,
    body: {
      governanceId: table.governanceId,
      trackingUrl: trackingUrl(ctx, table.id),
      job: jobSummary(job),
      tableId: table.id,
      state: table.state,
      definitionVersion: table.definitionVersion,
      changed: false,
    },
  };
}

interface EffectTarget {
  tableId: string;
  source: string;
  columns: Column[];
  reconcile?: { added: string[]; removed: string[]; definitionVersion: number };
}

/** Carries out a registration's or replacement's effects in order; returns the baseline job. */
async function carryOut(
  ctx: AppContext,
  tx: Queryable,
  caller: Caller,
  effects: Effect[],
  target: EffectTarget,
): Promise<Job> {
  let job: Job | null = null;
  for (const effect of effects) {
    if (effect.type === 'reconcile_columns') {
      await tx.query('UPDATE gds.tables SET columns = $2, definition_version = $3 WHERE id = $1', [
        target.tableId,
        JSON.stringify(target.columns),
        target.reconcile?.definitionVersion ?? 1,
      ]);
    } else if (effect.type === 'file_recertification') {
      await fileRecertificationRequest(tx, {
        tableId: target.tableId,
        cause: effect.cause,
        details: { ...target.reconcile },
        actor: caller,
        clock: ctx.clock,
      });
    } else if (effect.type === 'enqueue_baseline_job') {
      job = await enqueueJob(tx, {
        workspaceId: caller.workspaceId,
        tableId: target.tableId,
        type: BASELINE_JOB,
        createdBy: caller.userId,
        clock: ctx.clock,
        params: { source: target.source, columns: target.columns.map((c) => c.name) },
      });
    } else {
      throw new Error(`definitions: unexpected effect ${effect.type}`);
    }
  }
  if (!job) throw new Error('definitions: the lifecycle table enqueued no baseline job');
  return job;
}

const jobSummary = (job: Job) => ({ id: job.id, type: job.type, status: job.status });
