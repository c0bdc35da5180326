// The steward's queue: the notification `gate submit` files (the effect `notify_steward`), read by a
// STEWARD and above (`GET /api/notifications`, the dashboard's "Waiting for review", `gds review`). A table
// has at most one open notification, its latest submission's; it closes when the table leaves
// PENDING_REVIEW (certified, rejected, replaced) or a newer submission takes its place.
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/handle.js';
import { newId } from '../ids.js';
import { afterKey, type SeqKey } from '../list-cursor.js';
import { changedSince } from '../gates/proofs.js';
import type { TableVersions } from '../gates/table.js';
import type { TableRow } from './tables.js';

export interface QueueEntry {
  /** The notification's id. */
  id: string;
  kind: string;
  message: string;
  tableId: string;
  tableName: string;
  environmentLabel: string;
  state: string;
  /** When the table was submitted. */
  createdAt: string;
  submittedBy: { userId: string | null; email: string | null };
  /** The submission's proof (null when it was not stored). */
  proof: {
    id: string;
    passed: boolean;
    failedPredicates: string[];
    tableVersion: TableVersions;
    /**
     * Whether the table is still at the proof's versions: false once its definition, gate1.yml, data or
     * semantic contract moved (a rebuild signalled, records written, set-intent), when certify is blocked
     * (stale_proof) until it is submitted again.
     */
    fresh: boolean;
    /** What moved since the proof, from its version to the table's. */
    changedSince: Array<{ what: keyof TableVersions; from: number; to: number }>;
  } | null;
  /**
   * The last certified version and what changed since (the definition, gate1.yml, data or contract version that
   * its proof was taken at against this submission's); null when the table was never certified.
   */
  sinceCertified: {
    version: number;
    certifiedAt: string;
    certifiedBy: string | null;
    /** Null when the proof it certified is not known (then `changed` is empty: nothing can be said). */
    tableVersion: TableVersions | null;
    changed: Array<{ what: keyof TableVersions; from: number | null; to: number }>;
  } | null;
  openRecertificationRequests: Array<{ id: string; cause: string; createdAt: string; count: number }>;
}

/** Files the steward notification of a submission, closing the table's earlier open one. */
export async function notifySteward(
  tx: Queryable,
  input: { table: TableRow; kind: string; message: string; details?: Record<string, unknown>; clock: Clock },
): Promise<string> {
  const id = newId('ntf');
  const now = new Date(input.clock()).toISOString();
  await closeNotifications(tx, input.table.id, now);
  // The queue pages by seq: held to commit, this lock makes the workspace's notifications take their seq
  // (nextval, the column's default) in the order they commit, so none commits behind a seq already read.
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [
    `gds.notifications:${input.table.workspaceId}`,
  ]);
  await tx.query(
    `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
     VALUES ($1, $2, $3, 'STEWARD', $4, $5, $6, $7)`,
    [
      id,
      input.table.workspaceId,
      input.table.id,
      input.kind,
      input.message,
      JSON.stringify(input.details ?? {}),
      now,
    ],
  );
  return id;
}

/** Closes the table's open notifications (it left PENDING_REVIEW, or a newer submission replaces them). */
export async function closeNotifications(tx: Queryable, tableId: string, at: string): Promise<void> {
  await tx.query('UPDATE gds.notifications SET closed_at = $2 WHERE table_id = $1 AND closed_at IS NULL', [
    tableId,
    at,
  ]);
}

export interface QueueQuery {
  /** Only tables of these environments (null: every one). */
  environments: string[] | null;
  limit?: number | undefined;
  after?: SeqKey | undefined;
}

interface Row {
  id: string;
  kind: string;
  message: string;
  table_id: string;
  table_name: string;
  environment_label: string;
  state: string;
  created_at: Date | string;
  seq: string;
  submitted_by: string | null;
  submitted_email: string | null;
  proof_id: string | null;
  passed: boolean | null;
  failed_predicates: string[] | null;
  definition_version: number | null;
  gate1_version: number | null;
  data_version: number | null;
  contract_version: number | null;
  table_definition: number;
  table_gate1: number;
  table_data: number;
  table_contract: number;
  certified_version: number | null;
  certified_at: Date | string | null;
  certified_email: string | null;
  certified_definition: number | null;
  certified_gate1: number | null;
  certified_data: number | null;
  certified_contract: number | null;
  requests: Array<{ id: string; cause: string; created_at: string; count: number }>;
}

const WHERE = `n.workspace_id = $1 AND n.closed_at IS NULL AND t.active AND t.state = 'PENDING_REVIEW'
  AND ($2::text[] IS NULL OR t.environment_label = ANY($2))`;

/**
 * Open notifications of the workspace in the order they were filed (committed), read by seq through
 * notifications_open: each with its proof, the last certified version and the open recertification
 * requests of its table. Without a limit, every one.
 */
export async function listQueuePage(
  q: Queryable,
  workspaceId: string,
  query: QueueQuery,
): Promise<{ entries: QueueEntry[]; next: SeqKey | null }> {
  const after = afterKey([workspaceId, query.environments], 'n.seq', query.after);
  const rows = await q.query<Row>(
    `SELECT n.id, n.kind, n.message, n.table_id, t.name AS table_name, t.environment_label, t.state, n.created_at,
            n.seq::text AS seq,
            n.details->>'submittedBy' AS submitted_by, su.email AS submitted_email,
            p.id AS proof_id, p.passed, p.failed_predicates, p.definition_version, p.gate1_version, p.data_version,
            p.contract_version,
            t.definition_version AS table_definition, t.gate1_version AS table_gate1, t.data_version AS table_data,
            t.contract_version AS table_contract,
            cv.version AS certified_version, cv.certified_at, cu.email AS certified_email,
            cp.definition_version AS certified_definition, cp.gate1_version AS certified_gate1,
            cp.data_version AS certified_data, cp.contract_version AS certified_contract,
            COALESCE((SELECT json_agg(json_build_object('id', r.id, 'cause', r.cause, 'created_at', r.created_at,
                                                        'count', r.signal_count) ORDER BY r.created_at, r.id)
                        FROM gds.recertification_requests r WHERE r.table_id = t.id AND r.status = 'OPEN'),
                     '[]'::json) AS requests
       FROM gds.notifications n
       JOIN gds.tables t ON t.id = n.table_id
       LEFT JOIN gds.users su ON su.id = n.details->>'submittedBy'
       LEFT JOIN gds.gate_proofs p ON p.id = n.details->>'proofId'
       LEFT JOIN LATERAL (SELECT v.version, v.certified_at, v.certified_by FROM gds.contract_versions v
                           WHERE v.table_id = t.id AND v.kind = 'CERTIFICATION'
                           ORDER BY v.version DESC LIMIT 1) cv ON true
       LEFT JOIN gds.users cu ON cu.id = cv.certified_by
       -- A table never certified reads none of its submissions (not all of them, none matching).
       LEFT JOIN LATERAL (SELECT s.definition_version, s.gate1_version, s.data_version, s.contract_version
                            FROM gds.gate_proofs s
                           WHERE cv.certified_at IS NOT NULL AND s.table_id = t.id AND s.kind = 'submit'
                             AND s.created_at <= cv.certified_at
                           ORDER BY s.seq DESC LIMIT 1) cp ON true
      WHERE ${WHERE}${after.condition}
      ORDER BY n.seq
      ${query.limit === undefined ? '' : `LIMIT ${query.limit + 1}`}`,
    after.params,
  );
  const more = query.limit !== undefined && rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const last = page.at(-1);
  return { entries: page.map(toEntry), next: more && last !== undefined ? { seq: last.seq } : null };
}

/** How many open notifications the queue of `query` holds (paging aside). */
export async function countQueue(q: Queryable, workspaceId: string, query: QueueQuery): Promise<number> {
  const [row] = await q.query<{ n: number | string }>(
    `SELECT count(*) AS n FROM gds.notifications n JOIN gds.tables t ON t.id = n.table_id WHERE ${WHERE}`,
    [workspaceId, query.environments],
  );
  return Number(row?.n ?? 0);
}

const versionsOf = (
  definition: number | null,
  gate1: number | null,
  data: number | null,
  contract: number | null,
): TableVersions | null =>
  definition === null || gate1 === null || data === null
    ? null
    : {
        definition: Number(definition),
        gate1: Number(gate1),
        data: Number(data),
        // A proof stamped before contract revisions were recorded has none: not compared.
        ...(contract === null ? {} : { contract: Number(contract) }),
      };

function toEntry(row: Row): QueueEntry {
  const proofVersions = versionsOf(
    row.definition_version,
    row.gate1_version,
    row.data_version,
    row.contract_version,
  );
  const certifiedVersions = versionsOf(
    row.certified_definition,
    row.certified_gate1,
    row.certified_data,
    row.certified_contract,
  );
  const tableVersions = versionsOf(
    row.table_definition,
    row.table_gate1,
    row.table_data,
    row.table_contract,
  ) as TableVersions;
  const changed: NonNullable<QueueEntry['sinceCertified']>['changed'] =
    proofVersions && certifiedVersions ? changedSince(certifiedVersions, proofVersions) : [];
  const moved = proofVersions ? changedSince(proofVersions, tableVersions) : [];
  return {
    id: row.id,
    kind: row.kind,
    message: row.message,
    tableId: row.table_id,
    tableName: row.table_name,
    environmentLabel: row.environment_label,
    state: row.state,
    createdAt: new Date(row.created_at).toISOString(),
    submittedBy: { userId: row.submitted_by, email: row.submitted_email },
    proof:
      row.proof_id === null || proofVersions === null
        ? null
        : {
            id: row.proof_id,
            passed: row.passed === true,
            failedPredicates: row.failed_predicates ?? [],
            tableVersion: proofVersions,
            fresh: moved.length === 0,
            changedSince: moved,
          },
    sinceCertified:
      row.certified_version === null || row.certified_at === null
        ? null
        : {
            version: Number(row.certified_version),
            certifiedAt: new Date(row.certified_at).toISOString(),
            certifiedBy: row.certified_email,
            tableVersion: certifiedVersions,
            changed,
          },
    openRecertificationRequests: row.requests.map((r) => ({
      id: r.id,
      cause: r.cause,
      createdAt: new Date(r.created_at).toISOString(),
      count: Number(r.count),
    })),
  };
}
