// The lifecycle engine: applies a trigger to a table through the transition table of src/core/lifecycle,
// writes the new state and the audit entry, and turns a refusal into the HTTP error. Routes then carry
// out the returned effects, in order, in the same transaction. One effect the engine carries out itself:
// leaving CERTIFIED drops the table's certified view, whatever the trigger.
import { transition } from '../../core/lifecycle/index.js';
import type {
  Effect,
  NextState,
  RecertificationCause,
  RecertifyOutcome,
  TransitionContext,
  TransitionResult,
  Trigger,
} from '../../core/lifecycle/index.js';
import type { Caller } from '../auth/caller.js';
import type { AuditInput } from '../audit.js';
import { recordAudit, recordAudits } from '../audit.js';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/handle.js';
import { HttpError } from '../errors.js';
import { newId } from '../ids.js';
import { dropCertifiedView } from '../certification/view-name.js';
import { closeNotifications } from './notifications.js';
import type { TableRow } from './tables.js';

export interface ApplyInput {
  /** The table the trigger acts on; null when there is none yet (a registration) or none was found. */
  table: TableRow | null;
  trigger: Trigger;
  context: TransitionContext;
  actor: Caller;
  clock: Clock;
  /** Stamped on the audit entry. */
  details?: Record<string, unknown>;
  /**
   * When given, the transition's audit entry is added here for the caller to write (with `recordAudits`,
   * many at once) instead of being written now.
   */
  audits?: AuditInput[];
  /**
   * When `table` is null: who the audit entry is about (a registration knows the id, environment and gate
   * mode of the table it is about to insert).
   */
  subject?: { tableId?: string; environmentLabel?: string; gateMode?: 'ENFORCING' | 'ADVISORY' };
}

export interface ApplyResult {
  next: NextState;
  effects: Effect[];
  /** The transition row that matched (its id in src/core/lifecycle/table.ts). */
  row: string;
  /** 202 where the spec fixes it (registration, replacement). */
  status?: 202;
  recertifyOutcome?: RecertifyOutcome;
}

/** A refused transition: the HTTP error, plus the audit entry to keep even though the transaction rolls back. */
export class LifecycleRefusal extends HttpError {
  constructor(
    status: number,
    code: string,
    message: string,
    readonly audit: AuditInput | null,
    details?: unknown,
  ) {
    super(status, code, message, details);
  }
}

/**
 * Applies `trigger`. On success: updates `gds.tables.state` (when the table exists and the state changes),
 * writes the transition's audit entry and returns the effects for the caller to carry out. On a refusal:
 * throws a `LifecycleRefusal` whose audit entry `governedTransaction` writes after the rollback.
 */
export async function applyTrigger(tx: Queryable, input: ApplyInput): Promise<ApplyResult> {
  const { table, trigger, context, clock } = input;
  const result = transition(table?.state ?? null, trigger, context);
  const audit = auditOf(input, result.row);
  if (!result.ok) throw refusalOf(input, result);
  if (table && result.next !== table.state) {
    await tx.query('UPDATE gds.tables SET state = $2, updated_at = $3 WHERE id = $1', [
      table.id,
      result.next,
      new Date(clock()).toISOString(),
    ]);
  }
  // Here rather than as a row's effect, so no path out of CERTIFIED (replace, rename, submit, delete)
  // leaves consumers reading a projection nobody certifies any more.
  if (table?.state === 'CERTIFIED' && result.next !== 'CERTIFIED') await dropCertifiedView(tx, table);
  // The steward's queue holds a table only while it waits for review.
  if (table?.state === 'PENDING_REVIEW' && result.next !== 'PENDING_REVIEW') {
    await closeNotifications(tx, table.id, new Date(clock()).toISOString());
  }
  if (result.audit) {
    const entry = audit(result.audit.action, result.audit.resource, {
      from: table?.state ?? null,
      to: result.next,
    });
    if (input.audits) input.audits.push(entry);
    else await recordAudit(tx, clock, entry);
  }
  return {
    next: result.next,
    effects: result.effects,
    row: result.row,
    ...(result.status ? { status: result.status } : {}),
    ...(result.recertifyOutcome ? { recertifyOutcome: result.recertifyOutcome } : {}),
  };
}

/** The audit entry of `input`'s trigger, through the transition row `row`. */
function auditOf(input: ApplyInput, row: string) {
  const { table, trigger, actor } = input;
  return (action: string, resource: string, details: Record<string, unknown>): AuditInput => ({
    workspaceId: actor.workspaceId,
    userId: actor.userId,
    tableId: table?.id ?? input.subject?.tableId ?? null,
    action,
    resource,
    environmentLabel: table?.environmentLabel ?? input.subject?.environmentLabel ?? null,
    gateMode: table?.gateMode ?? input.subject?.gateMode ?? null,
    details: { ...input.details, ...details, lifecycleTrigger: trigger, transition: row },
  });
}

function refusalOf(input: ApplyInput, result: Extract<TransitionResult, { ok: false }>): LifecycleRefusal {
  const { table } = input;
  const refusalAudit = result.audit
    ? auditOf(input, result.row)(result.audit.action, result.audit.resource, {
        refused: { status: result.status, code: result.code, message: result.message },
      })
    : null;
  return new LifecycleRefusal(
    result.status,
    result.code,
    result.message,
    refusalAudit,
    table || result.details
      ? { ...(table ? { tableId: table.id, state: table.state } : {}), ...result.details }
      : undefined,
  );
}

/**
 * A route's check, before the body is read (guardBeforeBody), of who may fire `input`'s trigger: when the
 * transition refuses the caller (403), that refusal, its audit entry written as governedTransaction writes
 * a refusal's. Any other refusal (a 400 of the table's mode or state) is the route's, after the body, under
 * the table's row lock, where the trigger is applied.
 */
export async function refuseForbiddenTrigger(db: Queryable, input: ApplyInput): Promise<void> {
  const result = transition(input.table?.state ?? null, input.trigger, input.context);
  if (result.ok || result.status !== 403) return;
  const refusal = refusalOf(input, result);
  if (refusal.audit) await recordAudit(db, input.clock, refusal.audit);
  throw refusal;
}

/**
 * Runs `fn` in one transaction. When it throws a `LifecycleRefusal`, the transaction is rolled back and the
 * refusal's audit entry is written on its own, so the trail shows refused attempts. Use it around every
 * `applyTrigger`.
 */
export async function governedTransaction<T>(
  db: Db,
  clock: Clock,
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  try {
    return await db.transaction(fn);
  } catch (error) {
    if (error instanceof LifecycleRefusal && error.audit) await recordAudit(db, clock, error.audit);
    throw error;
  }
}

export interface RecertificationRequestInput {
  tableId: string;
  cause: RecertificationCause;
  details?: Record<string, unknown>;
  actor: { userId: string | null };
  clock: Clock;
}

/** At most this many characters of a signal's evidence summary are kept on its request. */
export const EVIDENCE_SUMMARY_CHARS = 2_000;

/**
 * The request's details with the signal's evidence reduced to a summary: its `kind` and `runId`, and its
 * `summary` cut to EVIDENCE_SUMMARY_CHARS (the whole evidence, up to 64 KB, stays on the signal's audit
 * entry); the request and each of its kept signals hold the summary, never the whole evidence.
 */
export function summarizedDetails(details: Record<string, unknown> = {}): Record<string, unknown> {
  const { evidence } = details;
  if (evidence === null || typeof evidence !== 'object' || Array.isArray(evidence)) return details;
  const { kind, runId, summary } = evidence as Record<string, unknown>;
  const text =
    summary === undefined ? undefined : typeof summary === 'string' ? summary : JSON.stringify(summary);
  const cut =
    text === undefined
      ? undefined
      : text.length > EVIDENCE_SUMMARY_CHARS
        ? `${text.slice(0, EVIDENCE_SUMMARY_CHARS)}… (${text.length} characters)`
        : text;
  return {
    ...details,
    evidence: {
      ...(kind === undefined ? {} : { kind }),
      ...(runId === undefined ? {} : { runId }),
      ...(cut === undefined ? {} : { summary: cut }),
    },
  };
}

/**
 * Files a recertification request on the table (the effect `file_recertification`) and returns its id.
 * One request stays OPEN per table and cause: a repeated signal updates it (its count, when it was last
 * seen, the latest details) instead of filing another, in one statement that parallel signals cannot
 * race (the unique index `recertification_one_open`); each signal is also kept on its own
 * (`recertification_signals`: who, when, cause, details), so a merge loses none. A new request gets its
 * own audit entry `RECERTIFICATION_REQUESTED`; an update does not (the signal that caused it is audited by
 * the engine).
 * The table's state is left as it is.
 */
export async function fileRecertificationRequest(
  tx: Queryable,
  input: RecertificationRequestInput,
): Promise<string> {
  const [id] = await fileRecertificationRequests(tx, input.clock, [input]);
  return id as string;
}

/**
 * `fileRecertificationRequest` of many tables in a few statements whatever their number (a signal of a whole
 * dbt run); the ids in the order of `inputs`. At most one input per table and cause.
 */
export async function fileRecertificationRequests(
  tx: Queryable,
  clock: Clock,
  inputs: readonly Omit<RecertificationRequestInput, 'clock'>[],
): Promise<string[]> {
  if (inputs.length === 0) return [];
  const now = new Date(clock()).toISOString();
  const ids = inputs.map(() => newId('rcr'));
  const details = inputs.map((input) => summarizedDetails(input.details));
  const filed = await tx.query<{
    id: string;
    table_id: string;
    cause: RecertificationCause;
    inserted: boolean;
    workspace_id: string;
    environment_label: string;
    gate_mode: 'ENFORCING' | 'ADVISORY';
  }>(
    `WITH filed AS (
       INSERT INTO gds.recertification_requests
         (id, workspace_id, table_id, cause, status, details, created_by, created_at, last_seen_at)
       SELECT r.id, t.workspace_id, r.table_id, r.cause, 'OPEN', r.details::jsonb, r.created_by, $6, $6
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
              WITH ORDINALITY AS r(id, table_id, cause, details, created_by, n)
         JOIN gds.tables t ON t.id = r.table_id
        ORDER BY r.n
       ON CONFLICT (table_id, cause) WHERE status = 'OPEN' DO UPDATE
         SET signal_count = gds.recertification_requests.signal_count + 1,
             last_seen_at = EXCLUDED.last_seen_at, details = EXCLUDED.details
       RETURNING id, table_id, cause, (xmax = 0) AS inserted)
     SELECT f.id, f.table_id, f.cause, f.inserted, t.workspace_id, t.environment_label, t.gate_mode
       FROM filed f JOIN gds.tables t ON t.id = f.table_id`,
    [
      ids,
      inputs.map((i) => i.tableId),
      inputs.map((i) => i.cause),
      details.map((d) => JSON.stringify(d)),
      inputs.map((i) => i.actor.userId),
      now,
    ],
  );
  const byKey = new Map(filed.map((f) => [`${f.table_id}\0${f.cause}`, f]));
  // Every signal is kept with its request, a merged one too: who sent it, when, and its own details.
  await tx.query(
    `INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
     SELECT s.id, s.request_id, s.cause, s.details::jsonb, s.created_by, $6
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS s(id, request_id, cause, details, created_by)`,
    [
      inputs.map(() => newId('rcs')),
      inputs.map((input) => byKey.get(`${input.tableId}\0${input.cause}`)?.id ?? null),
      inputs.map((i) => i.cause),
      details.map((d) => JSON.stringify(d)),
      inputs.map((i) => i.actor.userId),
      now,
    ],
  );
  const audits: AuditInput[] = [];
  const result = inputs.map((input, i) => {
    const row = byKey.get(`${input.tableId}\0${input.cause}`);
    if (!row) throw new Error(`fileRecertificationRequest: no table ${input.tableId}`);
    if (row.inserted) {
      audits.push({
        workspaceId: row.workspace_id,
        userId: input.actor.userId,
        tableId: input.tableId,
        action: 'RECERTIFICATION_REQUESTED',
        resource: 'semantic_contract',
        environmentLabel: row.environment_label,
        gateMode: row.gate_mode,
        details: { requestId: row.id, cause: input.cause, ...details[i] },
      });
    }
    return row.id;
  });
  await recordAudits(tx, clock, audits);
  return result;
}
