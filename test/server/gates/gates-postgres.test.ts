// The gate paths once on a real PostgreSQL: Gate 1 failing on the seeded bad rows and passing once
// they are fixed, a sample, a submission, and a Gate 2 job. CI sets GDS_TEST_DATABASE_URL; without it
// this file is skipped and the last lines of the run say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';
import { holdTableRow } from '../../helpers/row-holder.js';

const RULES = `patternChecks:
  - name: email_format
    column: email
    regex: '^[^@ ]+@[^@ ]+\\.[^@ ]+$'
    severity: HARD_FAIL
customPredicates:
  - name: value_not_negative
    sql: lifetime_value >= 0
    severity: HARD_FAIL
`;

describe('gates on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let token: string;
  let customers: string;

  const run = (body: Record<string, unknown> = {}) =>
    server.request('POST', `/api/tables/${customers}/gate-runs`, { token, body });
  const failed = (body: { results: Array<{ name: string; passed: boolean; failingRows: number | null }> }) =>
    body.results.filter((r) => !r.passed).map((r) => [r.name, r.failingRows]);

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    token = server.user('OWNER').accessToken;
    customers = server.table('customers').id;
    await server.sql(`UPDATE gds.tables SET grain_key_columns = '["customer_id"]' WHERE id = $1`, [
      customers,
    ]);
    const applied = await server.request('PUT', `/api/tables/${customers}/gate1`, {
      token,
      body: { content: RULES },
    });
    expect(applied.status).toBe(200);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('fails Gate 1 on the seeded rows, samples them, and passes once they are fixed', async () => {
    const before = await run();
    expect(before.body.passed).toBe(false);
    expect(failed(before.body)).toEqual([
      ['grain_uniqueness', 2],
      ['null_rate.country', 2],
      ['email_format', 3],
    ]);
    const head = await run({ sample: 'head:3' });
    expect(head.body).toMatchObject({ rowsChecked: 3, passed: true });
    const chunks = await run({ sample: 'chunks:2@2' });
    expect(chunks.body.rowsChecked).toBe(4);

    await server.sql(`UPDATE analytics_dev.customers SET customer_id = 1005 WHERE id = 'c05'`);
    await server.sql(
      `UPDATE analytics_dev.customers SET email = id || '@example.com' WHERE email !~ '^[^@ ]+@[^@ ]+\\.[^@ ]+$'`,
    );
    const after = await run();
    expect(after.body).toMatchObject({ passed: true, failedPredicates: [] });
  });

  it('persists a submission and runs a Gate 2 job', async () => {
    const submitted = await server.request('POST', `/api/tables/${customers}/gate-submissions`, { token });
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({ state: 'PENDING_REVIEW', passed: true });
    const accepted = await run({ gate: 2 });
    expect(accepted.status).toBe(202);
    await server.jobs.runPending();
    const result = await server.request('GET', `/api/gate-jobs/${accepted.body.job.id}/result?gate=2`, {
      token,
    });
    expect(result.body).toMatchObject({ status: 'SUCCEEDED', result: { gate: 2, passed: true } });
  });

  it('submit --if-not-certified waits on the table row lock and leaves a certification committed meanwhile', async () => {
    await server.sql(`UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1`, [customers]);
    // A certify in flight: it holds the table's row and has not committed yet.
    const certifier = await holdTableRow(server, customers);
    try {
      const submitting = server.request('POST', `/api/tables/${customers}/gate-submissions`, {
        token,
        body: { ifNotCertified: true },
      });
      // Wait until the submission's writing transaction is blocked on the certifier's row.
      await certifier.waitForBlocked();
      await certifier.client.query(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [customers]);
      await certifier.client.query('COMMIT');
      const submitted = await submitting;
      expect(submitted.status).toBe(409);
      expect(submitted.body.error.code).toBe('table_certified');
      const [row] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [
        customers,
      ]);
      expect(row?.state).toBe('CERTIFIED');
    } finally {
      await certifier.end();
    }
  });
});
