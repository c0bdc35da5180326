import { describe, expect, it } from 'vitest';
import { LIFECYCLE_STATES, TRANSITIONS, TRIGGERS, transition } from '../../../src/core/lifecycle/index.js';
import type {
  AuditRecord,
  LifecycleState,
  TransitionContext,
  TransitionResult,
  Trigger,
} from '../../../src/core/lifecycle/index.js';

const modeA: TransitionContext = { mode: 'MODE_A', tableName: 'orders' };
const modeB: TransitionContext = { mode: 'MODE_B', tableName: 'customers' };
const certifiable: NonNullable<TransitionContext['certification']> = {
  proof: { fresh: true, failedPredicates: [] },
  liveChecks: { failed: [] },
  gate3Required: false,
  gate3Satisfied: false,
  inspectionPolicyMet: true,
};
const owner = { role: 'STEWARD', isTableOwner: true };
/** What a proof is stale by: gate1.yml and the contract both moved since the submission. */
const gate1AndContractMoved = [
  { what: 'gate1' as const, from: 2, to: 3 },
  { what: 'contract' as const, from: 1, to: 2 },
];
const replacedAudit: AuditRecord = { action: 'DEFINITION_REPLACED', resource: 'governance_artifact' };
/** A replacement of a CERTIFIED table: reconciled, back to QUARANTINED, a schema_change recertification filed. */
const replacedCertified: WithoutRow<TransitionResult> = {
  ok: true,
  next: 'QUARANTINED',
  effects: [
    { type: 'reconcile_columns' },
    { type: 'file_recertification', cause: 'schema_change' },
    { type: 'enqueue_baseline_job' },
  ],
  audit: replacedAudit,
  status: 202,
};
/** A replacement of any other table: no recertification. */
const replacedUncertified: WithoutRow<TransitionResult> = {
  ok: true,
  next: 'QUARANTINED',
  effects: [{ type: 'reconcile_columns' }, { type: 'enqueue_baseline_job' }],
  audit: replacedAudit,
  status: 202,
};
const replaceForbidden = {
  ok: false,
  status: 403,
  code: 'replace_forbidden',
  message: "Only table owners or workspace admins can replace this table's definition",
  audit: { action: 'DEFINITION_REPLACE_REFUSED', resource: 'governance_artifact' },
} as const;

/** Distributive Omit, so each branch of the result union keeps its own fields. */
type WithoutRow<T> = T extends unknown ? Omit<T, 'row'> : never;

interface Case {
  row: string;
  title: string;
  state: LifecycleState | null;
  trigger: Trigger;
  context: TransitionContext;
  expected: WithoutRow<TransitionResult>;
}

/** certify outside PENDING_REVIEW: 400 not_pending_review, with a message right for the state. */
function certifyOutsideReview(state: LifecycleState, says: string, message: string): Case {
  return {
    row: 'certify.not_pending_review',
    title: `certify on a ${state} table is 400 and ${says}`,
    state,
    trigger: 'certify',
    context: { ...modeA, certification: certifiable },
    expected: {
      ok: false,
      status: 400,
      code: 'not_pending_review',
      message,
      audit: { action: 'CERTIFICATION_REFUSED', resource: 'semantic_contract' },
    },
  };
}

/** Each expected outcome is written out from spec §3 (and the decisions noted there), not read from the table. */
const CASES: Case[] = [
  {
    row: 'register',
    title: 'a new definition is QUARANTINED, enqueues the auto-baseline job and answers 202',
    state: null,
    trigger: 'registered',
    context: modeA,
    expected: {
      ok: true,
      next: 'QUARANTINED',
      effects: [{ type: 'enqueue_baseline_job' }],
      audit: { action: 'DEFINITION_REGISTERED', resource: 'governance_artifact' },
      status: 202,
    },
  },
  {
    row: 'register.name_conflict',
    title: 'a new definition whose name is taken is 409 with the spec message',
    state: null,
    trigger: 'registered',
    context: { ...modeA, conflict: { kind: 'name', existingId: 'tbl_held' } },
    expected: {
      ok: false,
      status: 409,
      code: 'name_conflict',
      message: "A governance artifact named 'orders' already exists",
      details: { existingId: 'tbl_held' },
      audit: { action: 'DEFINITION_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'register.source_conflict',
    title: 'a new definition whose source is taken is 409 naming the source',
    state: null,
    trigger: 'registered',
    context: { ...modeA, conflict: { kind: 'source', source: 'raw.orders', existingId: 'tbl_held' } },
    expected: {
      ok: false,
      status: 409,
      code: 'source_conflict',
      message: "A governance artifact for source 'raw.orders' already exists",
      details: { existingId: 'tbl_held' },
      audit: { action: 'DEFINITION_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'register.exists',
    title: 'registering over an existing table is a name collision',
    state: 'CERTIFIED',
    trigger: 'registered',
    context: modeA,
    expected: {
      ok: false,
      status: 409,
      code: 'name_conflict',
      message: "A governance artifact named 'orders' already exists",
      details: {},
      audit: { action: 'DEFINITION_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'replace.not_found',
    title: 'replacing an unknown governanceId is 404',
    state: null,
    trigger: 'replaced',
    context: modeA,
    expected: {
      ok: false,
      status: 404,
      code: 'replace_target_not_found',
      message: expect.stringContaining('replaceId') as string,
    },
  },
  {
    row: 'replace.mode_b',
    title: 'a Mode B table is never replaced',
    state: 'CERTIFIED',
    trigger: 'replaced',
    context: modeB,
    expected: {
      ok: false,
      status: 400,
      code: 'mode_b_not_replaceable',
      message: expect.stringContaining('Mode B') as string,
      audit: { action: 'DEFINITION_REPLACE_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'replace.forbidden',
    title: 'a MEMBER who does not own the table cannot replace its definition, as with delete',
    state: 'CERTIFIED',
    trigger: 'replaced',
    context: { ...modeA, actor: { role: 'MEMBER', isTableOwner: false } },
    expected: replaceForbidden,
  },
  {
    row: 'replace.forbidden',
    title: 'a replace without a known actor is refused',
    state: 'QUARANTINED',
    trigger: 'replaced',
    context: modeA,
    expected: replaceForbidden,
  },
  {
    row: 'replace.forbidden',
    title: 'a MANAGEMENT token without workspace:write:definition cannot replace',
    state: 'PENDING_REVIEW',
    trigger: 'replaced',
    context: { ...modeA, actor: { tokenScopes: ['workspace:read:tables'] } },
    expected: replaceForbidden,
  },
  {
    row: 'replace',
    title: 'a workspace ADMIN replaces a table someone else owns',
    state: 'QUARANTINED',
    trigger: 'replaced',
    context: { ...modeA, actor: { role: 'ADMIN', isTableOwner: false } },
    expected: replacedUncertified,
  },
  {
    row: 'replace.certified',
    title: 'a MANAGEMENT token with workspace:write:definition keeps its right to replace (§4.7)',
    state: 'CERTIFIED',
    trigger: 'replaced',
    context: { ...modeA, actor: { tokenScopes: ['workspace:write:definition'] } },
    expected: replacedCertified,
  },
  {
    row: 'replace.certified',
    title:
      'replacing a CERTIFIED table reconciles columns, resets to QUARANTINED and files a recertification',
    state: 'CERTIFIED',
    trigger: 'replaced',
    context: { ...modeA, actor: owner },
    expected: replacedCertified,
  },
  {
    row: 'replace',
    title: 'replacing a PENDING_REVIEW table resets it to QUARANTINED without a recertification',
    state: 'PENDING_REVIEW',
    trigger: 'replaced',
    context: { ...modeA, actor: owner },
    expected: replacedUncertified,
  },
  {
    row: 'replace',
    title: 'replacing a CORE table (not CERTIFIED) files no recertification',
    state: 'CORE',
    trigger: 'replaced',
    context: { ...modeA, actor: owner },
    expected: replacedUncertified,
  },
  {
    row: 'gate_submit',
    title: 'gate submit from QUARANTINED persists the proof, notifies the steward, moves to PENDING_REVIEW',
    state: 'QUARANTINED',
    trigger: 'gate_submitted',
    context: modeA,
    expected: {
      ok: true,
      next: 'PENDING_REVIEW',
      effects: [{ type: 'persist_proof' }, { type: 'notify_steward' }],
      audit: { action: 'GATE1_SUBMITTED', resource: 'gate_proof' },
    },
  },
  {
    row: 'gate_submit',
    title: 'gate submit works on a Mode B CERTIFIED table too (any state, any mode)',
    state: 'CERTIFIED',
    trigger: 'gate_submitted',
    context: modeB,
    expected: {
      ok: true,
      next: 'PENDING_REVIEW',
      effects: [{ type: 'persist_proof' }, { type: 'notify_steward' }],
      audit: { action: 'GATE1_SUBMITTED', resource: 'gate_proof' },
    },
  },
  {
    row: 'certify',
    title:
      'certify with a fresh passing proof writes a snapshot, publishes the view and audits TABLE_CERTIFIED',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: { ...modeA, certification: certifiable },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'write_version_snapshot' }, { type: 'publish_certified_view' }],
      audit: { action: 'TABLE_CERTIFIED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify',
    title: 'Gate 3 required and satisfied does not block',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: { ...modeA, certification: { ...certifiable, gate3Required: true, gate3Satisfied: true } },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'write_version_snapshot' }, { type: 'publish_certified_view' }],
      audit: { action: 'TABLE_CERTIFIED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.stale_proof',
    title: 'certify with a stale proof is 422',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: { ...modeA, certification: { ...certifiable, proof: { fresh: false, failedPredicates: [] } } },
    expected: {
      ok: false,
      status: 422,
      code: 'stale_proof',
      message: expect.stringContaining('stale') as string,
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.stale_proof',
    title:
      'certify with a proof the contract and gate1.yml both moved past names both, and lists them in details',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: {
      ...modeA,
      certification: {
        ...certifiable,
        proof: {
          fresh: false,
          failedPredicates: [],
          changed: gate1AndContractMoved,
        },
      },
    },
    expected: {
      ok: false,
      status: 422,
      code: 'stale_proof',
      message:
        'Certification blocked: the review proof is stale: gate1.yml (v2->v3) and the semantic contract (v1->v2) ' +
        'changed since submission, so it did not check them; run gate submit again',
      details: { changedSince: gate1AndContractMoved },
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.stale_proof',
    title: 'certify without any proof is 422 saying there is none (stale wins over failed predicates)',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: { ...modeA, certification: { ...certifiable, proof: undefined } },
    expected: {
      ok: false,
      status: 422,
      code: 'stale_proof',
      message: expect.stringContaining('no review proof') as string,
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.stale_proof',
    title: 'certify with no certification context at all is blocked, never certified',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: modeA,
    expected: {
      ok: false,
      status: 422,
      code: 'stale_proof',
      message: expect.stringContaining('no review proof') as string,
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.predicates_failed',
    title: 'certify with failed predicates is 422 naming them',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: {
      ...modeA,
      certification: {
        ...certifiable,
        proof: { fresh: true, failedPredicates: ['grain_uniqueness', 'email_format'] },
      },
    },
    expected: {
      ok: false,
      status: 422,
      code: 'predicates_failed',
      message: 'Certification blocked: Gate 1 predicates failed: grain_uniqueness, email_format',
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.checks_failed',
    title:
      'certify with a passing proof whose checks fail on the data as it is now is 422 naming them (§2.11)',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: {
      ...modeA,
      certification: {
        ...certifiable,
        liveChecks: {
          failed: [{ name: 'null_rate.category_name', detail: '3 of 20 rows are null (15%)' }],
        },
      },
    },
    expected: {
      ok: false,
      status: 422,
      code: 'checks_failed',
      message:
        'Certification blocked: Gate 1 checks fail on the data as it is now: null_rate.category_name (3 of 20 rows are null (15%)). Fix the data or gate1.yml, then run gate submit again',
      details: {
        failedChecks: [{ name: 'null_rate.category_name', detail: '3 of 20 rows are null (15%)' }],
      },
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.data_changed_during_checks',
    title:
      'certify whose rows changed after its checks is 422 before any other cause, audited like the others',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: {
      ...modeA,
      certification: {
        ...certifiable,
        proof: { fresh: false, failedPredicates: ['grain_uniqueness'] },
        liveChecks: { failed: [], dataChanged: true },
      },
    },
    expected: {
      ok: false,
      status: 422,
      code: 'data_changed_during_checks',
      message:
        'The rows of orders changed while the certification checks ran, so the checks did not see the data that would be certified; nothing was certified. Run certify again.',
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.gate3_required',
    title: 'certify when the workspace requires Gate 3 and none passed is 422',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: { ...modeA, certification: { ...certifiable, gate3Required: true, gate3Satisfied: false } },
    expected: {
      ok: false,
      status: 422,
      code: 'gate3_required',
      message: expect.stringContaining('Gate 3') as string,
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'certify.blocked.inspection_policy_unmet',
    title: 'certify with the inspection policy unmet is 422 with its detail',
    state: 'PENDING_REVIEW',
    trigger: 'certify',
    context: {
      ...modeA,
      certification: {
        ...certifiable,
        inspectionPolicyMet: false,
        inspectionPolicyDetail: 'two reviewers required',
      },
    },
    expected: {
      ok: false,
      status: 422,
      code: 'inspection_policy_unmet',
      message: 'Certification blocked: the inspection policy is not met (two reviewers required)',
      audit: { action: 'CERTIFICATION_BLOCKED', resource: 'semantic_contract' },
    },
  },
  certifyOutsideReview(
    'QUARANTINED',
    'names the state and the way to review',
    'The table is QUARANTINED, not PENDING_REVIEW: run gate submit before certifying',
  ),
  // Not "run gate submit": that would send the certified table back to review, withdrawing its view.
  certifyOutsideReview(
    'CERTIFIED',
    'says there is nothing to do',
    'The table is already CERTIFIED: nothing to do',
  ),
  certifyOutsideReview(
    'CORE',
    'names the state, without sending it to gate submit',
    'The table is CORE, not PENDING_REVIEW: only a table in review can be certified',
  ),
  {
    row: 'reject',
    title: 'reject sends a PENDING_REVIEW table back to QUARANTINED with an audit entry',
    state: 'PENDING_REVIEW',
    trigger: 'rejected',
    context: modeA,
    expected: {
      ok: true,
      next: 'QUARANTINED',
      effects: [],
      audit: { action: 'TABLE_REJECTED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'reject.not_pending_review',
    title: 'reject on a CERTIFIED table is 400',
    state: 'CERTIFIED',
    trigger: 'rejected',
    context: modeA,
    expected: {
      ok: false,
      status: 400,
      code: 'not_pending_review',
      message: expect.stringContaining('CERTIFIED') as string,
      audit: { action: 'REJECTION_REFUSED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'gate_apply.certified',
    title:
      'gate apply on a CERTIFIED table stores the version, files a recertification, stays CERTIFIED, notifies nobody',
    state: 'CERTIFIED',
    trigger: 'gate_applied',
    context: modeA,
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'store_gate_rules_version' }, { type: 'file_recertification', cause: 'manual' }],
      audit: { action: 'GATE1_APPLIED', resource: 'gate_rules' },
    },
  },
  {
    row: 'gate_apply',
    title: 'gate apply on a QUARANTINED table only stores the version',
    state: 'QUARANTINED',
    trigger: 'gate_applied',
    context: modeA,
    expected: {
      ok: true,
      next: 'QUARANTINED',
      effects: [{ type: 'store_gate_rules_version' }],
      audit: { action: 'GATE1_APPLIED', resource: 'gate_rules' },
    },
  },
  {
    row: 'restore',
    title:
      'versions restore on a CERTIFIED table cuts a new version and files a recertification instead of certifying',
    state: 'CERTIFIED',
    trigger: 'version_restored',
    context: { ...modeA, environment: { table: 'dev', asserted: 'dev', version: 'dev' } },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'write_restored_version' }, { type: 'file_recertification', cause: 'manual' }],
      audit: { action: 'CONTRACT_VERSION_RESTORED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'restore.env_mismatch',
    title: 'versions restore --env naming another environment is refused',
    state: 'CERTIFIED',
    trigger: 'version_restored',
    context: { ...modeA, environment: { table: 'dev', asserted: 'production', version: 'dev' } },
    expected: {
      ok: false,
      status: 400,
      code: 'environment_mismatch',
      message: "The table is in environment 'dev', not 'production': nothing was restored",
      audit: { action: 'VERSION_RESTORE_REFUSED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'restore.cross_environment',
    title: 'restoring a version certified in another environment is refused',
    state: 'CERTIFIED',
    trigger: 'version_restored',
    context: { ...modeA, environment: { table: 'production', version: 'staging' } },
    expected: {
      ok: false,
      status: 400,
      code: 'cross_environment_restore',
      message:
        "Cross-environment restore is unsupported: that version was certified in 'staging', the table is in 'production'",
      audit: { action: 'VERSION_RESTORE_REFUSED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'restore.not_certified',
    title: 'versions restore on a QUARANTINED table is refused',
    state: 'QUARANTINED',
    trigger: 'version_restored',
    context: { ...modeA, environment: { table: 'dev' } },
    expected: {
      ok: false,
      status: 400,
      code: 'not_certified',
      message: 'The table is QUARANTINED: a version can be restored only on a CERTIFIED table',
      audit: { action: 'VERSION_RESTORE_REFUSED', resource: 'semantic_contract' },
    },
  },
  {
    row: 'recertify.certified',
    title:
      'the recertification signal on a CERTIFIED Mode A table files a request (ingest) and stays CERTIFIED',
    state: 'CERTIFIED',
    trigger: 'recertify_signal',
    context: modeA,
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'record_ingest' }, { type: 'file_recertification', cause: 'ingest' }],
      audit: { action: 'RECERTIFY_SIGNAL', resource: 'semantic_contract' },
      recertifyOutcome: 'recert_filed',
    },
  },
  {
    row: 'recertify.certified.drift',
    title: 'the signal with drift detected files a drift request',
    state: 'CERTIFIED',
    trigger: 'recertify_signal',
    context: { ...modeA, driftDetected: true },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'record_ingest' }, { type: 'file_recertification', cause: 'drift' }],
      audit: { action: 'RECERTIFY_SIGNAL', resource: 'semantic_contract' },
      recertifyOutcome: 'recert_filed',
    },
  },
  {
    row: 'recertify.mode_b',
    title: 'the signal naming a Mode B table is a silent no-op: not_governed',
    state: 'CERTIFIED',
    trigger: 'recertify_signal',
    context: { ...modeB, driftDetected: true },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [],
      audit: { action: 'RECERTIFY_SIGNAL', resource: 'semantic_contract' },
      recertifyOutcome: 'not_governed',
    },
  },
  {
    row: 'recertify.not_certified',
    title: 'the signal on a PENDING_REVIEW table records the ingest (its proof goes stale) and files nothing',
    state: 'PENDING_REVIEW',
    trigger: 'recertify_signal',
    context: modeA,
    expected: {
      ok: true,
      next: 'PENDING_REVIEW',
      effects: [{ type: 'record_ingest' }],
      audit: { action: 'RECERTIFY_SIGNAL', resource: 'semantic_contract' },
      recertifyOutcome: 'not_certified',
    },
  },
  {
    row: 'delete',
    title: 'the table owner soft-deletes a Mode A table',
    state: 'CERTIFIED',
    trigger: 'deleted',
    context: { ...modeA, actor: owner },
    expected: {
      ok: true,
      next: 'SOFT_DELETED',
      effects: [{ type: 'soft_delete' }],
      audit: { action: 'TABLE_DELETED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete',
    title: 'a workspace ADMIN who does not own the table may delete it',
    state: 'QUARANTINED',
    trigger: 'deleted',
    context: { ...modeA, actor: { role: 'ADMIN', isTableOwner: false } },
    expected: {
      ok: true,
      next: 'SOFT_DELETED',
      effects: [{ type: 'soft_delete' }],
      audit: { action: 'TABLE_DELETED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete',
    title: 'the workspace OWNER may delete it',
    state: 'QUARANTINED',
    trigger: 'deleted',
    context: { ...modeA, actor: { role: 'OWNER', isTableOwner: false } },
    expected: {
      ok: true,
      next: 'SOFT_DELETED',
      effects: [{ type: 'soft_delete' }],
      audit: { action: 'TABLE_DELETED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete.mode_b',
    title: 'deleting a Mode B table is 400 with the spec message, even for its owner',
    state: 'CERTIFIED',
    trigger: 'deleted',
    context: { ...modeB, actor: owner },
    expected: {
      ok: false,
      status: 400,
      code: 'mode_b_delete',
      message: 'CLI delete is restricted to warehouse-connected governance artifacts',
      audit: { action: 'DELETE_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete.forbidden',
    title: 'a non-owner deleting a Mode B table hears about the role first (§7: 403 before 400)',
    state: 'QUARANTINED',
    trigger: 'deleted',
    context: { ...modeB, actor: { role: 'STEWARD', isTableOwner: false } },
    expected: {
      ok: false,
      status: 403,
      code: 'delete_forbidden',
      message: 'Only table owners or workspace admins can delete',
      audit: { action: 'DELETE_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete.forbidden',
    title: 'a STEWARD who does not own the table cannot delete it',
    state: 'QUARANTINED',
    trigger: 'deleted',
    context: { ...modeA, actor: { role: 'STEWARD', isTableOwner: false } },
    expected: {
      ok: false,
      status: 403,
      code: 'delete_forbidden',
      message: 'Only table owners or workspace admins can delete',
      audit: { action: 'DELETE_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'delete.forbidden',
    title: 'a delete without a known actor is refused',
    state: 'QUARANTINED',
    trigger: 'deleted',
    context: modeA,
    expected: {
      ok: false,
      status: 403,
      code: 'delete_forbidden',
      message: 'Only table owners or workspace admins can delete',
      audit: { action: 'DELETE_REFUSED', resource: 'governance_artifact' },
    },
  },
  {
    row: 'gate_run',
    title: 'a Gate 1 dry run changes nothing and persists nothing, not even an audit entry (§3)',
    state: 'PENDING_REVIEW',
    trigger: 'gate_run',
    context: modeA,
    expected: {
      ok: true,
      next: 'PENDING_REVIEW',
      effects: [],
    },
  },
  {
    row: 'gate_run_detached',
    title: 'gate run --gate 2 enqueues a detached evidence-only job',
    state: 'CERTIFIED',
    trigger: 'gate_run_detached',
    context: { ...modeA, gate: 2 },
    expected: {
      ok: true,
      next: 'CERTIFIED',
      effects: [{ type: 'enqueue_detached_job' }],
      audit: { action: 'GATE_JOB_ENQUEUED', resource: 'gate_job' },
    },
  },
  {
    row: 'gate_run_detached',
    title: 'gate run --gate 3 with a baseline enqueues the job',
    state: 'QUARANTINED',
    trigger: 'gate_run_detached',
    context: { ...modeA, gate: 3, baselineReportId: 'rep_1' },
    expected: {
      ok: true,
      next: 'QUARANTINED',
      effects: [{ type: 'enqueue_detached_job' }],
      audit: { action: 'GATE_JOB_ENQUEUED', resource: 'gate_job' },
    },
  },
  {
    row: 'gate_run_detached.no_baseline',
    title: 'gate run --gate 3 without --baseline is refused with the spec message',
    state: 'QUARANTINED',
    trigger: 'gate_run_detached',
    context: { ...modeA, gate: 3, baselineReportId: '  ' },
    expected: {
      ok: false,
      status: 400,
      code: 'baseline_required',
      message: '--baseline <reportId> is required for Gate 3',
      audit: { action: 'GATE_JOB_REFUSED', resource: 'gate_job' },
    },
  },
  {
    row: 'table_not_found',
    title: 'any other trigger on a table that does not exist is 404',
    state: null,
    trigger: 'certify',
    context: { ...modeA, certification: certifiable },
    expected: { ok: false, status: 404, code: 'table_not_found', message: 'Table not found' },
  },
];

describe('lifecycle transition table (spec §3), row by row', () => {
  it.each(CASES)('$row: $title', ({ row, state, trigger, context, expected }) => {
    expect(transition(state, trigger, context)).toEqual({ row, ...expected });
  });

  it('has a case for every row of the table, and no case names a row that does not exist', () => {
    const rows = TRANSITIONS.map((r) => r.id);
    expect(new Set(rows).size).toBe(rows.length);
    expect([...new Set(CASES.map((c) => c.row))].sort()).toEqual([...rows].sort());
  });
});

describe('lifecycle transition function', () => {
  const contexts: TransitionContext[] = [
    modeA,
    modeB,
    { ...modeA, actor: owner, certification: certifiable, gate: 3, environment: { table: 'dev' } },
    { ...modeB, conflict: { kind: 'name' }, driftDetected: true, gate: 2 },
  ];
  const states: Array<LifecycleState | null> = [null, ...LIFECYCLE_STATES];
  const combos = states.flatMap((state) =>
    TRIGGERS.flatMap((trigger) => contexts.map((context) => ({ state, trigger, context }))),
  );

  it('answers every state, trigger and context, with an audit action on everything but a 404 and a dry run', () => {
    for (const { state, trigger, context } of combos) {
      const result = transition(state, trigger, context);
      const dryRun = result.ok && trigger === 'gate_run';
      if (dryRun) expect(result.audit).toBeUndefined();
      else if (result.ok || result.status !== 404) expect(result.audit?.action).toMatch(/^[A-Z0-9_]+$/);
    }
  });

  it('never notifies the steward except on gate submit', () => {
    for (const { state, trigger, context } of combos) {
      const result = transition(state, trigger, context);
      const notifies = result.ok && result.effects.some((e) => e.type === 'notify_steward');
      expect(notifies).toBe(trigger === 'gate_submitted' && state !== null);
    }
  });

  it('certifies only from PENDING_REVIEW, and nothing enters BASELINE_VERIFIED or CORE', () => {
    for (const { state, trigger, context } of combos) {
      const result = transition(state, trigger, context);
      if (result.ok && result.next === 'CERTIFIED' && state !== 'CERTIFIED')
        expect(state).toBe('PENDING_REVIEW');
      if (result.ok && (result.next === 'BASELINE_VERIFIED' || result.next === 'CORE'))
        expect(result.next).toBe(state);
    }
  });

  it('hands out fresh effect objects: mutating one result does not change the next', () => {
    const first = transition('CERTIFIED', 'replaced', { ...modeA, actor: owner });
    if (!first.ok) throw new Error('expected a transition');
    first.effects.length = 0;
    if (!first.audit) throw new Error('expected an audit record');
    first.audit.action = 'CHANGED';
    const second = transition('CERTIFIED', 'replaced', { ...modeA, actor: owner });
    expect(second.ok && second.effects.length).toBe(3);
    expect(second.ok && second.audit?.action).toBe('DEFINITION_REPLACED');
  });
});
