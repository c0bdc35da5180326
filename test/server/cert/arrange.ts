// Arranging review state directly in the server's database: a table moved to PENDING_REVIEW with a
// persisted submit proof taken at its current versions (what `gate submit` leaves behind).
import type { TestServer } from '../../helpers/server.js';

export interface ProofOptions {
  /** Names of failed HARD_FAIL predicates; none by default (a passing proof). */
  failed?: string[];
  /** Takes the proof one data version behind the table (newer data was ingested after it). */
  stale?: boolean;
}

export async function pendingReview(
  server: TestServer,
  tableId: string,
  options: ProofOptions = {},
): Promise<void> {
  const failed = options.failed ?? [];
  await server.sql("UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1", [tableId]);
  await server.sql(
    `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, definition_version,
       gate1_version, data_version, created_by, created_at)
     SELECT 'prf_' || md5(random()::text), id, 'submit', $2, '[]', $3, definition_version, gate1_version,
            data_version, owner_id, $4
       FROM gds.tables WHERE id = $1`,
    [tableId, failed.length === 0, JSON.stringify(failed), new Date(server.clock.now()).toISOString()],
  );
  if (options.stale)
    await server.sql('UPDATE gds.tables SET data_version = data_version + 1 WHERE id = $1', [tableId]);
}

/** A Gate 3 job that SUCCEEDED now (after any proof taken before this call). */
export async function succeededGate3(server: TestServer, tableId: string): Promise<void> {
  server.clock.advance(1000);
  const now = new Date(server.clock.now()).toISOString();
  await server.sql(
    `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, created_by, created_at, started_at, finished_at)
     SELECT 'job_' || md5(random()::text), workspace_id, id, 'gate3', 'SUCCEEDED', owner_id, $2, $2, $2
       FROM gds.tables WHERE id = $1`,
    [tableId, now],
  );
}
