// A person acts only in the environments of their scope (§5.6), on delete and on dismissing a
// recertification request too. The seeded steward's scope is dev and staging.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;

const steward = () => server.user('STEWARD').cliToken;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
});

afterAll(async () => {
  await server?.close();
});

async function giveToSteward(tableName: string): Promise<string> {
  const id = server.table(tableName).id;
  await server.sql('UPDATE gds.tables SET owner_id = $2 WHERE id = $1', [id, server.user('STEWARD').userId]);
  return id;
}

async function tableRow(id: string) {
  const [row] = await server.sql('SELECT active, state FROM gds.tables WHERE id = $1', [id]);
  return row;
}

describe('DELETE /api/tables/{id} by the table owner', () => {
  it('refuses a table outside the owner’s environment scope with 403 and leaves it', async () => {
    const id = await giveToSteward('customers_production');
    const response = await server.request('DELETE', `/api/tables/${id}`, { token: steward() });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('environment_forbidden');
    expect(await tableRow(id)).toEqual({ active: true, state: 'CERTIFIED' });
  });

  it('soft-deletes a table inside the scope', async () => {
    const id = await giveToSteward('orders');
    const response = await server.request('DELETE', `/api/tables/${id}`, { token: steward() });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id, state: 'SOFT_DELETED' });
    expect((await tableRow(id))?.active).toBe(false);
  });
});

describe('dismissing a recertification request', () => {
  /** A schema change on a CERTIFIED table files a request; returns its id. */
  async function fileRequest(tableName: string, connectorName: string, schema: string): Promise<string> {
    const connectorId = server.ready.connectors.find((c) => c.name === connectorName)?.id;
    const pushed = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: {
        filename: `${tableName}.yml`,
        content: `table: ${tableName}\nsource: ${schema}.customers\ncolumns:\n  - name: id\n  - name: email\n`,
        connectorId,
        replaceId: server.table(tableName).id,
      },
    });
    expect(pushed.status).toBe(202);
    const [request] = await server.sql(
      `SELECT id FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
      [server.table(tableName).id],
    );
    return String(request?.id);
  }

  const dismiss = (requestId: string) =>
    server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, { token: steward() });

  it('refuses a request on a table outside the steward’s scope with 403; it stays OPEN', async () => {
    const requestId = await fileRequest('customers_production', 'warehouse-production', 'analytics_prod');
    // Nor does the steward see it listed, as the table list leaves out production's tables.
    const listed = async (token: string) =>
      (await server.request('GET', '/api/recertification-requests', { token })).body.requests.map(
        (r: { id: string }) => r.id,
      ) as string[];
    expect(await listed(steward())).not.toContain(requestId);
    expect(await listed(server.user('OWNER').cliToken)).toContain(requestId);
    const response = await dismiss(requestId);
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('environment_forbidden');
    const [row] = await server.sql('SELECT status FROM gds.recertification_requests WHERE id = $1', [
      requestId,
    ]);
    expect(row?.status).toBe('OPEN');
  });

  it('dismisses a request on a table inside the scope', async () => {
    const requestId = await fileRequest('customers', 'warehouse-dev', 'analytics_dev');
    const response = await dismiss(requestId);
    expect(response.status).toBe(200);
    expect(response.body.request).toMatchObject({ id: requestId, status: 'DISMISSED' });
  });
});

describe('reading a table outside the caller’s environment scope', () => {
  const reads = [
    '/status',
    '/ddl',
    '/versions',
    '/bundle',
    '/gate1',
    '/gate1/versions',
    '/gate1/versions/1',
    '/definition',
    '/semantic-contract',
    '/gate-jobs',
  ] as const;
  const member = () => server.user('MEMBER').cliToken; // scoped to dev

  it.each(reads)('GET %s of a production table is 403 for a member scoped to dev', async (suffix) => {
    const id = server.table('customers_production').id;
    const response = await server.request('GET', `/api/tables/${id}${suffix}`, { token: member() });
    expect(response.status, JSON.stringify(response.body)).toBe(403);
    expect(response.body.error).toMatchObject({
      code: 'environment_forbidden',
      details: { environmentLabel: 'production', tableId: id },
    });
    expect(response.body.error.message).toContain('production');
  });

  it.each(reads)('GET %s of a dev table is not refused for the same member', async (suffix) => {
    const id = server.table('customers').id;
    const response = await server.request('GET', `/api/tables/${id}${suffix}`, { token: member() });
    expect(response.status, JSON.stringify(response.body)).not.toBe(403);
  });

  it('the table list leaves out the tables of environments outside the caller’s scope', async () => {
    const listed = async (token: string) =>
      (await server.request('GET', '/api/tables', { token })).body.tables.map(
        (t: { environmentLabel: string }) => t.environmentLabel,
      ) as string[];
    const memberSees = await listed(member());
    expect(memberSees.length).toBeGreaterThan(0);
    expect(new Set(memberSees)).toEqual(new Set(['dev']));
    expect(await listed(server.user('OWNER').cliToken)).toContain('production');
  });

  it("a production table's gate job is 403 for the same member", async () => {
    const [job] = await server.sql('SELECT id FROM gds.jobs WHERE table_id = $1 LIMIT 1', [
      server.table('customers_production').id,
    ]);
    expect(job).toBeDefined();
    const response = await server.request('GET', `/api/gate-jobs/${String(job?.id)}`, { token: member() });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('environment_forbidden');
  });
});
