// What the dashboard pages show, read through the server's own modules; the few lists no endpoint needs
// (a table's recent jobs, proofs and audit entries) are read here, always scoped to the table.
import type { LiveContract, ContractVersion } from '../certification/contracts.js';
import { findContract, listVersions } from '../certification/contracts.js';
import type { Db } from '../db/handle.js';
import { isoOf, isoOrNull } from '../db/timestamps.js';
import type { Certification } from '../governance/status.js';
import { latestCertification } from '../governance/status.js';
import type { RecertificationRequest } from '../governance/recertification-requests.js';
import type { RecertificationSignal, RequestSummary } from '../governance/recertification-requests.js';
import { findRequestFor, listOpenRequests, listSignalPage } from '../governance/recertification-requests.js';
import type { TableListItem, TableRow } from '../governance/tables.js';
import { findTable, listTablePage } from '../governance/tables.js';
import type { QueueEntry } from '../governance/notifications.js';
import { listQueuePage } from '../governance/notifications.js';
import { HttpError } from '../errors.js';
import type { ListKey } from '../list-cursor.js';
import { decodeListCursor, encodeListCursor } from '../list-cursor.js';
import { LIFECYCLE_STATES } from '../../core/lifecycle/index.js';
import type { Role } from '../../core/scopes.js';
import { envScopeAllows, roleAtLeast } from '../../core/scopes.js';
import type { SessionCaller } from '../auth/caller.js';
import type { IntegrationTokenRow } from '../auth/revocation.js';
import { listIntegrationTokens } from '../auth/revocation.js';
import type { AppContext } from '../context.js';
import { GATE_OF } from '../gates/job-body.js';
import type { Job } from '../governance/jobs.js';

/** How many jobs, proofs and audit entries a table page lists. */
export const RECENT_LIMIT = 20;

export interface Viewer {
  userId: string;
  email: string;
  displayName: string;
  role: string;
  workspaceId: string;
  workspaceName: string;
  /** The environments the person may act in (`*` for all): the dashboard shows only their tables. */
  envScope: string[];
}

/** Whether a table of `environmentLabel` is within the viewer's environment scope, as on every API read. */
export function viewerSees(viewer: Viewer, environmentLabel: string): boolean {
  return envScopeAllows(viewer.envScope, environmentLabel);
}

export interface RecentJob {
  id: string;
  type: Job['type'];
  gate: number;
  status: Job['status'];
  createdAt: string;
  finishedAt: string | null;
  /** `passed` from the job's result when it has one. */
  passed: boolean | null;
  error: string | null;
}

export interface RecentProof {
  id: string;
  kind: string;
  passed: boolean;
  failedPredicates: string[];
  versions: string;
  createdBy: string;
  createdAt: string;
}

export interface TableAuditEntry {
  id: string;
  action: string;
  /** The user's e-mail (their id when the user is gone). */
  user: string | null;
  environmentLabel: string | null;
  gateMode: string | null;
  createdAt: string;
}

export interface TablePage {
  table: TableRow;
  certification: Certification | null;
  contract: LiveContract | null;
  versions: ContractVersion[];
  openRequests: RecertificationRequest[];
  jobs: RecentJob[];
  proofs: RecentProof[];
  audit: TableAuditEntry[];
}

/** The signed-in person as the page header shows them; null when the membership is no longer active. */
export async function loadViewer(db: Db, userId: string, workspaceId: string): Promise<Viewer | null> {
  const [row] = await db.query<{
    email: string;
    display_name: string;
    role: string;
    name: string;
    env_scope: string[];
  }>(
    `SELECT u.email, u.display_name, m.role, m.env_scope, w.name FROM gds.memberships m
       JOIN gds.users u ON u.id = m.user_id JOIN gds.workspaces w ON w.id = m.workspace_id
      WHERE m.user_id = $1 AND m.workspace_id = $2 AND m.active`,
    [userId, workspaceId],
  );
  if (!row) return null;
  return {
    userId,
    email: row.email,
    displayName: row.display_name,
    role: row.role,
    workspaceId,
    workspaceName: row.name,
    envScope: row.env_scope,
  };
}

/**
 * Everything the table page shows; null when the viewer's workspace has no such active table, or has it in
 * an environment outside the viewer's scope (shown as not found, like another workspace's table).
 */
export async function loadTablePage(db: Db, viewer: Viewer, tableId: string): Promise<TablePage | null> {
  const { workspaceId } = viewer;
  const table = await findTable(db, workspaceId, tableId);
  if (!table || !viewerSees(viewer, table.environmentLabel)) return null;
  const [certification, contract, versions, openRequests, jobs, proofs, audit] = await Promise.all([
    latestCertification(db, table.id),
    findContract(db, table.id),
    listVersions(db, table.id),
    listOpenRequests(db, workspaceId, table.id),
    recentJobs(db, table),
    recentProofs(db, table.id),
    tableAudit(db, table),
  ]);
  // People by e-mail, as the audit section shows them, never by user id.
  const email = await emailsOf(db, [
    ...versions.map((v) => v.certifiedBy),
    ...openRequests.flatMap((r) => [r.createdBy, ...r.signals.map((s) => s.createdBy)]),
  ]);
  return {
    table,
    certification: certification && {
      ...certification,
      certifiedBy: certification.certifiedByEmail ?? certification.certifiedBy,
    },
    contract,
    versions: versions.map((v) => ({ ...v, certifiedBy: email(v.certifiedBy) ?? v.certifiedBy })),
    openRequests: openRequests.map((r) => ({
      ...r,
      createdBy: email(r.createdBy),
      signals: r.signals.map((s) => ({ ...s, createdBy: email(s.createdBy) })),
    })),
    jobs,
    proofs,
    audit,
  };
}

/** How many signals a page of a request's signals shows. */
export const SIGNALS_PAGE_SIZE = 100;

export interface SignalsPage {
  request: RequestSummary;
  signals: RecertificationSignal[];
  cursor: string | undefined;
  nextCursor: string | null;
}

/**
 * A page of every signal merged into a request, oldest first, senders by e-mail; null when the viewer does
 * not see the request (another workspace's, or outside their environments).
 */
export async function loadSignalsPage(
  db: Db,
  viewer: Viewer,
  requestId: string,
  cursor: string | undefined,
): Promise<SignalsPage | null> {
  let after: ListKey | undefined;
  try {
    after = cursor ? decodeListCursor(cursor) : undefined;
  } catch {
    // A link this dashboard did not make: the first page.
    cursor = undefined;
  }
  let request: RequestSummary;
  try {
    request = await findRequestFor(db, viewerCaller(viewer), requestId);
  } catch (error) {
    // Outside the viewer's environments reads as not found, like a table page.
    if (error instanceof HttpError && (error.status === 403 || error.status === 404)) return null;
    throw error;
  }
  const { signals, next } = await listSignalPage(db, request.id, { limit: SIGNALS_PAGE_SIZE, after });
  const email = await emailsOf(
    db,
    signals.map((s) => s.createdBy),
  );
  return {
    request,
    signals: signals.map((s) => ({ ...s, createdBy: email(s.createdBy) })),
    cursor,
    nextCursor: next === null ? null : encodeListCursor(next),
  };
}

/** A lookup of these users' e-mails (a user no longer known keeps their id). */
async function emailsOf(db: Db, ids: Array<string | null>): Promise<(id: string | null) => string | null> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  const rows =
    wanted.length === 0
      ? []
      : await db.query<{ id: string; email: string }>('SELECT id, email FROM gds.users WHERE id = ANY($1)', [
          wanted,
        ]);
  const byId = new Map(rows.map((r) => [r.id, r.email]));
  return (id) => (id === null ? null : (byId.get(id) ?? id));
}

async function recentJobs(db: Db, table: TableRow): Promise<RecentJob[]> {
  const rows = await db.query<{
    id: string;
    type: Job['type'];
    status: Job['status'];
    created_at: Date | string;
    finished_at: Date | string | null;
    result: unknown;
    error: { message?: unknown } | null;
  }>(
    `SELECT id, type, status, created_at, finished_at, result, error FROM gds.jobs
      WHERE workspace_id = $1 AND table_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [table.workspaceId, table.id, RECENT_LIMIT],
  );
  return rows.map((row) => {
    const passed = (row.result as { passed?: unknown } | null)?.passed;
    return {
      id: row.id,
      type: row.type,
      gate: GATE_OF[row.type],
      status: row.status,
      createdAt: isoOf(row.created_at),
      finishedAt: isoOrNull(row.finished_at),
      passed: typeof passed === 'boolean' ? passed : null,
      error: row.error && typeof row.error.message === 'string' ? row.error.message : null,
    };
  });
}

async function recentProofs(db: Db, tableId: string): Promise<RecentProof[]> {
  const rows = await db.query<{
    id: string;
    kind: string;
    passed: boolean;
    failed_predicates: string[];
    definition_version: number;
    gate1_version: number;
    data_version: number;
    contract_version: number | null;
    created_by: string;
    created_at: Date | string;
  }>(
    `SELECT p.id, p.kind, p.passed, p.failed_predicates, p.definition_version, p.gate1_version, p.data_version,
            p.contract_version, coalesce(u.email, p.created_by) AS created_by, p.created_at
       FROM gds.gate_proofs p LEFT JOIN gds.users u ON u.id = p.created_by
      WHERE p.table_id = $1 ORDER BY p.seq DESC LIMIT $2`,
    [tableId, RECENT_LIMIT],
  );
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    passed: row.passed,
    failedPredicates: row.failed_predicates,
    versions:
      `definition ${row.definition_version}, gate1 ${row.gate1_version}, data ${row.data_version}` +
      (row.contract_version === null ? '' : `, contract ${row.contract_version}`),
    createdBy: row.created_by,
    createdAt: isoOf(row.created_at),
  }));
}

/** The table's audit entries, newest first. */
async function tableAudit(db: Db, table: TableRow): Promise<TableAuditEntry[]> {
  const rows = await db.query<{
    id: string;
    action: string;
    user_id: string | null;
    environment_label: string | null;
    gate_mode: string | null;
    created_at: Date | string;
  }>(
    `SELECT a.id, a.action, coalesce(u.email, a.user_id) AS user_id, a.environment_label, a.gate_mode, a.created_at
       FROM gds.audit_log a LEFT JOIN gds.users u ON u.id = a.user_id
      WHERE a.workspace_id = $1 AND a.table_id = $2 ORDER BY a.seq DESC LIMIT $3`,
    [table.workspaceId, table.id, RECENT_LIMIT * 5],
  );
  return rows.map((row) => ({
    id: row.id,
    action: row.action,
    user: row.user_id,
    environmentLabel: row.environment_label,
    gateMode: row.gate_mode,
    createdAt: isoOf(row.created_at),
  }));
}

/** How many tables a page of the dashboard's list shows. */
export const TABLES_PAGE_SIZE = 100;
/** How many waiting tables the home page lists (`gds review` lists them all). */
export const QUEUE_PAGE_SIZE = 20;

export interface HomeQuery {
  state?: string | undefined;
  env?: string | undefined;
  cursor?: string | undefined;
}

export interface HomePage {
  tables: TableListItem[];
  /** The `cursor` of the next page, or null on the last. */
  nextCursor: string | null;
  /** The filters applied (an unknown state or a bad cursor is dropped, and said in `problem`). */
  filter: { state?: string; env?: string; cursor?: string };
  problem?: string;
  /** The workspace's environments the viewer may see, for the filter. */
  environments: string[];
  /** The steward's queue: null when the viewer's role is below STEWARD. */
  queue: { entries: QueueEntry[]; more: boolean } | null;
}

/** The dashboard's home: one page of tables read by key, like `GET /api/tables`, and the steward's queue. */
export async function loadHome(db: Db, viewer: Viewer, query: HomeQuery): Promise<HomePage> {
  const scope = viewer.envScope.includes('*') ? null : viewer.envScope;
  const filter: HomePage['filter'] = {};
  const problems: string[] = [];
  if (query.state) {
    if ((LIFECYCLE_STATES as readonly string[]).includes(query.state)) filter.state = query.state;
    else problems.push(`There is no state ${query.state}: showing every state.`);
  }
  if (query.env) filter.env = query.env;
  let after: ListKey | undefined;
  if (query.cursor) {
    try {
      after = decodeListCursor(query.cursor);
      filter.cursor = query.cursor;
    } catch {
      problems.push('That page link is not one this dashboard made: showing the first page.');
    }
  }
  const environments = filter.env === undefined ? scope : viewerSees(viewer, filter.env) ? [filter.env] : [];
  const [{ tables, next }, labels, queue] = await Promise.all([
    listTablePage(db, {
      workspaceId: viewer.workspaceId,
      state: filter.state,
      environments,
      limit: TABLES_PAGE_SIZE,
      after,
    }),
    db.query<{ label: string }>(
      'SELECT DISTINCT environment_label AS label FROM gds.connectors WHERE workspace_id = $1 ORDER BY 1',
      [viewer.workspaceId],
    ),
    roleAtLeast(viewer.role as Role, 'STEWARD')
      ? listQueuePage(db, viewer.workspaceId, { environments: scope, limit: QUEUE_PAGE_SIZE })
      : null,
  ]);
  return {
    tables,
    nextCursor: next === null ? null : encodeListCursor(next),
    filter,
    ...(problems.length > 0 ? { problem: problems.join(' ') } : {}),
    environments: labels.map((l) => l.label).filter((label) => viewerSees(viewer, label)),
    queue: queue && { entries: queue.entries, more: queue.next !== null },
  };
}

/** The viewer as the API's guards see a signed-in person. */
export function viewerCaller(viewer: Viewer): SessionCaller {
  return {
    kind: 'session',
    via: 'jwt',
    userId: viewer.userId,
    workspaceId: viewer.workspaceId,
    role: viewer.role as Role,
    envScope: viewer.envScope,
  };
}

/** The integration tokens the viewer may see, as `GET /api/integration/tokens` lists them (client token masked). */
export async function loadTokens(ctx: AppContext, viewer: Viewer): Promise<IntegrationTokenRow[]> {
  return listIntegrationTokens(ctx.db, viewerCaller(viewer));
}

/** Whether the viewer may revoke the token: its issuer, or an ADMIN and above. */
export function viewerMayRevoke(viewer: Viewer, token: IntegrationTokenRow): boolean {
  return (
    token.revokedAt === null && (token.userId === viewer.userId || roleAtLeast(viewer.role as Role, 'ADMIN'))
  );
}
