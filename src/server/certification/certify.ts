// Certification (§4.6): what certify checks (fresh proof, predicates, the Gate 1 checks run again on the
// data as it is now, Gate 3, inspection policy) and what it does on success (version snapshot, live contract stamped, certified view published).
import type { TransitionContext } from '../../core/lifecycle/index.js';
import { MAX_FILE_NAME_CHARS, MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import type { Caller } from '../auth/caller.js';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/handle.js';
import { badRequest, HttpError } from '../errors.js';
import { checkTextLength } from '../input-rule.js';
import type { Gate1Proof } from '../gates/gate1-runner.js';
import { runGate1WithDigest } from '../gates/gate1-runner.js';
import { changedSince, latestSubmitProof } from '../gates/proofs.js';
import { rowsChangedSince } from '../gates/snapshot.js';
import type { GateTable } from '../gates/table.js';
import { applyTrigger } from '../governance/engine.js';
import type { TableRow } from '../governance/tables.js';
import { getWorkspaceConfig } from './config.js';
import { appendVersion, fieldsOf, liveContract, updateContract } from './contracts.js';
import { resolveOpenRequests } from '../governance/recertification-requests.js';
import { publishCertifiedView } from './view.js';
import { certifiedViewName } from './view-name.js';

export interface CertifyBody {
  note?: string;
  evidenceFileName?: string;
  evidenceHash?: string;
  evidenceSize?: number;
  /** The submission (its proof's id) the certifier reviewed: another one filed since is refused (409). */
  reviewedProofId?: string;
}

export interface CertifiedContract {
  id: string;
  status: 'CERTIFIED';
  certifiedAt: string;
  grain: string;
  grainType: string | null;
  grainKeyColumns: string[];
}

const SHA256_HEX = /^[a-fA-F0-9]{64}$/;

/** The optional body, or 400 naming the field that is wrong. */
export function parseCertifyBody(body: unknown): CertifyBody {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw badRequest('invalid_body', 'Send a JSON object.');
  const input = body as Record<string, unknown>;
  const unknown = Object.keys(input).filter(
    (k) => !['note', 'evidenceFileName', 'evidenceHash', 'evidenceSize', 'reviewedProofId'].includes(k),
  );
  if (unknown.length > 0) {
    throw badRequest('invalid_body', `Unknown fields: ${unknown.join(', ')}.`, { unknown });
  }
  const text = (name: string) => {
    const value = input[name];
    if (value !== undefined && typeof value !== 'string') {
      throw badRequest('invalid_body', `${name} must be a string.`, { field: name });
    }
    return value;
  };
  const parsed: CertifyBody = {};
  const note = text('note');
  const evidenceFileName = text('evidenceFileName');
  const evidenceHash = text('evidenceHash');
  // §3: the note is recorded in the audit log, whole (an entry keeps at most 96 KB of details).
  if (note !== undefined) checkTextLength('note', note, MAX_NOTE_CHARS);
  if (evidenceFileName !== undefined)
    checkTextLength('evidenceFileName', evidenceFileName, MAX_FILE_NAME_CHARS);
  if (note !== undefined) parsed.note = note;
  if (evidenceFileName !== undefined) parsed.evidenceFileName = evidenceFileName;
  // Compared only, never said back: an id of no submission of the table is refused as one submitted since.
  const reviewedProofId = text('reviewedProofId');
  if (reviewedProofId !== undefined) parsed.reviewedProofId = reviewedProofId;
  if (evidenceHash !== undefined) {
    if (!SHA256_HEX.test(evidenceHash)) {
      throw badRequest(
        'invalid_evidence_hash',
        'evidenceHash must be a SHA-256 digest: 64 hexadecimal characters.',
        {
          field: 'evidenceHash',
        },
      );
    }
    parsed.evidenceHash = evidenceHash.toLowerCase();
  }
  const size = input.evidenceSize;
  if (size !== undefined) {
    if (typeof size !== 'number' || !Number.isFinite(size) || size < 0) {
      throw badRequest('invalid_body', 'evidenceSize must be a number of bytes, 0 or more.', {
        field: 'evidenceSize',
      });
    }
    parsed.evidenceSize = size;
  }
  return parsed;
}

/**
 * §2.11: "The 6 baseline Gate 1 predicates always run on certification": they and the table's gate1.yml checks
 * run on the data as it is now (full scan, read only, before the certify transaction), since the warehouse can
 * change outside the service after the proof. Only for a table certify may move; elsewhere it is refused anyway.
 */
export async function certificationChecks(
  db: Db,
  clock: Clock,
  table: GateTable,
): Promise<LiveChecks | null> {
  if (table.state !== 'PENDING_REVIEW') return null;
  return { table, ...(await runGate1WithDigest(db, table, { clock })) };
}

/** The certify-time run, the table as it was scanned, and the digest of the rows it read. */
export interface LiveChecks {
  table: GateTable;
  proof: Gate1Proof;
  rowsDigest: string;
}

/** The HARD_FAIL checks of a certify-time run that failed, as the lifecycle reads them. */
function liveFailures(live: Gate1Proof | null): Array<{ name: string; detail: string }> {
  if (!live) return [];
  return live.results
    .filter((r) => live.failedPredicates.includes(r.name))
    .map((r) => ({ name: r.name, detail: r.detail }));
}

/** What the certify transition's guards read, from the proof, the certify-time checks, the jobs and the config. */
export async function certificationContext(
  q: Queryable,
  table: TableRow,
  body: CertifyBody,
  live: Gate1Proof | null,
  reviewedProofId?: string | null,
  dataChanged = false,
): Promise<TransitionContext> {
  const config = await getWorkspaceConfig(q, table.workspaceId);
  const proof = await latestSubmitProof(q, table.id);
  // A submission filed while the certify-time checks ran was not what they checked, nor seen by whoever certifies.
  const submittedAgain = proof !== null && reviewedProofId !== undefined && proof.id !== reviewedProofId;
  const changed = proof
    ? changedSince(proof.tableVersion, {
        definition: table.definitionVersion,
        gate1: table.gate1Version,
        data: table.dataVersion,
        contract: table.contractVersion,
      })
    : [];
  let gate3Satisfied = false;
  if (proof) {
    const [job] = await q.query(
      `SELECT 1 FROM gds.jobs WHERE table_id = $1 AND type = 'gate3' AND status = 'SUCCEEDED'
          AND (result->>'passed')::boolean IS TRUE AND finished_at >= $2 LIMIT 1`,
      [table.id, proof.createdAt],
    );
    gate3Satisfied = job !== undefined;
  }
  const missingEvidence = [
    ...(body.evidenceFileName ? [] : ['evidenceFileName']),
    ...(body.evidenceHash ? [] : ['evidenceHash']),
  ];
  const inspectionPolicyMet = config.inspectionPolicy === 'none' || missingEvidence.length === 0;
  return {
    mode: table.mode,
    tableName: table.name,
    certification: {
      ...(proof
        ? {
            proof: {
              ...(submittedAgain ? { submittedAgain } : {}),
              ...(changed.length > 0 ? { changed } : {}),
              fresh: !submittedAgain && changed.length === 0,
              failedPredicates: proof.failedPredicates,
            },
          }
        : {}),
      liveChecks: { failed: liveFailures(live), ...(dataChanged ? { dataChanged } : {}) },
      gate3Required: config.gate3Required,
      gate3Satisfied,
      inspectionPolicyMet,
      ...(inspectionPolicyMet
        ? {}
        : {
            inspectionPolicyDetail: `the workspace requires evidence: send ${missingEvidence.join(' and ')}`,
          }),
    },
  };
}

/**
 * 409 `submission_changed` when the table's newest submission is not the one the certifier reviewed
 * (`reviewedProofId`, the queue entry's `proof.id`): a submission filed since was not seen by them. Read under
 * the table's row lock, which every submission takes. A table with no submission is left to certify's 422.
 */
export async function requireReviewedSubmission(
  q: Queryable,
  table: TableRow,
  reviewedProofId: string,
): Promise<void> {
  const current = await latestSubmitProof(q, table.id);
  if (current === null || current.id === reviewedProofId) return;
  throw new HttpError(
    409,
    'submission_changed',
    `Table ${table.name} (${table.id}) was submitted again (proof ${current.id}, ${current.createdAt}) since the submission you reviewed; nothing was certified. Review the new submission (gds review), then certify it.`,
    { tableId: table.id, currentProofId: current.id, submittedAt: current.createdAt },
  );
}

/** Certifies a PENDING_REVIEW table through the lifecycle engine and carries out its effects. */
export async function certify(
  tx: Queryable,
  clock: Clock,
  input: {
    table: TableRow;
    caller: Caller;
    body: CertifyBody;
    live: LiveChecks | null;
    /** The newest submission when the checks began (null: none); another newest now blocks the certify. */
    reviewedProofId?: string | null;
  },
): Promise<CertifiedContract> {
  const { table, caller, body, live } = input;
  // The checks ran before this transaction: certify only the rows they saw (else 422, audited).
  const dataChanged = live !== null && (await rowsChangedSince(tx, live.table, live.rowsDigest));
  const context = await certificationContext(
    tx,
    table,
    body,
    live?.proof ?? null,
    input.reviewedProofId,
    dataChanged,
  );
  const { effects } = await applyTrigger(tx, {
    table,
    trigger: 'certify',
    context,
    actor: caller,
    clock,
    details: { ...body, certifiedView: await certifiedViewName(tx, table) },
  });
  const certifiedAt = new Date(clock()).toISOString();
  let contract = await liveContract(tx, clock, table);
  for (const effect of effects) {
    if (effect.type === 'write_version_snapshot') {
      const written = await appendVersion(tx, {
        tableId: table.id,
        kind: 'CERTIFICATION',
        environmentLabel: table.environmentLabel,
        contract,
        at: certifiedAt,
        by: caller.userId,
      });
      contract = (await updateContract(tx, clock, table.id, fieldsOf(contract), caller.userId, certifiedAt))
        .contract;
      // This certification answers every open recertification request of the table.
      await resolveOpenRequests(tx, clock, { table, version: written.version, actor: caller.userId });
    } else if (effect.type === 'publish_certified_view') {
      await publishCertifiedView(tx, table);
    }
  }
  return {
    id: contract.id,
    status: 'CERTIFIED',
    certifiedAt,
    grain: contract.grain,
    grainType: contract.grainType,
    grainKeyColumns: contract.grainKeyColumns,
  };
}
