// Gate 2 and Gate 3 as detached, evidence-only jobs (jobs run only when the test says so): QUEUED →
// RUNNING → terminal, cancel while queued or running, 409 once terminal, Gate 3's baseline rules,
// the --gate check, and that no job changes the table's state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;
let orders: string;

const enqueue = (body: Record<string, unknown>) =>
  server.request('POST', `/api/tables/${orders}/gate-runs`, { token, body });
const job = (id: string, suffix = '', gate?: number) =>
  server.request('GET', `/api/gate-jobs/${id}${suffix}${gate ? `?gate=${gate}` : ''}`, { token });
const cancel = (id: string) => server.request('POST', `/api/gate-jobs/${id}/cancel`, { token });
const jobCount = async () =>
  (await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.jobs'))[0]?.n;

/** A finished auto-baseline report of orders, as gov's baseline job stores it. */
async function baselineReport(rowCount: number, status = 'SUCCEEDED'): Promise<string> {
  const id = `job_baseline_${rowCount}_${status.toLowerCase()}`;
  const nulls = { id: 0, order_id: 0, customer_id: 1, amount: 0, status: 1, ordered_on: 1 };
  const result = {
    reportId: id,
    tableId: orders,
    source: 'analytics_dev.orders',
    rowCount,
    columns: Object.entries(nulls).map(([name, nullCount]) => ({
      name,
      type: 'text',
      nullCount,
      distinctCount: 1,
    })),
    missingColumns: [],
  };
  await server.sql(
    `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, params, created_by, created_at, result)
     VALUES ($1, $2, $3, 'gate-baseline-auto', $4, '{}', $5, now(), $6)`,
    [
      id,
      server.ready.workspaceId,
      orders,
      status,
      server.user('OWNER').userId,
      status === 'SUCCEEDED' ? JSON.stringify(result) : null,
    ],
  );
  return id;
}

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  token = server.user('OWNER').accessToken;
  orders = server.table('orders').id;
});

afterAll(async () => {
  await server.close();
});

describe('Gate 2', () => {
  it('moves QUEUED → RUNNING → SUCCEEDED with a structural report, and certifies nothing', async () => {
    const accepted = await enqueue({ gate: 2 });
    expect(accepted.status).toBe(202);
    const id = accepted.body.job.id as string;
    expect(accepted.body.job).toMatchObject({ type: 'gate2', gate: 2, status: 'QUEUED', tableId: orders });
    expect((await job(id, '/result')).status).toBe(409);
    expect((await job(id, '/result')).body.error.code).toBe('job_not_terminal');

    await server.jobs.startPending();
    expect((await job(id, '', 2)).body.status).toBe('RUNNING');
    await server.jobs.runPending();
    const result = await job(id, '/result', 2);
    expect(result.status).toBe(200);
    expect(result.body.status).toBe('SUCCEEDED');
    expect(result.body.result).toMatchObject({ gate: 2, tableId: orders, passed: true, evidenceOnly: true });
    const checks = result.body.result.checks as Array<{ name: string; passed: boolean }>;
    expect(checks.map((c) => c.name)).toEqual([
      'columns_present',
      'column_types',
      'unregistered_columns',
      'grain_keys_registered',
    ]);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [orders]);
    expect(table.state).toBe('QUARANTINED');
  });

  it('reports a registered type the warehouse does not have', async () => {
    await server.sql(
      `UPDATE gds.tables SET columns = (SELECT jsonb_agg(CASE WHEN c->>'name' = 'amount' THEN c || '{"type": "text"}' ELSE c END)
                                          FROM jsonb_array_elements(columns) AS c) WHERE id = $1`,
      [orders],
    );
    const id = (await enqueue({ gate: 2 })).body.job.id as string;
    await server.jobs.runPending();
    const result = await job(id, '/result');
    expect(result.body.result.passed).toBe(false);
    const types = result.body.result.checks.find((c: { name: string }) => c.name === 'column_types');
    expect(types).toMatchObject({ passed: false });
    expect(types.detail).toContain('amount (registered text, warehouse numeric)');
    await server.sql(
      `UPDATE gds.tables SET columns = (SELECT jsonb_agg(CASE WHEN c->>'name' = 'amount' THEN c || '{"type": "numeric"}' ELSE c END)
                                          FROM jsonb_array_elements(columns) AS c) WHERE id = $1`,
      [orders],
    );
  });
});

describe('cancel', () => {
  it('cancels a QUEUED job, which then never runs; a second cancel is 409', async () => {
    const id = (await enqueue({ gate: 2 })).body.job.id as string;
    const cancelled = await cancel(id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('CANCELLED');
    await server.jobs.runPending();
    expect((await job(id)).body.status).toBe('CANCELLED');
    const again = await cancel(id);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('job_terminal');
    // The audit entry carries the table's environment and gate mode, as other table events.
    const [entry] = await server.sql(
      `SELECT a.environment_label, a.gate_mode, t.environment_label AS env, t.gate_mode AS mode
         FROM gds.audit_log a JOIN gds.tables t ON t.id = a.table_id
        WHERE a.action = 'GATE_JOB_CANCELLED' AND a.details->>'jobId' = $1`,
      [id],
    );
    expect(entry.environment_label).toBe(entry.env);
    expect(entry.environment_label).toBeTruthy();
    expect(entry.gate_mode).toBe(entry.mode);
    expect(entry.gate_mode).toMatch(/^(ENFORCING|ADVISORY)$/);
  });

  it('cancels a RUNNING job, whose outcome is then not stored', async () => {
    const id = (await enqueue({ gate: 2 })).body.job.id as string;
    await server.jobs.startPending();
    expect((await cancel(id)).body.status).toBe('CANCELLED');
    await server.jobs.runPending();
    const result = await job(id, '/result');
    expect(result.body).toMatchObject({ status: 'CANCELLED', result: null });
  });

  it('refuses to cancel a finished job with 409', async () => {
    const id = (await enqueue({ gate: 2 })).body.job.id as string;
    await server.jobs.runPending();
    const response = await cancel(id);
    expect(response.status).toBe(409);
    expect((await job(id)).body.status).toBe('SUCCEEDED');
  });
});

describe('Gate 3', () => {
  it('refuses a run without --baseline with the spec message, enqueuing nothing', async () => {
    const before = await jobCount();
    const response = await enqueue({ gate: 3 });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'baseline_required',
      message: '--baseline <reportId> is required for Gate 3',
    });
    expect(await jobCount()).toBe(before);
  });

  it('answers 404 for an unknown baseline and 409 for one not finished', async () => {
    const unknown = await enqueue({ gate: 3, baseline: 'job_nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('baseline_not_found');
    const pending = await enqueue({ gate: 3, baseline: await baselineReport(8, 'RUNNING') });
    expect(pending.status).toBe(409);
    expect(pending.body.error.code).toBe('baseline_not_ready');
  });

  it('compares row count and null rates with the baseline report', async () => {
    const same = (await enqueue({ gate: 3, baseline: await baselineReport(8) })).body.job.id as string;
    const drifted = (await enqueue({ gate: 3, baseline: await baselineReport(20) })).body.job.id as string;
    await server.jobs.runPending();
    const close = await job(same, '/result', 3);
    expect(close.body.result).toMatchObject({
      gate: 3,
      passed: true,
      baselineReportId: 'job_baseline_8_succeeded',
    });
    const far = await job(drifted, '/result', 3);
    expect(far.body.status).toBe('SUCCEEDED');
    expect(far.body.result.passed).toBe(false);
    const rows = far.body.result.checks.find((c: { name: string }) => c.name === 'row_count_drift');
    expect(rows).toMatchObject({ passed: false });
    expect(rows.detail).toContain('8 rows now, 20 in the baseline');
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [orders]);
    expect(table.state).toBe('QUARANTINED');
  });

  it('runs against the auto-baseline of a pushed definition, and sees drift once the warehouse grows', async () => {
    const pushed = await server.request('POST', '/api/artifacts', {
      token,
      body: {
        filename: 'products.yml',
        content: 'table: products\nsource: analytics_dev.products\ncolumns: [id, sku, name, price]\n',
        connectorId: server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id,
      },
    });
    expect(pushed.status).toBe(202);
    const products = pushed.body.governanceId as string;
    const baseline = pushed.body.job.id as string;
    const early = await server.request('POST', `/api/tables/${products}/gate-runs`, {
      token,
      body: { gate: 3, baseline },
    });
    expect(early.status).toBe(409);
    await server.jobs.runPending();
    expect((await job(baseline, '', 1)).body.status).toBe('SUCCEEDED');

    const gate3 = () =>
      server.request('POST', `/api/tables/${products}/gate-runs`, { token, body: { gate: 3, baseline } });
    const steady = await gate3();
    await server.jobs.runPending();
    expect((await job(steady.body.job.id, '/result', 3)).body.result.passed).toBe(true);
    await server.sql(
      `INSERT INTO analytics_dev.products VALUES ('p04', 'SKU-004', NULL, 1), ('p05', 'SKU-005', NULL, 2)`,
    );
    const grown = await gate3();
    await server.jobs.runPending();
    const drift = (await job(grown.body.job.id, '/result', 3)).body.result;
    expect(drift.passed).toBe(false);
    const failed = drift.checks
      .filter((c: { passed: boolean }) => !c.passed)
      .map((c: { name: string }) => c.name);
    expect(failed).toEqual(['row_count_drift', 'null_rate_drift.name']);
  });
});

describe('job lookups', () => {
  it('checks --gate against the job and 404s an unknown job', async () => {
    const id = (await enqueue({ gate: 2 })).body.job.id as string;
    const mismatch = await job(id, '', 3);
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe('gate_mismatch');
    const baseline = await job(await baselineReport(9), '', 1);
    expect(baseline.body).toMatchObject({ type: 'gate-baseline-auto', gate: 1, status: 'SUCCEEDED' });
    const missing = await job('job_missing');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('job_not_found');
    const other = await server.request('GET', `/api/gate-jobs/${id}`, {
      token: server.ready.otherWorkspace.users[0]?.accessToken ?? '',
    });
    expect(other.status).toBe(404);
  });

  it('refuses --baseline for Gate 2', async () => {
    const response = await enqueue({ gate: 2, baseline: 'job_x' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('baseline_gate3_only');
  });
});

describe('finding proofs and finished jobs', () => {
  it('serves the prf_ proof gate submit printed on status and result, and 404s an unknown one', async () => {
    const submitted = await server.request('POST', `/api/tables/${orders}/gate-submissions`, {
      token,
      body: {},
    });
    expect(submitted.status).toBe(201);
    const proofId = submitted.body.id as string;
    expect(proofId).toMatch(/^prf_/);
    for (const suffix of ['', '/result']) {
      const found = await job(proofId, suffix, 1);
      expect(found.status).toBe(200);
      expect(found.body).toMatchObject({
        id: proofId,
        kind: 'submit',
        gate: 1,
        tableId: orders,
        passed: submitted.body.passed,
        failedPredicates: submitted.body.failedPredicates,
        rowsChecked: submitted.body.rowsChecked,
        tableVersion: submitted.body.tableVersion,
      });
      expect(found.body.results).toEqual(submitted.body.results);
    }
    const wrongGate = await job(proofId, '', 2);
    expect(wrongGate.status).toBe(400);
    expect(wrongGate.body.error.code).toBe('gate_mismatch');
    const unknown = await job('prf_nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('proof_not_found');
  });

  it('lists the table’s recent jobs and submissions, finished ones included, newest first', async () => {
    const baseline = await baselineReport(5);
    const queued = await enqueue({ gate: 2 });
    expect(queued.status).toBe(202);
    const listed = await server.request('GET', `/api/tables/${orders}/gate-jobs?limit=100`, { token });
    expect(listed.status).toBe(200);
    const rows = listed.body.jobs as Array<{
      id: string;
      type: string;
      status: string;
      proof: string | null;
    }>;
    expect(rows.find((r) => r.id === baseline)).toMatchObject({
      type: 'gate-baseline-auto',
      status: 'SUCCEEDED',
      proof: baseline,
    });
    // Queued, not started: no start time (as GET /api/gate-jobs/{id} says), and listed first, the newest.
    expect(rows.find((r) => r.id === queued.body.job.id)).toMatchObject({
      status: 'QUEUED',
      proof: null,
      startedAt: null,
    });
    expect(rows[0]?.id).toBe(queued.body.job.id);
    expect(rows.some((r) => r.type === 'gate1-submit' && r.proof?.startsWith('prf_'))).toBe(true);
    const [total] = await server.sql<{ n: number }>(
      `SELECT (SELECT count(*) FROM gds.jobs WHERE table_id = $1) + (SELECT count(*) FROM gds.gate_proofs WHERE table_id = $1) AS n`,
      [orders],
    );
    expect(rows).toHaveLength(Math.min(100, Number(total?.n)));
    const two = await server.request('GET', `/api/tables/${orders}/gate-jobs?limit=2`, { token });
    expect(two.body.jobs).toHaveLength(2);
    const bad = await server.request('GET', `/api/tables/${orders}/gate-jobs?limit=0`, { token });
    expect(bad.status).toBe(400);
  });
});
