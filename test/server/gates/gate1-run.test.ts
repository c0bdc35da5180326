// Gate 1 as real SQL on the warehouse: failing on the seeded bad rows (a duplicated customer_id,
// malformed e-mails, an orphan order, a negative amount), passing once they are fixed in the
// warehouse; samples; dry runs persisting nothing; submissions persisting a fresh proof that goes
// stale when the gate1, definition or data version moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/server/db/handle.js';
import { isProofFresh, latestSubmitProof } from '../../../src/server/gates/proofs.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;
let customers: string;
let orders: string;

interface Result {
  name: string;
  passed: boolean;
  failingRows: number | null;
  severity: string;
  detail: string;
  skipped?: boolean;
}

const EMAIL_RULES = `patternChecks:
  - name: email_format
    column: email
    regex: '^[^@ ]+@[^@ ]+\\.[^@ ]+$'
    severity: HARD_FAIL
`;
const AMOUNT_RULES = `customPredicates:
  - name: amount_not_negative
    sql: amount >= 0
    severity: HARD_FAIL
`;

const run = (tableId: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/api/tables/${tableId}/gate-runs`, { token, body });
const submit = (tableId: string) =>
  server.request('POST', `/api/tables/${tableId}/gate-submissions`, { token });
const resultOf = (body: { results: Result[] }, name: string) => {
  const found = body.results.find((r) => r.name === name);
  if (!found) throw new Error(`no result ${name} in ${body.results.map((r) => r.name).join(', ')}`);
  return found;
};
const db = (): Queryable => ({
  query: (sql, params) => server.sql(sql, params),
  exec: async (sql) => void (await server.sql(sql)),
});
const versionsOf = async (tableId: string) => {
  const [row] = await server.sql(
    `SELECT definition_version AS definition, gate1_version AS gate1, data_version AS data,
            contract_version AS contract FROM gds.tables WHERE id = $1`,
    [tableId],
  );
  return { versions: row as { definition: number; gate1: number; data: number; contract: number } };
};
const proofCount = async () =>
  (await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.gate_proofs'))[0]?.n;

beforeAll(async () => {
  server = await startTestServer();
  token = server.user('OWNER').accessToken;
  customers = server.table('customers').id;
  orders = server.table('orders').id;
  // Declarations a definition carries: grain keys, and references and bounds on columns, which the
  // orders definition declares through a real push (a JSON artifact replacing the seeded one).
  await server.sql(`UPDATE gds.tables SET grain_key_columns = '["customer_id"]' WHERE id = $1`, [customers]);
  const seeded = server.table('orders');
  const [registered] = await server.sql<{
    columns: Array<{ name: string; type: string; required: boolean }>;
  }>('SELECT columns FROM gds.tables WHERE id = $1', [orders]);
  const declared = registered!.columns.map((c) => ({
    ...c,
    ...(c.name === 'customer_id' ? { references: 'analytics_dev.customers.customer_id' } : {}),
    ...(c.name === 'amount' ? { min: 0, max: 10000 } : {}),
  }));
  const pushed = await server.request('POST', '/api/artifacts', {
    token,
    body: {
      filename: 'orders.json',
      content: JSON.stringify({ table: 'orders', source: seeded.source, columns: declared }),
      connectorId: seeded.connectorId,
      replaceId: orders,
    },
  });
  expect(pushed.status).toBe(202);
  for (const [table, rules] of [
    [customers, EMAIL_RULES],
    [orders, AMOUNT_RULES],
  ] as const) {
    const applied = await server.request('PUT', `/api/tables/${table}/gate1`, {
      token,
      body: { content: rules },
    });
    expect(applied.status).toBe(200);
  }
});

afterAll(async () => {
  await server.close();
});

describe('Gate 1 on the seeded warehouse rows', () => {
  it('fails on the duplicated customer_id and the malformed e-mails', async () => {
    const response = await run(customers);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: null,
      kind: 'run',
      gate: 1,
      passed: false,
      rowsChecked: 10,
      sample: null,
    });
    expect(resultOf(response.body, 'grain_uniqueness')).toMatchObject({ passed: false, failingRows: 2 });
    expect(resultOf(response.body, 'email_format')).toMatchObject({
      passed: false,
      failingRows: 3,
      severity: 'HARD_FAIL',
    });
    expect(resultOf(response.body, 'null_rate.country')).toMatchObject({
      passed: false,
      severity: 'WARN',
      failingRows: 2,
    });
    expect(resultOf(response.body, 'referential_integrity')).toMatchObject({ passed: true, skipped: true });
    expect(response.body.failedPredicates).toEqual(['grain_uniqueness', 'email_format']);
  });

  it('fails on the orphan order and the negative amount (declared reference, bounds, custom predicate)', async () => {
    const response = await run(orders);
    expect(response.body.passed).toBe(false);
    expect(resultOf(response.body, 'referential_integrity.customer_id')).toMatchObject({
      passed: false,
      failingRows: 1,
    });
    expect(resultOf(response.body, 'numeric_bounds.amount')).toMatchObject({ passed: false, failingRows: 1 });
    expect(resultOf(response.body, 'amount_not_negative')).toMatchObject({ passed: false, failingRows: 1 });
    expect(resultOf(response.body, 'grain_uniqueness')).toMatchObject({ passed: true, skipped: true });
  });

  it('fails column presence when a registered column is missing from the warehouse object', async () => {
    await server.sql(
      `UPDATE gds.tables SET columns = columns || '[{"name": "discount", "type": "numeric", "required": false}]' WHERE id = $1`,
      [orders],
    );
    const response = await run(orders);
    expect(resultOf(response.body, 'column_presence')).toMatchObject({ passed: false });
    expect(response.body.failedPredicates).toContain('column_presence');
    await server.sql(
      `UPDATE gds.tables SET columns = columns - (jsonb_array_length(columns) - 1) WHERE id = $1`,
      [orders],
    );
  });

  it('a predicate failing at run time fails that check only, with the database error', async () => {
    const contacts = server.table('crm_contacts').id;
    const rules = `customPredicates:\n  - name: score_ratio\n    sql: 100 / (score - score) > 1\n    severity: SOFT_FAIL\n`;
    expect(
      (await server.request('PUT', `/api/tables/${contacts}/gate1`, { token, body: { content: rules } }))
        .status,
    ).toBe(200);
    const response = await run(contacts);
    expect(response.status).toBe(200);
    expect(resultOf(response.body, 'score_ratio')).toMatchObject({
      passed: false,
      failingRows: null,
      severity: 'SOFT_FAIL',
    });
    expect(resultOf(response.body, 'score_ratio').detail).toContain('division by zero');
    expect(response.body.failedPredicates).not.toContain('score_ratio');
    expect(resultOf(response.body, 'record_count')).toMatchObject({ passed: true });
  });

  it('runs on a Mode B table over the service rows', async () => {
    const contacts = server.table('crm_contacts').id;
    await server.request('PUT', `/api/tables/${contacts}/gate1`, { token, body: { content: EMAIL_RULES } });
    const response = await run(contacts);
    expect(resultOf(response.body, 'email_format')).toMatchObject({ passed: false, failingRows: 3 });
    expect(resultOf(response.body, 'record_count')).toMatchObject({ passed: true });
    expect(response.body.rowsChecked).toBe(12);
  });
});

describe('samples', () => {
  it.each([
    ['head:3', 3, 0],
    ['tail:4', 4, 1],
    ['chunks:2@2', 4, 0],
    ['chunks:3@2', 6, 1],
    ['chunks:5@3', 8, 1],
    ['head:100', 8, 1],
  ])('%s reads %i rows of orders, %i of them negative', async (sample, rows, negative) => {
    const response = await run(orders, { sample });
    expect(response.status).toBe(200);
    expect(response.body.rowsChecked).toBe(rows);
    expect(response.body.sample).toMatchObject({ spec: sample });
    expect(resultOf(response.body, 'amount_not_negative').failingRows).toBe(negative);
  });

  it('random:N reads N rows and returns the seed that chose them', async () => {
    const response = await run(orders, { sample: 'random:3' });
    expect(response.body.rowsChecked).toBe(3);
    expect(response.body.sample).toMatchObject({
      kind: 'random',
      rows: 3,
      seed: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
  });

  it.each(['head:0', 'head', 'tail:x', 'chunks:2', 'chunks:0@5', 'random:-1', 'sample:3'])(
    'refuses %s with 400 invalid_sample',
    async (sample) => {
      const response = await run(orders, { sample });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_sample');
    },
  );

  it('refuses a sample for Gate 2 and 3', async () => {
    const response = await run(orders, { gate: 2, sample: 'head:3' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('sample_gate1_only');
  });
});

describe('dry run and submission', () => {
  it('a dry run persists nothing: no proof, no audit entry, the state as it was', async () => {
    const before = await proofCount();
    const auditRows = async () =>
      (await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.audit_log'))[0]?.n;
    const auditBefore = await auditRows();
    const response = await run(orders);
    expect(response.status).toBe(200);
    expect(await proofCount()).toBe(before);
    expect(await auditRows()).toBe(auditBefore);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [orders]);
    expect(table.state).toBe('QUARANTINED');
  });

  it('a submission persists a fresh proof, moves the table to PENDING_REVIEW and notifies the steward', async () => {
    const response = await submit(orders);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      kind: 'submit',
      state: 'PENDING_REVIEW',
      passed: false,
      sample: null,
    });
    expect(response.body.id).toMatch(/^prf_/);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [orders]);
    expect(table.state).toBe('PENDING_REVIEW');
    const notifications = await server.sql(
      'SELECT id, recipient_role, kind FROM gds.notifications WHERE table_id = $1',
      [orders],
    );
    expect(notifications).toEqual([
      { id: response.body.notificationId, recipient_role: 'STEWARD', kind: 'gate_submitted' },
    ]);
    const audit = await server.sql('SELECT action FROM gds.audit_log WHERE table_id = $1 ORDER BY seq', [
      orders,
    ]);
    expect(audit.map((a) => a.action).slice(-2)).toEqual(['GATE1_SUBMITTED', 'STEWARD_NOTIFIED']);

    const stored = await latestSubmitProof(db(), orders);
    expect(stored).toMatchObject({
      id: response.body.id,
      passed: false,
      failedPredicates: response.body.failedPredicates,
    });
    const versions = await versionsOf(orders);
    expect(stored?.tableVersion).toEqual(versions.versions);
    expect(stored && isProofFresh(stored, versions)).toBe(true);
  });

  it.each([
    ['gate1', 'gate1_version'],
    ['definition', 'definition_version'],
    ['data', 'data_version'],
    ['contract', 'contract_version'],
  ])('the proof goes stale when the %s version moves', async (_label, column) => {
    await submit(orders);
    const stored = await latestSubmitProof(db(), orders);
    await server.sql(`UPDATE gds.tables SET ${column} = ${column} + 1 WHERE id = $1`, [orders]);
    expect(stored && isProofFresh(stored, await versionsOf(orders))).toBe(false);
  });

  it('a new gate1.yml apply makes the proof stale through the endpoint too', async () => {
    await submit(orders);
    const stored = await latestSubmitProof(db(), orders);
    // The same rules again change nothing (no new version), so the proof stays fresh; other rules do not.
    const current = await server.request('GET', `/api/tables/${orders}/gate1`, { token });
    expect(current.status).toBe(200);
    await server.request('PUT', `/api/tables/${orders}/gate1`, {
      token,
      body: { content: current.body.content },
    });
    expect(stored && isProofFresh(stored, await versionsOf(orders))).toBe(true);
    const other = AMOUNT_RULES.replace('amount >= 0', 'amount >= -1');
    await server.request('PUT', `/api/tables/${orders}/gate1`, { token, body: { content: other } });
    expect(stored && isProofFresh(stored, await versionsOf(orders))).toBe(false);
  });

  it('refuses a sample on a submission: it is always a full scan', async () => {
    const response = await server.request('POST', `/api/tables/${orders}/gate-submissions`, {
      token,
      body: { sample: 'head:1' },
    });
    expect(response.status).toBe(400);
  });
});

describe('after the bad rows are fixed in the warehouse', () => {
  it('Gate 1 passes on both tables', async () => {
    await server.sql(`UPDATE analytics_dev.customers SET customer_id = 1005 WHERE id = 'c05'`);
    await server.sql(`UPDATE analytics_dev.customers SET email = 'edsger@example.com' WHERE id = 'c04'`);
    await server.sql(`UPDATE analytics_dev.customers SET email = 'barbara@example.com' WHERE id = 'c06'`);
    await server.sql(`UPDATE analytics_dev.customers SET email = 'ken@example.com' WHERE id = 'c09'`);
    await server.sql(`UPDATE analytics_dev.orders SET amount = 5 WHERE id = 'o05'`);
    await server.sql(`UPDATE analytics_dev.orders SET customer_id = 1010 WHERE id = 'o04'`);
    const fixedCustomers = await run(customers);
    expect(fixedCustomers.body.failedPredicates).toEqual([]);
    expect(fixedCustomers.body.passed).toBe(true);
    expect(resultOf(fixedCustomers.body, 'email_format')).toMatchObject({ passed: true, failingRows: 0 });
    const fixedOrders = await submit(orders);
    expect(fixedOrders.status).toBe(201);
    expect(fixedOrders.body).toMatchObject({ passed: true, failedPredicates: [] });
    expect(resultOf(fixedOrders.body, 'referential_integrity.customer_id')).toMatchObject({
      passed: true,
      failingRows: 0,
    });
  });
});
