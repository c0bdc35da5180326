// What the dashboard pages show, read through the server's own modules; the few lists no endpoint needs
// (a table's recent jobs, proofs and audit entries) are read here, always scoped to the table.
import type { LiveContract, ContractVersion } from '../certification/contracts.js';
import { findContract, listVersions } from '../certification/contracts.js';
import type { Db } from '../db/index.js';
import type { Certification } from '../governance/status.js';
import { latestCertification } from '../governance/status.js';
import type { RecertificationRequest } from '../governance/recertification-requests.js';
import { listOpenRequests } from '../governance/recertification-requests.js';
import type { TableRow } from '../governance/tables.js';
import { findTable } from '../governance/tables.js';
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
  return viewer.envScope.includes('*') || viewer.envScope.includes(environmentLabel);
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

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

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
  return { table, certification, contract, versions, openRequests, jobs, proofs, audit };
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
      createdAt: iso(row.created_at) ?? '',
      finishedAt: iso(row.finished_at),
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
    created_by: string;
    created_at: Date | string;
  }>(
    `SELECT id, kind, passed, failed_predicates, definition_version, gate1_version, data_version, created_by,
            created_at
       FROM gds.gate_proofs WHERE table_id = $1 ORDER BY seq DESC LIMIT $2`,
    [tableId, RECENT_LIMIT],
  );
  return rows.map((row) => ({
    id: row.id,
    kind: row.kind,
    passed: row.passed,
    failedPredicates: row.failed_predicates,
    versions: `definition ${row.definition_version}, gate1 ${row.gate1_version}, data ${row.data_version}`,
    createdBy: row.created_by,
    createdAt: iso(row.created_at) ?? '',
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
    createdAt: iso(row.created_at) ?? '',
  }));
}
