// Recertification requests (`recertification list` / `dismiss`): filed by the engine's
// `file_recertification` effect (drift, schema change, ingest, manual), listed while OPEN, and dismissed
// (acknowledged without certifying or rejecting) with an audit entry. A request keeps every signal merged
// into it; a request as listed carries its latest SIGNALS_SHOWN (`signals`, oldest first), and the rest are
// read a page at a time (`listSignalPage`), so a request a nightly run merges into for months stays small.
import type { RecertificationCause } from '../../core/lifecycle/index.js';
import type { Caller, SessionCaller } from '../auth/caller.js';
import { recordAudit, recordAudits } from '../audit.js';
import { requireEnvironment } from '../certification/access.js';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/handle.js';
import { WhereClause } from '../db/where.js';
import { isoOrNull } from '../db/timestamps.js';
import { badRequest, forbidden, notFound } from '../errors.js';
import { checkTextLength } from '../input-rule.js';
import { roleAtLeast } from '../../core/scopes.js';
import { MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import { afterKey, keyedPage, matchedPage, type ListKey, type MatchKey } from '../list-cursor.js';

/** One signal merged into a request: who sent it, when, why (the request's cause) and its own details. */
export interface RecertificationSignal {
  id: string;
  cause: RecertificationCause;
  details: Record<string, unknown>;
  createdBy: string | null;
  createdAt: string;
}

export interface RecertificationRequest {
  id: string;
  tableId: string;
  tableName: string;
  environmentLabel: string;
  cause: RecertificationCause;
  status: 'OPEN' | 'DISMISSED' | 'RESOLVED';
  details: Record<string, unknown>;
  createdBy: string | null;
  createdAt: string;
  dismissedBy: string | null;
  dismissedAt: string | null;
  /** How many signals this request stands for (a repeated signal updates the open request). */
  count: number;
  /** When the last of them came. */
  lastSeenAt: string;
  /** RESOLVED: who certified the table, when, and the contract version that certification wrote. */
  resolvedBy: string | null;
  resolvedAt: string | null;
  resolvedVersion: number | null;
  /** The latest SIGNALS_SHOWN signals, oldest first (requests older than kept signals: their latest). */
  signals: RecertificationSignal[];
  /** Whether earlier signals than those in `signals` are kept (read them with listSignalPage). */
  earlierSignals: boolean;
}

/** How many of a request's signals (its latest) a request carries as listed. */
export const SIGNALS_SHOWN = 20;

interface Row {
  id: string;
  table_id: string;
  table_name: string;
  environment_label: string;
  gate_mode: 'ENFORCING' | 'ADVISORY';
  owner_id: string;
  cause: RecertificationCause;
  status: RecertificationRequest['status'];
  details: Record<string, unknown> | null;
  created_by: string | null;
  created_at: Date | string;
  dismissed_by: string | null;
  dismissed_at: Date | string | null;
  signal_count: number;
  last_seen_at: Date | string;
  resolved_by: string | null;
  resolved_at: Date | string | null;
  resolved_version: number | null;
}

const SELECT = `SELECT r.id, r.table_id, t.name AS table_name, t.environment_label, t.gate_mode, t.owner_id, r.cause,
    r.status, r.details, r.created_by, r.created_at, r.dismissed_by, r.dismissed_at, r.signal_count,
    r.last_seen_at, r.resolved_by, r.resolved_at, r.resolved_version
  FROM gds.recertification_requests r JOIN gds.tables t ON t.id = r.table_id`;

/** SELECT with the list key: created_at exactly as a cursor carries it (UTC, microseconds). */
const SELECT_KEYED = SELECT.replace(
  ' FROM gds.recertification_requests',
  `, to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
  FROM gds.recertification_requests`,
);

function toRequest(
  row: Row,
  { signals, earlier }: { signals: RecertificationSignal[]; earlier: boolean } = {
    signals: [],
    earlier: false,
  },
): RecertificationRequest {
  return {
    id: row.id,
    tableId: row.table_id,
    tableName: row.table_name,
    environmentLabel: row.environment_label,
    cause: row.cause,
    status: row.status,
    details: row.details ?? {},
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    dismissedBy: row.dismissed_by,
    dismissedAt: isoOrNull(row.dismissed_at),
    count: Number(row.signal_count),
    lastSeenAt: new Date(row.last_seen_at).toISOString(),
    resolvedBy: row.resolved_by,
    resolvedAt: isoOrNull(row.resolved_at),
    resolvedVersion: row.resolved_version === null ? null : Number(row.resolved_version),
    signals,
    earlierSignals: earlier,
  };
}

interface SignalRow {
  id: string;
  request_id: string;
  cause: RecertificationCause;
  details: Record<string, unknown> | null;
  created_by: string | null;
  created_at: Date | string;
}

const toSignal = (row: SignalRow): RecertificationSignal => ({
  id: row.id,
  cause: row.cause,
  details: row.details ?? {},
  createdBy: row.created_by,
  createdAt: new Date(row.created_at).toISOString(),
});

/**
 * The latest SIGNALS_SHOWN signals of each of these requests, oldest first, and whether earlier ones are
 * kept (one statement whatever their number; each request reads at most SIGNALS_SHOWN + 1 of its index).
 */
async function signalsOf(
  q: Queryable,
  requestIds: string[],
): Promise<Map<string, { signals: RecertificationSignal[]; earlier: boolean }>> {
  const latest = new Map<string, SignalRow[]>(requestIds.map((id) => [id, []]));
  if (requestIds.length > 0) {
    const rows = await q.query<SignalRow>(
      `SELECT s.id, s.request_id, s.cause, s.details, s.created_by, s.created_at
         FROM unnest($1::text[]) AS r(id)
         CROSS JOIN LATERAL (SELECT x.* FROM gds.recertification_signals x WHERE x.request_id = r.id
                              ORDER BY x.created_at DESC, x.id DESC LIMIT ${SIGNALS_SHOWN + 1}) s`,
      [requestIds],
    );
    for (const row of rows) latest.get(row.request_id)?.push(row);
  }
  const byRequest = new Map<string, { signals: RecertificationSignal[]; earlier: boolean }>();
  for (const [id, rows] of latest) {
    byRequest.set(id, {
      signals: rows.slice(0, SIGNALS_SHOWN).reverse().map(toSignal),
      earlier: rows.length > SIGNALS_SHOWN,
    });
  }
  return byRequest;
}

async function withSignals(q: Queryable, rows: Row[]): Promise<RecertificationRequest[]> {
  const signals = await signalsOf(
    q,
    rows.map((r) => r.id),
  );
  return rows.map((row) => toRequest(row, signals.get(row.id)));
}

export interface RequestSummary {
  id: string;
  tableId: string;
  tableName: string;
  cause: RecertificationCause;
  count: number;
}

/**
 * The request a reader of its signals names: of the caller's workspace and an active table (404 otherwise),
 * in an environment the caller may act in (403 otherwise, as for dismissing it).
 */
export async function findRequestFor(
  q: Queryable,
  caller: Caller,
  requestId: string,
): Promise<RequestSummary> {
  const [row] = await q.query<{
    id: string;
    table_id: string;
    table_name: string;
    environment_label: string;
    cause: RecertificationCause;
    signal_count: number;
  }>(
    `SELECT r.id, r.table_id, t.name AS table_name, t.environment_label, r.cause, r.signal_count
       FROM gds.recertification_requests r JOIN gds.tables t ON t.id = r.table_id
      WHERE r.id = $1 AND r.workspace_id = $2 AND t.active`,
    [requestId, caller.workspaceId],
  );
  if (!row)
    throw notFound('recertification_request_not_found', `Recertification request not found: ${requestId}`);
  requireEnvironment(caller, row.environment_label);
  return {
    id: row.id,
    tableId: row.table_id,
    tableName: row.table_name,
    cause: row.cause,
    count: Number(row.signal_count),
  };
}

/** Every signal of a request, oldest first, a page at a time by key (created_at, id). */
export async function listSignalPage(
  q: Queryable,
  requestId: string,
  query: { limit: number; after?: ListKey | undefined },
): Promise<{ signals: RecertificationSignal[]; next: ListKey | null }> {
  const after = afterKey([requestId], '(created_at, id)', query.after);
  const rows = await q.query<SignalRow & { created_key: string }>(
    `SELECT id, request_id, cause, details, created_by, created_at,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
       FROM gds.recertification_signals
      WHERE request_id = $1${after.condition}
      ORDER BY created_at, id LIMIT ${query.limit + 1}`,
    after.params,
  );
  const { page, next } = keyedPage(rows, query.limit);
  return { signals: page.map(toSignal), next };
}

/**
 * Every signal of the requests `requestIds` names that are of the workspace, of an active table and in
 * `environments` (null: every one), the others left out; a page at a time, request after request (by id), each
 * request's signals oldest first, by key (created_at, id) of the last one (whose request the page goes on from).
 * Each request is read through its index from where the page starts: a page costs its rows and the requests it
 * crosses, not every signal after the cursor (sorted across 100 requests, a read of 200,000 signals took 32 s).
 */
export async function listSignalsOfRequests(
  q: Queryable,
  workspaceId: string,
  requestIds: string[],
  query: { environments: string[] | null; limit: number; after?: ListKey | undefined },
): Promise<{ signals: Array<RecertificationSignal & { requestId: string }>; next: ListKey | null }> {
  const where = new WhereClause<string | string[]>();
  where
    .and(`r.id = ANY(${where.param(requestIds)}::text[])`)
    .and(`r.workspace_id = ${where.param(workspaceId)}`)
    .and('t.active')
    .given(query.environments, (p) => `t.environment_label = ANY(${p}::text[])`);
  const readable = (
    await q.query<{ id: string }>(
      `SELECT r.id FROM gds.recertification_requests r JOIN gds.tables t ON t.id = r.table_id
        WHERE ${where.sql}`,
      where.params,
    )
  )
    .map((row) => row.id)
    .sort();
  const after = query.after;
  // The request of the cursor's signal: the page goes on within it, then with the requests after it.
  let from: string | undefined;
  if (after !== undefined) {
    const [cursor] = await q.query<{ request_id: string }>(
      'SELECT request_id FROM gds.recertification_signals WHERE id = $1',
      [after.id],
    );
    if (cursor === undefined) return { signals: [], next: null };
    from = cursor.request_id;
  }
  const rows: Array<SignalRow & { created_key: string }> = [];
  for (const requestId of readable) {
    if (rows.length > query.limit) break;
    if (from !== undefined && requestId < from) continue;
    const within = afterKey(
      [requestId],
      '(created_at, id)',
      from !== undefined && requestId === from ? after : undefined,
    );
    rows.push(
      ...(await q.query<SignalRow & { created_key: string }>(
        `SELECT id, request_id, cause, details, created_by, created_at,
                to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
           FROM gds.recertification_signals
          WHERE request_id = $1${within.condition}
          ORDER BY created_at, id LIMIT ${query.limit + 1 - rows.length}`,
        within.params,
      )),
    );
  }
  const { page, next } = keyedPage(rows, query.limit);
  return { signals: page.map((row) => ({ requestId: row.request_id, ...toSignal(row) })), next };
}

export interface RequestListQuery {
  all?: boolean;
  tableId?: string | undefined;
  /** Only requests of tables in these environments (null: every environment). */
  environments?: string[] | null;
  /** A page of at most this many requests (and `next` when more follow); without it, every request. */
  limit?: number | undefined;
  after?: ListKey | undefined;
  /**
   * Only the requests whose id starts with this (case-insensitive), ordered by id: `prefixRequestPage`. How TAB
   * completes a request's id without reading the queue.
   */
  prefix?: string | undefined;
  /** With `prefix`, the key of the last row of the previous page (`matched` is its id). */
  afterMatch?: MatchKey | undefined;
}

/**
 * The filters every list of requests has: the workspace, OPEN ones (unless `all`), an active table, then one
 * table, the environments the caller sees and an id's prefix, each written only when given (db/where.ts says
 * why: a table's requests read the workspace's every one, not by an index of table_id). A page's other
 * parameters are numbered after them.
 */
function listedFilters(workspaceId: string, query: RequestListQuery): WhereClause<string | string[]> {
  const where = new WhereClause<string | string[]>();
  where.and(`r.workspace_id = ${where.param(workspaceId)}`);
  if (query.all !== true) where.and("r.status = 'OPEN'");
  return where
    .and('t.active')
    .given(query.tableId, (p) => `r.table_id = ${p}::text`)
    .given(query.environments, (p) => `t.environment_label = ANY(${p}::text[])`)
    .given(query.prefix, idStartsWith);
}

/**
 * An id starting with the prefix (the parameter `prefix`), in the "C" collation, whose order is the code
 * points': every id starting with it lies in one range of the index recertification_open_by_id, [prefix,
 * prefix || U+10FFFF), which an open request's page reads in order and stops at the page's end (the tables'
 * prefix does the same).
 */
const idStartsWith = (prefix: string) =>
  `r.id COLLATE "C" >= lower(${prefix}::text) AND r.id COLLATE "C" < (lower(${prefix}::text) || chr(1114111))`;

/**
 * Requests of the workspace's active tables, oldest first: the OPEN ones, or with `all` every one
 * (dismissed and resolved too); optionally of one table. With `limit`, one page read by key
 * (created_at, id): its cost is the page, not the queue.
 */
export async function listRequestPage(
  q: Queryable,
  workspaceId: string,
  query: RequestListQuery = {},
): Promise<{ requests: RecertificationRequest[]; next: ListKey | MatchKey | null }> {
  if (query.prefix !== undefined)
    return prefixRequestPage(q, workspaceId, { ...query, prefix: query.prefix });
  // Two statements rather than `($n OR status = 'OPEN')`, so that each can use its own index.
  const where = listedFilters(workspaceId, query);
  const after = afterKey(where.params, '(r.created_at, r.id)', query.after);
  const rows = await q.query<Row & { created_key: string }>(
    `${SELECT_KEYED} WHERE ${where.sql}${after.condition}
      ORDER BY r.created_at, r.id
      ${query.limit === undefined ? '' : `LIMIT ${query.limit + 1}`}`,
    after.params,
  );
  const { page, next } = keyedPage(rows, query.limit);
  return {
    requests: await withSignals(q, page),
    next,
  };
}

/**
 * One page of the requests whose id starts with `prefix` (any case), ordered by id, read by key (the id): what
 * `gds recertification dismiss <TAB>` asks. Its cost is the page's, at 20 open requests or 100,000.
 */
async function prefixRequestPage(
  q: Queryable,
  workspaceId: string,
  query: RequestListQuery & { prefix: string },
): Promise<{ requests: RecertificationRequest[]; next: MatchKey | null }> {
  const where = listedFilters(workspaceId, query).given(
    query.afterMatch?.id,
    (p) => `r.id COLLATE "C" > ${p}::text`,
  );
  const rows = await q.query<Row>(
    `${SELECT} WHERE ${where.sql}
      ORDER BY r.id COLLATE "C"
      ${query.limit === undefined ? '' : `LIMIT ${query.limit + 1}`}`,
    where.params,
  );
  const { page, next } = matchedPage(rows, query.limit, (row) => row.id);
  return { requests: await withSignals(q, page), next };
}

/** How many requests the whole list of `query` holds (paging aside). */
export async function countRequests(
  q: Queryable,
  workspaceId: string,
  query: RequestListQuery = {},
): Promise<number> {
  const where = listedFilters(workspaceId, query);
  const [row] = await q.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM gds.recertification_requests r JOIN gds.tables t ON t.id = r.table_id
      WHERE ${where.sql}`,
    where.params,
  );
  return Number(row?.n ?? 0);
}

/** Every request of `query` in one list (the dashboard's table page; the API without paging). */
export async function listOpenRequests(
  db: Db,
  workspaceId: string,
  tableId?: string,
  options: { all?: boolean; environments?: string[] | null } = {},
): Promise<RecertificationRequest[]> {
  return (await listRequestPage(db, workspaceId, { ...options, tableId })).requests;
}

/**
 * The request `caller` may dismiss (whatever its status): 404 for unknown requests, other workspaces' and a
 * deleted table's (as `findRequestFor`), 403 outside the caller's environments or for neither the table's
 * owner nor a STEWARD and above. `lock`: the row's lock, for the transaction that dismisses it.
 */
export async function dismissableRequest(
  q: Queryable,
  caller: SessionCaller,
  requestId: string,
  options: { lock?: boolean } = {},
): Promise<Row> {
  const [row] = await q.query<Row>(
    `${SELECT} WHERE r.id = $1 AND r.workspace_id = $2 AND t.active${options.lock === true ? ' FOR UPDATE OF r' : ''}`,
    [requestId, caller.workspaceId],
  );
  if (!row)
    throw notFound('recertification_request_not_found', `Recertification request not found: ${requestId}`);
  requireEnvironment(caller, row.environment_label);
  if (row.owner_id !== caller.userId && !roleAtLeast(caller.role, 'STEWARD')) {
    throw forbidden(
      'dismiss_forbidden',
      'Only the table owner or a steward, admin or owner of the workspace can dismiss a recertification request',
    );
  }
  return row;
}

/**
 * Dismisses an OPEN request: the table's owner or a STEWARD and above, in the table's environment. 404 for unknown requests and other
 * workspaces'; 400 when it is no longer open.
 */
export async function dismissRequest(
  db: Db,
  clock: Clock,
  caller: SessionCaller,
  requestId: string,
  reason: unknown,
): Promise<RecertificationRequest> {
  return db.transaction(async (tx) => {
    const row = await dismissableRequest(tx, caller, requestId, { lock: true });
    if (reason !== undefined && typeof reason !== 'string') {
      throw badRequest('invalid_request', 'reason must be a string.', { field: 'reason' });
    }
    if (reason !== undefined) checkTextLength('reason', reason, MAX_NOTE_CHARS);
    if (row.status !== 'OPEN') {
      throw badRequest(
        'not_open',
        `Recertification request ${requestId} is ${row.status}, not OPEN: nothing to dismiss`,
      );
    }
    const now = new Date(clock()).toISOString();
    await tx.query(
      `UPDATE gds.recertification_requests SET status = 'DISMISSED', dismissed_by = $2, dismissed_at = $3 WHERE id = $1`,
      [requestId, caller.userId, now],
    );
    await recordAudit(tx, clock, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      tableId: row.table_id,
      action: 'RECERTIFICATION_DISMISSED',
      resource: 'semantic_contract',
      environmentLabel: row.environment_label,
      gateMode: row.gate_mode,
      details: { requestId, cause: row.cause, ...(reason ? { reason } : {}) },
    });
    const [dismissed] = await withSignals(tx, [
      { ...row, status: 'DISMISSED', dismissed_by: caller.userId, dismissed_at: now },
    ]);
    return dismissed as RecertificationRequest;
  });
}

/**
 * Marks the table's OPEN requests RESOLVED by the certification that wrote contract `version` (it answers
 * them), each with an audit entry `RECERTIFICATION_RESOLVED`; returns their ids. For certify, in its
 * transaction.
 */
export async function resolveOpenRequests(
  q: Queryable,
  clock: Clock,
  input: {
    table: { id: string; workspaceId: string; environmentLabel: string; gateMode: 'ENFORCING' | 'ADVISORY' };
    version: number;
    actor: string;
  },
): Promise<string[]> {
  const now = new Date(clock()).toISOString();
  const rows = await q.query<{ id: string; cause: string; signal_count: number }>(
    `UPDATE gds.recertification_requests
        SET status = 'RESOLVED', resolved_by = $2, resolved_at = $3, resolved_version = $4
      WHERE table_id = $1 AND status = 'OPEN' RETURNING id, cause, signal_count`,
    [input.table.id, input.actor, now, input.version],
  );
  for (const row of rows) {
    await recordAudit(q, clock, {
      workspaceId: input.table.workspaceId,
      userId: input.actor,
      tableId: input.table.id,
      action: 'RECERTIFICATION_RESOLVED',
      resource: 'semantic_contract',
      environmentLabel: input.table.environmentLabel,
      gateMode: input.table.gateMode,
      details: {
        requestId: row.id,
        cause: row.cause,
        count: Number(row.signal_count),
        version: input.version,
      },
    });
  }
  return rows.map((r) => r.id);
}

/**
 * Marks the OPEN requests of a table being deleted DISMISSED by whoever deletes it (nobody can act on them
 * any more), each with an audit entry `RECERTIFICATION_DISMISSED` whose reason says so; returns their ids.
 * For delete, in its transaction.
 */
export async function dismissRequestsOfDeletedTable(
  q: Queryable,
  clock: Clock,
  input: {
    table: { id: string; workspaceId: string; environmentLabel: string; gateMode: 'ENFORCING' | 'ADVISORY' };
    actor: string;
  },
): Promise<string[]> {
  const rows = await q.query<{ id: string; cause: string }>(
    `UPDATE gds.recertification_requests SET status = 'DISMISSED', dismissed_by = $2, dismissed_at = $3
      WHERE table_id = $1 AND status = 'OPEN' RETURNING id, cause`,
    [input.table.id, input.actor, new Date(clock()).toISOString()],
  );
  await recordAudits(
    q,
    clock,
    rows.map((row) => ({
      workspaceId: input.table.workspaceId,
      userId: input.actor,
      tableId: input.table.id,
      action: 'RECERTIFICATION_DISMISSED',
      resource: 'semantic_contract',
      environmentLabel: input.table.environmentLabel,
      gateMode: input.table.gateMode,
      details: { requestId: row.id, cause: row.cause, reason: 'table deleted' },
    })),
  );
  return rows.map((r) => r.id);
}
