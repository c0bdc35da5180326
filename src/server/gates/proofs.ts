// Persisted Gate 1 proofs (`gate submit` only; a dry run stores nothing). A proof is FRESH while the
// table's definition, gate1.yml and data versions all equal the ones it was taken at.
import type { Queryable } from '../db/index.js';
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
       gate1_version, data_version, created_by, created_at)
     VALUES ($1, $2, 'submit', $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
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

/** The newest persisted submit proof of the table, or null. */
export async function latestSubmitProof(q: Queryable, tableId: string): Promise<StoredProof | null> {
  const [row] = await q.query<Row>(
    `SELECT id, table_id, passed, results, failed_predicates, sample, definition_version, gate1_version, data_version,
            created_by, created_at
       FROM gds.gate_proofs WHERE table_id = $1 AND kind = 'submit'
      ORDER BY seq DESC LIMIT 1`,
    [tableId],
  );
  if (!row) return null;
  return {
    id: row.id,
    tableId: row.table_id,
    kind: 'submit',
    passed: row.passed,
    results: row.results,
    failedPredicates: row.failed_predicates,
    sample: row.sample,
    tableVersion: { definition: row.definition_version, gate1: row.gate1_version, data: row.data_version },
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** Fresh when the proof's three versions equal the table's current ones. */
export function isProofFresh(
  proof: { tableVersion: TableVersions },
  table: { versions: TableVersions },
): boolean {
  const current = table.versions;
  return (
    proof.tableVersion.definition === current.definition &&
    proof.tableVersion.gate1 === current.gate1 &&
    proof.tableVersion.data === current.data
  );
}
