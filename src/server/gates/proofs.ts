// Persisted Gate 1 proofs (`gate submit` only; a dry run stores nothing). A proof is FRESH while the
// table's definition, gate1.yml, data and contract versions all equal the ones it was taken at. A proof
// stamped without a contract version (NULL: written before migration 72 by an earlier build) is not compared on
// the contract, so it keeps the freshness it had.
import type { Gate1ProofBody } from '../../contract/types.js';
import type { Queryable } from '../db/handle.js';
import { newId } from '../ids.js';
import type { CheckResult, Gate1Proof, SampleInfo } from './gate1-runner.js';
import type { TableVersions } from './table.js';

export interface StoredProof {
  id: string;
  tableId: string;
  kind: 'submit';
  passed: boolean;
  results: CheckResult[];
  failedPredicates: string[];
  sample: SampleInfo | null;
  tableVersion: TableVersions;
  createdBy: string;
  createdAt: string;
}

interface Row {
  id: string;
  table_id: string;
  passed: boolean;
  results: CheckResult[];
  failed_predicates: string[];
  sample: SampleInfo | null;
  definition_version: number;
  gate1_version: number;
  data_version: number;
  contract_version: number | null;
  created_by: string;
  created_at: Date | string;
}

export async function persistSubmitProof(
  q: Queryable,
  proof: Gate1Proof,
  createdBy: string,
): Promise<StoredProof> {
  const id = newId('prf');
  await q.query(
    `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample, definition_version,
       gate1_version, data_version, contract_version, created_by, created_at)
     VALUES ($1, $2, 'submit', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      id,
      proof.tableId,
      proof.passed,
      JSON.stringify(proof.results),
      JSON.stringify(proof.failedPredicates),
      proof.sample ? JSON.stringify(proof.sample) : null,
      proof.tableVersion.definition,
      proof.tableVersion.gate1,
      proof.tableVersion.data,
      proof.tableVersion.contract ?? null,
      createdBy,
      proof.ranAt,
    ],
  );
  return {
    id,
    tableId: proof.tableId,
    kind: 'submit',
    passed: proof.passed,
    results: proof.results,
    failedPredicates: proof.failedPredicates,
    sample: proof.sample,
    tableVersion: proof.tableVersion,
    createdBy,
    createdAt: proof.ranAt,
  };
}

function versionsOf(row: Row): TableVersions {
  return {
    definition: row.definition_version,
    gate1: row.gate1_version,
    data: row.data_version,
    ...(row.contract_version === null ? {} : { contract: row.contract_version }),
  };
}

const PROOF_COLUMNS = `p.id, p.table_id, p.passed, p.results, p.failed_predicates, p.sample, p.definition_version,
  p.gate1_version, p.data_version, p.contract_version, p.created_by, p.created_at`;

function toStoredProof(row: Row): StoredProof {
  return {
    id: row.id,
    tableId: row.table_id,
    kind: 'submit',
    passed: row.passed,
    results: row.results,
    failedPredicates: row.failed_predicates,
    sample: row.sample,
    tableVersion: versionsOf(row),
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** The newest persisted submit proof of the table, or null. */
export async function latestSubmitProof(q: Queryable, tableId: string): Promise<StoredProof | null> {
  const [row] = await q.query<Row>(
    `SELECT ${PROOF_COLUMNS} FROM gds.gate_proofs p WHERE p.table_id = $1 AND p.kind = 'submit'
      ORDER BY p.seq DESC LIMIT 1`,
    [tableId],
  );
  return row ? toStoredProof(row) : null;
}

/** A persisted proof of a table of the workspace (`gate result prf_…`), or null. */
export async function findProof(
  q: Queryable,
  workspaceId: string,
  proofId: string,
): Promise<StoredProof | null> {
  const [row] = await q.query<Row>(
    `SELECT ${PROOF_COLUMNS} FROM gds.gate_proofs p JOIN gds.tables t ON t.id = p.table_id
      WHERE p.id = $1 AND t.workspace_id = $2`,
    [proofId, workspaceId],
  );
  return row ? toStoredProof(row) : null;
}

/** The table's persisted proofs, newest first, at most `limit`. */
export async function recentProofs(q: Queryable, tableId: string, limit: number): Promise<StoredProof[]> {
  const rows = await q.query<Row>(
    `SELECT ${PROOF_COLUMNS} FROM gds.gate_proofs p WHERE p.table_id = $1 ORDER BY p.seq DESC LIMIT $2`,
    [tableId, limit],
  );
  return rows.map(toStoredProof);
}

/**
 * A stored proof as the wire's Gate 1 proof. A submission is a full scan, so the rows it checked are
 * the count its record_count check reported (the table stores no separate count).
 */
export function storedProofBody(proof: StoredProof): Gate1ProofBody {
  const counted = proof.results.find((r) => r.name === 'record_count');
  const rows = counted ? /^(\d+) rows?\b/.exec(counted.detail)?.[1] : undefined;
  return {
    id: proof.id,
    kind: proof.kind,
    gate: 1,
    tableId: proof.tableId,
    passed: proof.passed,
    results: proof.results as Gate1ProofBody['results'],
    failedPredicates: proof.failedPredicates,
    rowsChecked: rows === undefined ? 0 : Number(rows),
    sample: proof.sample as Gate1ProofBody['sample'],
    tableVersion: proof.tableVersion,
    ranAt: proof.createdAt,
  };
}

/**
 * Of the table ids given, those whose newest submit proof is not at the table's current versions (a rebuild
 * signalled, records written, a new gate1.yml, definition or contract since the submission), or that have none:
 * certify is blocked (stale_proof) until they are submitted again. One query for the whole set.
 */
export async function staleSubmissions(q: Queryable, tableIds: readonly string[]): Promise<Set<string>> {
  if (tableIds.length === 0) return new Set();
  // The newest submit proof of each table, one backward step of gate_proofs_latest a table: a scan and sort of
  // all their proofs (DISTINCT ON) grew with each table's months of submissions (250 tables waiting for review
  // with 100 submissions each: 78 ms a page).
  const rows = await q.query<{ id: string }>(
    `SELECT t.id FROM gds.tables t
       LEFT JOIN LATERAL (SELECT p.definition_version, p.gate1_version, p.data_version, p.contract_version
                            FROM gds.gate_proofs p
                           WHERE p.table_id = t.id AND p.kind = 'submit' ORDER BY p.seq DESC LIMIT 1) p ON true
      WHERE t.id = ANY($1::text[])
        AND (p.definition_version IS NULL OR p.definition_version <> t.definition_version
             OR p.gate1_version <> t.gate1_version OR p.data_version <> t.data_version
             OR p.contract_version <> t.contract_version)`,
    [tableIds],
  );
  return new Set(rows.map((row) => row.id));
}

/** What moved from the proof's versions to the table's (a contract the proof did not record is not compared). */
export function changedSince(
  proof: TableVersions,
  table: TableVersions,
): Array<{ what: keyof TableVersions; from: number; to: number }> {
  return (['definition', 'gate1', 'data', 'contract'] as const).flatMap((what) => {
    const from = proof[what];
    const to = table[what];
    return from === undefined || to === undefined || from === to ? [] : [{ what, from, to }];
  });
}

/** Fresh when the proof's versions equal the table's current ones. */
export function isProofFresh(
  proof: { tableVersion: TableVersions },
  table: { versions: TableVersions },
): boolean {
  return changedSince(proof.tableVersion, table.versions).length === 0;
}
