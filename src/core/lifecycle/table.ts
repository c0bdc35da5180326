import { LIFECYCLE_STATES } from './types.js';
import type {
  AuditRecord,
  Effect,
  LifecycleState,
  NextState,
  RecertifyOutcome,
  RefusalStatus,
  TransitionContext,
  Trigger,
} from './types.js';

/** A person who owns the table or administers the workspace (the rule for delete and replace). */
function isOwnerOrAdmin(ctx: TransitionContext): boolean {
  const { actor } = ctx;
  if (!actor || !('role' in actor)) return false;
  return actor.isTableOwner || actor.role === 'OWNER' || actor.role === 'ADMIN';
}

/** A MANAGEMENT token holding the workspace's definition-writing scope (§4.7, `POST /api/workspace/definitions`). */
function holdsDefinitionScope(ctx: TransitionContext): boolean {
  const { actor } = ctx;
  return Boolean(actor && 'tokenScopes' in actor && actor.tokenScopes.includes('workspace:write:definition'));
}

/** Named conditions, each evaluated on the request's context (and the table's current state). */
export const GUARDS = {
  /** A Mode B (custody) table: managed through the dashboard or API, never by push or delete. */
  isModeB: (ctx) => ctx.mode === 'MODE_B',
  nameTaken: (ctx) => ctx.conflict?.kind === 'name',
  sourceTaken: (ctx) => ctx.conflict?.kind === 'source',
  /** No review proof, or one older than the definition, gate1.yml, the contract or the latest ingest. */
  proofMissingOrStale: (ctx) => !ctx.certification?.proof?.fresh,
  predicatesFailed: (ctx) => (ctx.certification?.proof?.failedPredicates.length ?? 0) > 0,
  /** Checks run again at certify time, on the data as it is now, fail. */
  liveChecksFailed: (ctx) => (ctx.certification?.liveChecks.failed.length ?? 0) > 0,
  /** The rows changed between the certify-time checks and the certify transaction. */
  liveDataChanged: (ctx) => ctx.certification?.liveChecks.dataChanged === true,
  gate3RequiredUnsatisfied: (ctx) =>
    Boolean(ctx.certification?.gate3Required && !ctx.certification.gate3Satisfied),
  inspectionPolicyUnmet: (ctx) => !ctx.certification?.inspectionPolicyMet,
  notOwnerOrAdmin: (ctx) => !isOwnerOrAdmin(ctx),
  /** Replace takes the delete rule, or a MANAGEMENT token whose scope covers every definition of the workspace. */
  mayNotReplace: (ctx) => !isOwnerOrAdmin(ctx) && !holdsDefinitionScope(ctx),
  gate3WithoutBaseline: (ctx) => ctx.gate === 3 && !ctx.baselineReportId?.trim(),
  driftDetected: (ctx) => ctx.driftDetected === true,
  envAssertionMismatch: (ctx) =>
    ctx.environment?.asserted !== undefined && ctx.environment.asserted !== ctx.environment.table,
  versionFromOtherEnvironment: (ctx) =>
    ctx.environment?.version !== undefined && ctx.environment.version !== ctx.environment.table,
} satisfies Record<string, (ctx: TransitionContext) => boolean>;

export type GuardName = keyof typeof GUARDS;

/** `none`: no table yet (or none found); `any`: any existing table. */
export type FromStates = 'none' | 'any' | readonly LifecycleState[];

type Message = string | ((ctx: TransitionContext, state: LifecycleState | null) => string);

export interface Move {
  /** `unchanged` keeps the table's current state. */
  next: NextState | 'unchanged';
  effects: Effect[];
  /** Absent only where the spec says nothing is persisted (a Gate 1 dry run). */
  audit?: AuditRecord;
  status?: 202;
  recertifyOutcome?: RecertifyOutcome;
}

export interface Refusal {
  refuse: {
    status: RefusalStatus;
    code: string;
    message: Message;
    /** What the error's details carry for this context (undefined: nothing). */
    details?: (ctx: TransitionContext) => Record<string, unknown> | undefined;
  };
  audit?: AuditRecord;
}

export interface TransitionRow {
  id: string;
  from: FromStates;
  trigger: Trigger | 'any';
  /** The row applies only when this guard holds; absent: always. */
  when?: GuardName;
  outcome: Move | Refusal;
}

const allExcept = (...excluded: LifecycleState[]) => LIFECYCLE_STATES.filter((s) => !excluded.includes(s));

/** Why certify was refused outside review, with the next step right for the state: gate submit moves a
 *  QUARANTINED table to review, but would send a certified one back, withdrawing its certified view. */
function certifyOutsideReview(state: string): string {
  if (state === 'CERTIFIED') return 'The table is already CERTIFIED: nothing to do';
  if (state === 'QUARANTINED')
    return 'The table is QUARANTINED, not PENDING_REVIEW: run gate submit before certifying';
  return `The table is ${state}, not PENDING_REVIEW: only a table in review can be certified`;
}
const contract = (action: string): AuditRecord => ({ action, resource: 'semantic_contract' });
const artifact = (action: string): AuditRecord => ({ action, resource: 'governance_artifact' });
const stateOf = (state: LifecycleState | null) => state ?? 'not registered';

/** The table that holds the name or source a registration asked for (spec §4.7's 409: use replaceId). */
const existingIdOf = (ctx: TransitionContext): Record<string, unknown> => ({
  ...(ctx.conflict?.existingId === undefined ? {} : { existingId: ctx.conflict.existingId }),
  ...(ctx.conflict?.replaceable === undefined ? {} : { replaceable: ctx.conflict.replaceable }),
  ...(ctx.conflict?.reason === undefined ? {} : { reason: ctx.conflict.reason }),
});

const nameConflict: Refusal = {
  refuse: {
    status: 409,
    code: 'name_conflict',
    message: (ctx) => `A governance artifact named '${ctx.tableName ?? ''}' already exists`,
    details: existingIdOf,
  },
  audit: artifact('DEFINITION_REFUSED'),
};

/** Certify on a PENDING_REVIEW table that a check blocks: 422 with the cause, state unchanged, audited. */
function certifyBlocked(
  code: string,
  when: GuardName,
  message: Message,
  details?: Refusal['refuse']['details'],
): TransitionRow {
  return {
    id: `certify.blocked.${code}`,
    from: ['PENDING_REVIEW'],
    trigger: 'certify',
    when,
    outcome: {
      refuse: { status: 422, code, message, ...(details ? { details } : {}) },
      audit: contract('CERTIFICATION_BLOCKED'),
    },
  };
}

const liveFailures = (ctx: TransitionContext) => ctx.certification?.liveChecks.failed ?? [];

type ProofContext = NonNullable<TransitionContext['certification']>['proof'];

/** How certify's refusal names each part of a table a proof is taken at. */
const PART_NAME = {
  definition: 'the definition',
  gate1: 'gate1.yml',
  data: 'the data',
  contract: 'the semantic contract',
} as const;

/** Why a proof is stale, naming every part that moved since the submission with its versions. */
function staleProofMessage(proof: ProofContext): string {
  if (!proof) return 'Certification blocked: the table has no review proof; run gate submit first';
  const changed = proof.changed ?? [];
  if (changed.length === 0)
    return 'Certification blocked: the review proof is stale (the definition, gate1.yml or the data changed after it); run gate submit again';
  const [only] = changed;
  const moved =
    changed.length === 1 && only
      ? `${PART_NAME[only.what]} changed since submission (v${only.from}->v${only.to})`
      : `${joinedList(changed.map((c) => `${PART_NAME[c.what]} (v${c.from}->v${c.to})`))} changed since submission`;
  return `Certification blocked: the review proof is stale: ${moved}, so it did not check ${changed.length === 1 ? 'it' : 'them'}; run gate submit again`;
}

const joinedList = (items: string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * The table lifecycle of spec §3, one row per line of its table (refusals split by cause). Rows are tried in
 * order and the first whose state, trigger and guard match decides, so a refusal row precedes the row it guards.
 */
export const TRANSITIONS: readonly TransitionRow[] = [
  {
    id: 'register.name_conflict',
    from: 'none',
    trigger: 'registered',
    when: 'nameTaken',
    outcome: nameConflict,
  },
  {
    id: 'register.source_conflict',
    from: 'none',
    trigger: 'registered',
    when: 'sourceTaken',
    outcome: {
      refuse: {
        status: 409,
        code: 'source_conflict',
        message: (ctx) =>
          `A governance artifact for source '${ctx.conflict?.kind === 'source' ? ctx.conflict.source : ''}' already exists`,
        details: existingIdOf,
      },
      audit: artifact('DEFINITION_REFUSED'),
    },
  },
  {
    id: 'register',
    from: 'none',
    trigger: 'registered',
    outcome: {
      next: 'QUARANTINED',
      effects: [{ type: 'enqueue_baseline_job' }],
      audit: artifact('DEFINITION_REGISTERED'),
      status: 202,
    },
  },
  {
    // The caller found a table already holding this definition: the same collision as a taken name.
    id: 'register.exists',
    from: 'any',
    trigger: 'registered',
    outcome: nameConflict,
  },
  {
    id: 'replace.not_found',
    from: 'none',
    trigger: 'replaced',
    outcome: {
      refuse: {
        status: 404,
        code: 'replace_target_not_found',
        message: 'No governance artifact has this governanceId: check replaceId / --replace',
      },
    },
  },
  {
    // §7.2 gives no status for this refusal; 400 like the other Mode B refusal (delete).
    id: 'replace.mode_b',
    from: 'any',
    trigger: 'replaced',
    when: 'isModeB',
    outcome: {
      refuse: {
        status: 400,
        code: 'mode_b_not_replaceable',
        message:
          'A Mode B (custody) table cannot be replaced by a governance artifact: manage it through the dashboard or the API',
      },
      audit: artifact('DEFINITION_REPLACE_REFUSED'),
    },
  },
  {
    // Replacing redefines (and de-certifies) the table, so it takes the same right as deleting it.
    id: 'replace.forbidden',
    from: 'any',
    trigger: 'replaced',
    when: 'mayNotReplace',
    outcome: {
      refuse: {
        status: 403,
        code: 'replace_forbidden',
        message: "Only table owners or workspace admins can replace this table's definition",
      },
      audit: artifact('DEFINITION_REPLACE_REFUSED'),
    },
  },
  {
    // Replacement also re-runs the auto-baseline and answers 202 with a job, like a registration (`push --replace --wait`).
    id: 'replace.certified',
    from: ['CERTIFIED'],
    trigger: 'replaced',
    outcome: {
      next: 'QUARANTINED',
      effects: [
        { type: 'reconcile_columns' },
        { type: 'file_recertification', cause: 'schema_change' },
        { type: 'enqueue_baseline_job' },
      ],
      audit: artifact('DEFINITION_REPLACED'),
      status: 202,
    },
  },
  {
    id: 'replace',
    from: 'any',
    trigger: 'replaced',
    outcome: {
      next: 'QUARANTINED',
      effects: [{ type: 'reconcile_columns' }, { type: 'enqueue_baseline_job' }],
      audit: artifact('DEFINITION_REPLACED'),
      status: 202,
    },
  },
  {
    id: 'gate_submit',
    from: 'any',
    trigger: 'gate_submitted',
    outcome: {
      next: 'PENDING_REVIEW',
      effects: [{ type: 'persist_proof' }, { type: 'notify_steward' }],
      audit: { action: 'GATE1_SUBMITTED', resource: 'gate_proof' },
    },
  },
  certifyBlocked(
    'data_changed_during_checks',
    'liveDataChanged',
    (ctx) =>
      `The rows of ${ctx.tableName ?? 'the table'} changed while the certification checks ran, so the checks did not see the data that would be certified; nothing was certified. Run certify again.`,
  ),
  certifyBlocked(
    'stale_proof',
    'proofMissingOrStale',
    (ctx) =>
      ctx.certification?.proof?.submittedAgain === true
        ? 'Certification blocked: the table was submitted again while certify checked it; review the new submission, then certify again'
        : staleProofMessage(ctx.certification?.proof),
    (ctx) => {
      const changed = ctx.certification?.proof?.changed;
      return changed && changed.length > 0 ? { changedSince: changed.map((c) => ({ ...c })) } : undefined;
    },
  ),
  certifyBlocked(
    'predicates_failed',
    'predicatesFailed',
    (ctx) =>
      `Certification blocked: Gate 1 predicates failed: ${(ctx.certification?.proof?.failedPredicates ?? []).join(', ')}`,
  ),
  certifyBlocked(
    'checks_failed',
    'liveChecksFailed',
    (ctx) =>
      `Certification blocked: Gate 1 checks fail on the data as it is now: ${liveFailures(ctx)
        .map((c) => `${c.name} (${c.detail})`)
        .join('; ')}. Fix the data or gate1.yml, then run gate submit again`,
    (ctx) => ({ failedChecks: liveFailures(ctx) }),
  ),
  certifyBlocked(
    'gate3_required',
    'gate3RequiredUnsatisfied',
    'Certification blocked: the workspace requires a passing Gate 3 run (gate run --gate 3 --baseline <reportId>)',
  ),
  certifyBlocked('inspection_policy_unmet', 'inspectionPolicyUnmet', (ctx) => {
    const detail = ctx.certification?.inspectionPolicyDetail;
    return `Certification blocked: the inspection policy is not met${detail ? ` (${detail})` : ''}`;
  }),
  {
    id: 'certify',
    from: ['PENDING_REVIEW'],
    trigger: 'certify',
    outcome: {
      next: 'CERTIFIED',
      effects: [{ type: 'write_version_snapshot' }, { type: 'publish_certified_view' }],
      audit: contract('TABLE_CERTIFIED'),
    },
  },
  {
    id: 'certify.not_pending_review',
    from: allExcept('PENDING_REVIEW'),
    trigger: 'certify',
    outcome: {
      refuse: {
        status: 400,
        code: 'not_pending_review',
        message: (_ctx, state) => certifyOutsideReview(stateOf(state)),
      },
      audit: contract('CERTIFICATION_REFUSED'),
    },
  },
  {
    id: 'reject',
    from: ['PENDING_REVIEW'],
    trigger: 'rejected',
    outcome: { next: 'QUARANTINED', effects: [], audit: contract('TABLE_REJECTED') },
  },
  {
    // The spec shows reject only from PENDING_REVIEW; anywhere else it is refused like certify.
    id: 'reject.not_pending_review',
    from: allExcept('PENDING_REVIEW'),
    trigger: 'rejected',
    outcome: {
      refuse: {
        status: 400,
        code: 'not_pending_review',
        message: (_ctx, state) =>
          `The table is ${stateOf(state)}, not PENDING_REVIEW: only a table under review can be rejected`,
      },
      audit: contract('REJECTION_REFUSED'),
    },
  },
  {
    // "State after recertification is not shown": the table stays CERTIFIED (consumers keep their view) and a
    // recertification request is filed; a steward then re-reviews it. Gate apply never notifies the steward.
    id: 'gate_apply.certified',
    from: ['CERTIFIED'],
    trigger: 'gate_applied',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'store_gate_rules_version' }, { type: 'file_recertification', cause: 'manual' }],
      audit: { action: 'GATE1_APPLIED', resource: 'gate_rules' },
    },
  },
  {
    id: 'gate_apply',
    from: 'any',
    trigger: 'gate_applied',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'store_gate_rules_version' }],
      audit: { action: 'GATE1_APPLIED', resource: 'gate_rules' },
    },
  },
  {
    // §3 says a mismatch is refused without a status; 400 (refused by rules).
    id: 'restore.env_mismatch',
    from: 'any',
    trigger: 'version_restored',
    when: 'envAssertionMismatch',
    outcome: {
      refuse: {
        status: 400,
        code: 'environment_mismatch',
        message: (ctx) =>
          `The table is in environment '${ctx.environment?.table ?? ''}', not '${ctx.environment?.asserted ?? ''}': nothing was restored`,
      },
      audit: contract('VERSION_RESTORE_REFUSED'),
    },
  },
  {
    id: 'restore.cross_environment',
    from: 'any',
    trigger: 'version_restored',
    when: 'versionFromOtherEnvironment',
    outcome: {
      refuse: {
        status: 400,
        code: 'cross_environment_restore',
        message: (ctx) =>
          `Cross-environment restore is unsupported: that version was certified in '${ctx.environment?.version ?? ''}', the table is in '${ctx.environment?.table ?? ''}'`,
      },
      audit: contract('VERSION_RESTORE_REFUSED'),
    },
  },
  {
    id: 'restore',
    from: ['CERTIFIED'],
    trigger: 'version_restored',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'write_restored_version' }, { type: 'file_recertification', cause: 'manual' }],
      audit: contract('CONTRACT_VERSION_RESTORED'),
    },
  },
  {
    // The spec shows restore only on a CERTIFIED table: elsewhere there is no live certified contract to put a version back on.
    id: 'restore.not_certified',
    from: allExcept('CERTIFIED'),
    trigger: 'version_restored',
    outcome: {
      refuse: {
        status: 400,
        code: 'not_certified',
        message: (_ctx, state) =>
          `The table is ${stateOf(state)}: a version can be restored only on a CERTIFIED table`,
      },
      audit: contract('VERSION_RESTORE_REFUSED'),
    },
  },
  {
    id: 'recertify.mode_b',
    from: 'any',
    trigger: 'recertify_signal',
    when: 'isModeB',
    outcome: {
      next: 'unchanged',
      effects: [],
      audit: contract('RECERTIFY_SIGNAL'),
      recertifyOutcome: 'not_governed',
    },
  },
  {
    // "Resulting state not shown": the table stays CERTIFIED with a recertification request filed (cause drift when
    // the manifest shows the definition changed, else ingest).
    id: 'recertify.certified.drift',
    from: ['CERTIFIED'],
    trigger: 'recertify_signal',
    when: 'driftDetected',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'record_ingest' }, { type: 'file_recertification', cause: 'drift' }],
      audit: contract('RECERTIFY_SIGNAL'),
      recertifyOutcome: 'recert_filed',
    },
  },
  {
    id: 'recertify.certified',
    from: ['CERTIFIED'],
    trigger: 'recertify_signal',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'record_ingest' }, { type: 'file_recertification', cause: 'ingest' }],
      audit: contract('RECERTIFY_SIGNAL'),
      recertifyOutcome: 'recert_filed',
    },
  },
  {
    // A governed table that is not CERTIFIED has nothing to recertify; the recorded ingest makes its proof stale.
    id: 'recertify.not_certified',
    from: allExcept('CERTIFIED'),
    trigger: 'recertify_signal',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'record_ingest' }],
      audit: contract('RECERTIFY_SIGNAL'),
      recertifyOutcome: 'not_certified',
    },
  },
  {
    // §7's order: who may not delete hears that (403) before anything of the table's mode (400).
    id: 'delete.forbidden',
    from: 'any',
    trigger: 'deleted',
    when: 'notOwnerOrAdmin',
    outcome: {
      refuse: {
        status: 403,
        code: 'delete_forbidden',
        message: 'Only table owners or workspace admins can delete',
      },
      audit: artifact('DELETE_REFUSED'),
    },
  },
  {
    id: 'delete.mode_b',
    from: 'any',
    trigger: 'deleted',
    when: 'isModeB',
    outcome: {
      refuse: {
        status: 400,
        code: 'mode_b_delete',
        message: 'CLI delete is restricted to warehouse-connected governance artifacts',
      },
      audit: artifact('DELETE_REFUSED'),
    },
  },
  {
    id: 'delete',
    from: 'any',
    trigger: 'deleted',
    outcome: { next: 'SOFT_DELETED', effects: [{ type: 'soft_delete' }], audit: artifact('TABLE_DELETED') },
  },
  {
    id: 'gate_run',
    from: 'any',
    trigger: 'gate_run',
    // §3: a dry run; nothing persisted, not even an audit entry.
    outcome: { next: 'unchanged', effects: [] },
  },
  {
    id: 'gate_run_detached.no_baseline',
    from: 'any',
    trigger: 'gate_run_detached',
    when: 'gate3WithoutBaseline',
    outcome: {
      refuse: {
        status: 400,
        code: 'baseline_required',
        message: '--baseline <reportId> is required for Gate 3',
      },
      audit: { action: 'GATE_JOB_REFUSED', resource: 'gate_job' },
    },
  },
  {
    id: 'gate_run_detached',
    from: 'any',
    trigger: 'gate_run_detached',
    outcome: {
      next: 'unchanged',
      effects: [{ type: 'enqueue_detached_job' }],
      audit: { action: 'GATE_JOB_ENQUEUED', resource: 'gate_job' },
    },
  },
  {
    id: 'table_not_found',
    from: 'none',
    trigger: 'any',
    outcome: { refuse: { status: 404, code: 'table_not_found', message: 'Table not found' } },
  },
];
