/** Table lifecycle states that appear in the spec (§3). Nothing in the transition table enters BASELINE_VERIFIED or CORE. */
export const LIFECYCLE_STATES = [
  'QUARANTINED',
  'PENDING_REVIEW',
  'CERTIFIED',
  'BASELINE_VERIFIED',
  'CORE',
] as const;
export type LifecycleState = (typeof LIFECYCLE_STATES)[number];

/** What ends a table's life: the governance record is soft-deleted (the warehouse object is untouched). */
export const SOFT_DELETED = 'SOFT_DELETED';
export type NextState = LifecycleState | typeof SOFT_DELETED;

/** What happened, named after the request that caused it. */
export const TRIGGERS = [
  'registered', // POST /api/workspace/definitions without replaceId, or `push`
  'replaced', // replaceId / `push --replace`
  'gate_submitted', // `gate submit`: full scan, steward handoff
  'certify', // POST .../semantic-contract/certify or `certify`
  'rejected', // `reject --reason`
  'gate_applied', // `gate apply`: a new gate1.yml version
  'version_restored', // `versions restore`
  'recertify_signal', // POST /api/workspace/recertify naming this table
  'deleted', // `delete` / DELETE
  'gate_run', // `gate run` (Gate 1 dry run)
  'gate_run_detached', // `gate run --gate 2|3`
] as const;
export type Trigger = (typeof TRIGGERS)[number];

export type CustodyMode = 'MODE_A' | 'MODE_B';

/** Causes of a recertification request (as listed by `recertification list`). */
export type RecertificationCause = 'drift' | 'schema_change' | 'ingest' | 'manual' | 'rebuild';

/** What the caller of `transition` knows about the request; each guard reads only the fields it needs. */
export interface TransitionContext {
  /** Custody mode of the table (Mode A for a definition being registered). */
  mode: CustodyMode;
  /** Table name, for messages. */
  tableName?: string;
  /**
   * registered: an existing artifact already uses this name, or this source (`schema.table`); `existingId` is
   * its table id, sent in the 409's details so a caller that cannot list tables can replace it.
   */
  conflict?: (
    { kind: 'name'; existingId?: string } | { kind: 'source'; source: string; existingId?: string }
  ) & {
    /** false when the table holding the name or source cannot be replaced by a push (a Mode B table). */
    replaceable?: boolean;
    /** Why it cannot, for the 409's details. */
    reason?: string;
  };
  /**
   * deleted, replaced: who asks. A person: their workspace role and whether they own the table. A MANAGEMENT
   * token (replace through `POST /api/workspace/definitions`): the workspace scopes it holds.
   */
  actor?: { role: string; isTableOwner: boolean } | { tokenScopes: readonly string[] };
  /** certify: what certification checks; absent means no review proof exists. */
  certification?: {
    /** The latest persisted review proof; absent when none. `fresh` is false when the definition, gate1.yml, data or contract changed after it. */
    proof?: {
      fresh: boolean;
      failedPredicates: string[];
      /** The table was submitted again while certify checked the submission before (not fresh then). */
      submittedAgain?: boolean;
      /** What moved after the proof (definition, gate1.yml, data, contract), from the proof's version to the table's. */
      changed?: Array<{ what: 'definition' | 'gate1' | 'data' | 'contract'; from: number; to: number }>;
    };
    /**
     * §2.11: the 6 baseline predicates and the gate1.yml checks, run again at certify time on the data as it is
     * now (a warehouse may change outside the service after the proof); the HARD_FAIL checks that failed.
     */
    liveChecks: {
      failed: Array<{ name: string; detail: string }>;
      /** The rows changed between those checks and the certify transaction: they did not see them. */
      dataChanged?: boolean;
    };
    gate3Required: boolean;
    gate3Satisfied: boolean;
    inspectionPolicyMet: boolean;
    /** Why the inspection policy is unmet, for the message. */
    inspectionPolicyDetail?: string;
  };
  /** gate_run_detached: which gate, and the baseline report Gate 3 compares against. */
  gate?: 2 | 3;
  baselineReportId?: string;
  /** recertify_signal: the manifest showed the relation's definition changed. */
  driftDetected?: boolean;
  /** version_restored: the table's environment, the one asserted with `--env`, and the one the restored version was certified in. */
  environment?: { table: string; asserted?: string; version?: string };
}

/** A side effect the engine carries out after a transition, in order. */
export type Effect =
  | { type: 'enqueue_baseline_job' }
  | { type: 'reconcile_columns' }
  | { type: 'file_recertification'; cause: RecertificationCause }
  | { type: 'persist_proof' }
  | { type: 'notify_steward' }
  | { type: 'write_version_snapshot' }
  | { type: 'publish_certified_view' }
  | { type: 'store_gate_rules_version' }
  | { type: 'write_restored_version' }
  | { type: 'record_ingest' }
  | { type: 'soft_delete' }
  | { type: 'enqueue_detached_job' };

export type AuditResource =
  'governance_artifact' | 'gate_proof' | 'gate_rules' | 'gate_job' | 'semantic_contract';

export interface AuditRecord {
  action: string;
  resource: AuditResource;
}

/** Outcome per table of the recertification signal (§4.8). `not_certified` is ours: a governed table with nothing to recertify. */
export type RecertifyOutcome = 'recert_filed' | 'not_governed' | 'not_certified';

export type RefusalStatus = 400 | 403 | 404 | 409 | 422;

export type TransitionResult =
  | {
      ok: true;
      /** Id of the row that matched. */
      row: string;
      next: NextState;
      effects: Effect[];
      /** What the audit log records; absent only for a Gate 1 dry run, which persists nothing (§3). */
      audit?: AuditRecord;
      /** The HTTP status where the spec fixes one. */
      status?: 202;
      recertifyOutcome?: RecertifyOutcome;
    }
  | {
      ok: false;
      row: string;
      status: RefusalStatus;
      code: string;
      message: string;
      /** What the error's `details` carry besides the table (e.g. the checks that failed). */
      details?: Record<string, unknown>;
      /** Every refusal but a 404 is audited too, so the trail shows blocked and refused attempts. */
      audit?: AuditRecord;
    };
