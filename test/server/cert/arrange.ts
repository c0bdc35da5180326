// Reaching review state: the real `gate submit` (a full Gate 1 scan on the warehouse), and what no
// endpoint of these tests can produce cheaply, arranged in the database: a Gate 3 job that SUCCEEDED.
import { expect } from 'vitest';
import type { TestServer } from '../../helpers/server.js';

/**
 * `gate submit` as the steward (the main workspace's unless `token` is given): the table goes to
 * PENDING_REVIEW with a persisted proof (returned).
 */
export async function submit(
  server: TestServer,
  tableId: string,
  token = server.user('STEWARD').accessToken,
): Promise<{ id: string; passed: boolean; failedPredicates: string[] }> {
  server.clock.advance(1000);
  const response = await server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
    token,
    body: {},
  });
  expect(response.status).toBe(201);
  expect(response.body.state).toBe('PENDING_REVIEW');
  return response.body;
}

/** A Gate 3 job that SUCCEEDED now (after any proof taken before this call). */
/** A finished Gate 3 job for the table; `passed: false` is one whose statistical comparison failed. */
export async function succeededGate3(server: TestServer, tableId: string, passed = true): Promise<void> {
  server.clock.advance(1000);
  const now = new Date(server.clock.now()).toISOString();
  await server.sql(
    `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, created_by, created_at, started_at, finished_at, result)
     SELECT 'job_' || md5(random()::text), workspace_id, id, 'gate3', 'SUCCEEDED', owner_id, $2, $2, $2,
            jsonb_build_object('passed', $3::boolean)
       FROM gds.tables WHERE id = $1`,
    [tableId, now, passed],
  );
}
