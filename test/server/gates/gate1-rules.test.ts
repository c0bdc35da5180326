// gate1.yml storage (get, apply, numbered versions), what apply refuses (invalid rules, injection
// attempts: nothing stored, nothing run), recertification on a CERTIFIED table without a steward
// notification, and suggestions grounded in the warehouse data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateGate1 } from '../../../src/core/gate1/index.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;

const AMOUNT_RULES = `customPredicates:
  - name: amount_not_negative
    sql: amount >= 0
    severity: HARD_FAIL
`;
const STATUS_RULES = `${AMOUNT_RULES}patternChecks:
  - name: status_upper
    column: status
    regex: '^[A-Z]+$'
    severity: WARN
`;

const apply = (tableId: string, content: string) =>
  server.request('PUT', `/api/tables/${tableId}/gate1`, { token, body: { content } });

const gate1State = async (tableId: string) => {
  const [row] = await server.sql<{ gate1_version: number; stored: number; applied: number }>(
    `SELECT t.gate1_version,
            (SELECT count(*)::int FROM gds.gate1_versions v WHERE v.table_id = t.id) AS stored,
            (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id AND a.action = 'GATE1_APPLIED') AS applied
       FROM gds.tables t WHERE t.id = $1`,
    [tableId],
  );
  return row;
};

beforeAll(async () => {
  server = await startTestServer();
  token = server.user('OWNER').accessToken;
});

afterAll(async () => {
  await server.close();
});

describe('gate1.yml versions', () => {
  it('answers 404 gate1_not_found before any apply', async () => {
    const response = await server.request('GET', `/api/tables/${server.table('orders').id}/gate1`, { token });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('gate1_not_found');
    expect(response.body.error.message).toContain('gds gate apply');
  });

  it('stores each apply as the next version and serves every version', async () => {
    const orders = server.table('orders').id;
    const first = await apply(orders, AMOUNT_RULES);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ tableId: orders, version: 1, recertificationRequestId: null });
    const second = await apply(orders, STATUS_RULES);
    expect(second.body.version).toBe(2);

    const current = await server.request('GET', `/api/tables/${orders}/gate1`, { token });
    expect(current.body).toMatchObject({ version: 2, content: STATUS_RULES });
    const v1 = await server.request('GET', `/api/tables/${orders}/gate1/versions/v1`, { token });
    expect(v1.body).toMatchObject({ version: 1, content: AMOUNT_RULES });
    const list = await server.request('GET', `/api/tables/${orders}/gate1/versions`, { token });
    expect(list.body.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(await gate1State(orders)).toEqual({ gate1_version: 2, stored: 2, applied: 2 });

    const missing = await server.request('GET', `/api/tables/${orders}/gate1/versions/9`, { token });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('gate1_version_not_found');
    const malformed = await server.request('GET', `/api/tables/${orders}/gate1/versions/latest`, { token });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_version');
  });

  it('refuses invalid rules with the diagnostics and stores nothing', async () => {
    const orders = server.table('orders').id;
    const before = await gate1State(orders);
    const response = await apply(
      orders,
      `patternChecks:
  - name: bad
    column: amout
    regex: '^[0-9'
    severity: FATAL
`,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_gate1');
    const diagnostics = response.body.error.details.diagnostics as Array<{
      line: number;
      path: string;
      message: string;
    }>;
    expect(diagnostics.map((d) => d.line).sort()).toEqual([3, 4, 5]);
    expect(diagnostics.find((d) => d.line === 3)?.message).toContain('amout');
    expect(await gate1State(orders)).toEqual(before);
  });

  it.each([
    ['a second statement', 'amount >= 0; DROP TABLE analytics_dev.orders'],
    ['a subquery into the service schema', 'amount >= (SELECT count(*) FROM gds.cli_tokens)'],
    ['a comment swallowing the rest', 'amount >= 0 --'],
    ['a function outside the allow-list', 'pg_sleep(10) IS NOT NULL'],
  ])('refuses %s in a custom predicate before any SQL runs', async (_label, sql) => {
    const orders = server.table('orders').id;
    const before = await gate1State(orders);
    const response = await apply(
      orders,
      `customPredicates:\n  - name: evil\n    sql: ${JSON.stringify(sql)}\n    severity: WARN\n`,
    );
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_gate1');
    expect(await gate1State(orders)).toEqual(before);
    const [warehouse] = await server.sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM analytics_dev.orders',
    );
    expect(warehouse?.n).toBe(8);
  });

  it('refuses a pattern on a column name crafted to break out of quoting', async () => {
    const orders = server.table('orders').id;
    const before = await gate1State(orders);
    const response = await apply(
      orders,
      `patternChecks:\n  - name: evil\n    column: 'status" ~ ''x'' OR true --'\n    regex: x\n    severity: WARN\n`,
    );
    expect(response.status).toBe(400);
    expect(await gate1State(orders)).toEqual(before);
  });

  it('on a CERTIFIED table files a manual recertification request, keeps the state and notifies no steward', async () => {
    const customers = server.table('customers').id;
    const response = await apply(customers, AMOUNT_RULES.replaceAll('amount', 'lifetime_value'));
    expect(response.status).toBe(200);
    const requestId = response.body.recertificationRequestId as string;
    expect(requestId).toMatch(/^rcr_/);
    const requests = await server.sql(
      'SELECT id, cause, status FROM gds.recertification_requests WHERE table_id = $1',
      [customers],
    );
    expect(requests).toEqual([{ id: requestId, cause: 'manual', status: 'OPEN' }]);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [customers]);
    expect(table.state).toBe('CERTIFIED');
    const notifications = await server.sql('SELECT id FROM gds.notifications WHERE table_id = $1', [
      customers,
    ]);
    expect(notifications).toEqual([]);
    const none = await server.sql('SELECT id FROM gds.recertification_requests WHERE table_id = $1', [
      server.table('orders').id,
    ]);
    expect(none).toEqual([]);
  });

  it('stores nothing for rules identical to the current version: no version, no request, no audit entry', async () => {
    const customers = server.table('customers').id;
    const rules = AMOUNT_RULES.replaceAll('amount', 'lifetime_value');
    const before = await gate1State(customers);
    const requests = () =>
      server.sql('SELECT id FROM gds.recertification_requests WHERE table_id = $1', [customers]);
    const requestsBefore = await requests();
    const reformatted = `# the same rules\ncustomPredicates:\n  - { severity: HARD_FAIL, sql: "lifetime_value >= 0", name: lifetime_value_not_negative }\n`;
    for (const content of [rules, reformatted]) {
      const response = await apply(customers, content);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        version: before?.gate1_version,
        changed: false,
        recertificationRequestId: null,
      });
    }
    expect(await gate1State(customers)).toEqual(before);
    expect(await requests()).toEqual(requestsBefore);
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [customers]);
    expect(table.state).toBe('CERTIFIED');
  });

  it('takes a person only, within their environment scope', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'pipeline',
      env: 'dev',
      scopes: [{ tableId: server.table('orders').id, permissions: ['read', 'write'] }],
    });
    const machine = await server.request('GET', `/api/tables/${server.table('orders').id}/gate1`, {
      token: issued.tokens.accessToken,
    });
    expect(machine.status).toBe(401);
    const member = server.user('MEMBER').cliToken;
    const production = await server.request(
      'PUT',
      `/api/tables/${server.table('customers_production').id}/gate1`,
      {
        token: member,
        body: { content: AMOUNT_RULES },
      },
    );
    expect(production.status).toBe(403);
    expect(production.body.error.code).toBe('environment_forbidden');
  });
});

describe('suggestions', () => {
  const suggest = () =>
    server.request('POST', `/api/tables/${server.table('customers').id}/gate1/suggestions`, { token });

  it('proposes no e-mail pattern for a column named email whose values are not all e-mails', async () => {
    const response = await suggest();
    expect(response.status).toBe(200);
    expect(response.body.yaml).not.toContain('email_email_format');
    const email = response.body.profile.find((p: { name: string }) => p.name === 'email');
    expect(email).toMatchObject({ rows: 10, nulls: 1, matches: { email: 6 } });
  });

  it('proposes stubs from the data once it supports them, as a gate1.yml that validates and applies', async () => {
    await server.sql(`UPDATE analytics_dev.customers SET email = lower(replace(full_name, ' ', '.')) || '@example.com'
                       WHERE email IS NULL OR email !~ '^[^@ ]+@[^@ ]+\\.[^@ ]+$'`);
    const response = await suggest();
    const { yaml, suggestions } = response.body as {
      yaml: string;
      suggestions: Array<{ kind: string; name: string; column: string; justification: string }>;
    };
    const columns = ['id', 'customer_id', 'email', 'full_name', 'country', 'signup_date', 'lifetime_value'];
    const validation = validateGate1(yaml, { fileName: 'gate1.yml', columns });
    expect(validation.diagnostics).toEqual([]);
    expect(validation.document?.patternChecks).toContainEqual({
      name: 'email_email_format',
      column: 'email',
      regex: '^[^@ ]+@[^@ ]+\\.[^@ ]+$',
      severity: 'HARD_FAIL',
    });
    expect(suggestions.find((s) => s.name === 'email_email_format')?.justification).toContain('10 of 10');
    expect(validation.document?.fieldOverrides).toContainEqual({
      field: 'country',
      nullRate: { warn: 0.2, fail: 0.4 },
    });
    expect(
      suggestions.find((s) => s.kind === 'fieldOverride' && s.column === 'country')?.justification,
    ).toContain('2 of 10 rows (20%)');
    expect(validation.document?.fieldOverrides?.some((o) => o.field === 'email')).toBe(false);
    expect(response.body.notes.map((n: { column: string }) => n.column)).toContain('id');
    const applied = await apply(server.table('customers').id, yaml);
    expect(applied.status).toBe(200);
  });
});
