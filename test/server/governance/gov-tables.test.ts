// The CLI's table paths: list by state, status (certification, live schema drift, active jobs), DDL that
// PostgreSQL accepts, connectors, soft delete (Mode A only; owner or admin; the warehouse object is left
// untouched), and recertification requests list / dismiss.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let devConnector: string;

const get = (path: string, token = server.user('MEMBER').cliToken) => server.request('GET', path, { token });
const del = (id: string, token: string) => server.request('DELETE', `/api/tables/${id}`, { token });

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  devConnector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
});

afterAll(async () => {
  await server?.close();
});

describe('GET /api/tables', () => {
  it('lists the active tables with id, name, mode, state and gate', async () => {
    // The OWNER's scope covers every environment; a member scoped to dev sees dev tables only.
    const response = await get('/api/tables', server.user('OWNER').cliToken);
    expect(response.status).toBe(200);
    const names = response.body.tables.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['customers', 'orders', 'crm_contacts', 'customers_production']),
    );
    expect(names).not.toContain('legacy_leads');
    expect(names).not.toContain('globex_customers');
    expect(response.body.tables.find((t: { name: string }) => t.name === 'orders')).toEqual({
      id: server.table('orders').id,
      name: 'orders',
      mode: 'MODE_A',
      state: 'QUARANTINED',
      gate: 'ADVISORY',
      environmentLabel: 'dev',
      source: 'analytics_dev.orders',
      connectorId: server.table('orders').connectorId,
      artifactFile: null,
      project: null,
    });
  });

  it('filters by state (quarantine list) and refuses an unknown state with 400', async () => {
    const quarantined = await get('/api/tables?state=QUARANTINED');
    expect(quarantined.body.tables.map((t: { name: string }) => t.name)).toEqual(['orders']);
    const bad = await get('/api/tables?state=quarantined');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('QUARANTINED');
  });

  it('takes no DATA-API or MANAGEMENT token (401)', async () => {
    const management = await server.issueToken('ADMIN', {
      name: 'm',
      env: '*',
      scopes: ['workspace:read:audit'] as never,
    });
    expect((await get('/api/tables', management.tokens.accessToken)).status).toBe(401);
    expect((await get('/api/tables', 'not-a-token')).status).toBe(401);
  });
});

describe('GET /api/tables/{id}/status', () => {
  it('shows the latest certification of a certified table and no drift when the columns match', async () => {
    const response = await get(`/api/tables/${server.table('customers').id}/status`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      state: 'CERTIFIED',
      mode: 'MODE_A',
      certification: { version: 1, certifiedBy: server.user('STEWARD').userId },
      schemaDrift: { checked: true, drifted: false, added: [], removed: [], typeChanged: [] },
      activeJobs: [],
    });
  });

  it('computes schema drift live against the warehouse object', async () => {
    const pushed = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: {
        filename: 'products.yml',
        content:
          'table: products\nsource: analytics_dev.products\ncolumns:\n  - name: sku\n  - name: colour\n',
        connectorId: devConnector,
      },
    });
    expect(pushed.status).toBe(202);
    const id = pushed.body.governanceId;
    const status = await get(`/api/tables/${id}/status`);
    expect(status.body).toMatchObject({
      state: 'QUARANTINED',
      certification: null,
      schemaDrift: { drifted: true, added: ['id', 'name', 'price'], removed: ['colour'] },
      activeJobs: [{ id: pushed.body.job.id, type: 'gate-baseline-auto', status: 'QUEUED' }],
    });
  });

  it('does not compare a Mode B table with any warehouse object', async () => {
    const response = await get(`/api/tables/${server.table('crm_contacts').id}/status`);
    expect(response.body.schemaDrift).toMatchObject({ checked: false, drifted: false });
  });

  it('404 for an unknown table and another workspace’s', async () => {
    expect((await get('/api/tables/tbl_nothing/status')).status).toBe(404);
    const foreign = server.ready.otherWorkspace.tables[0]?.id ?? '';
    expect((await get(`/api/tables/${foreign}/status`)).status).toBe(404);
  });
});

describe('GET /api/tables/{id}/ddl', () => {
  it('gives a CREATE OR REPLACE VIEW over the source that PostgreSQL accepts, and a <slug>.sql file name', async () => {
    const response = await get(`/api/tables/${server.table('orders').id}/ddl`);
    expect(response.status).toBe(200);
    expect(response.body.fileName).toBe('orders.sql');
    expect(response.body.ddl).toMatch(/^CREATE OR REPLACE VIEW "analytics_dev"."orders" AS\nSELECT\n/);
    expect(response.body.ddl).toContain('FROM "analytics_dev"."orders";');
    await server.sql('CREATE SCHEMA ddl_check');
    await server.sql(`SET search_path TO ddl_check`);
    try {
      // The view is named as its source (how a SQL artifact declares it): made here beside it, in ddl_check.
      await server.sql(response.body.ddl.replace('VIEW "analytics_dev"."orders"', 'VIEW "orders"'));
      const [row] = await server.sql('SELECT count(*)::int AS n FROM ddl_check.orders');
      expect(row?.n).toBe(8);
    } finally {
      await server.sql('RESET search_path');
    }
  });

  it('gives a Mode B table its CREATE TABLE', async () => {
    const response = await get(`/api/tables/${server.table('crm_contacts').id}/ddl`);
    expect(response.body.ddl).toMatch(/^CREATE TABLE "crm_contacts" \(/);
    expect(response.body.ddl).toContain('"email" text NOT NULL');
  });
});

describe('GET /api/connectors', () => {
  it('lists the workspace’s connectors only', async () => {
    const response = await get('/api/connectors');
    expect(response.status).toBe(200);
    expect(response.body.connectors).toEqual(
      server.ready.connectors.map(({ id, name, type, status, environmentLabel }) => ({
        id,
        name,
        type,
        status,
        environmentLabel,
      })),
    );
  });
});

describe('DELETE /api/tables/{id}', () => {
  it('refuses a Mode B table with 400 and the spec message', async () => {
    const response = await del(server.table('crm_contacts').id, server.user('OWNER').cliToken);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(
      'CLI delete is restricted to warehouse-connected governance artifacts',
    );
  });

  it('refuses someone neither owner nor admin with 403 and the spec message', async () => {
    const response = await del(server.table('customers').id, server.user('MEMBER').cliToken);
    expect(response.status).toBe(403);
    expect(response.body.error.message).toBe('Only table owners or workspace admins can delete');
    expect((await get(`/api/tables/${server.table('customers').id}/status`)).status).toBe(200);
  });

  it('lets the owner soft-delete: the governance record goes, the warehouse object and its rows stay', async () => {
    const orders = server.table('orders').id;
    const response = await del(orders, server.user('MEMBER').accessToken);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: orders, state: 'SOFT_DELETED' });
    expect((await get(`/api/tables/${orders}/status`)).status).toBe(404);
    expect((await get('/api/tables')).body.tables.map((t: { id: string }) => t.id)).not.toContain(orders);
    const [record] = await server.sql('SELECT active, deleted_at FROM gds.tables WHERE id = $1', [orders]);
    expect(record?.active).toBe(false);
    expect(record?.deleted_at).not.toBeNull();
    const [rows] = await server.sql('SELECT count(*)::int AS n FROM analytics_dev.orders');
    expect(rows?.n).toBe(8);
    const [audit] = await server.sql(
      `SELECT user_id FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_DELETED'`,
      [orders],
    );
    expect(audit?.user_id).toBe(server.user('MEMBER').userId);
    expect((await del(orders, server.user('OWNER').cliToken)).status).toBe(404);
  });

  it('lets a workspace admin delete another person’s table', async () => {
    const id = server.table('customers_production').id;
    expect((await del(id, server.user('ADMIN').cliToken)).status).toBe(200);
  });
});

describe('recertification requests', () => {
  let requestId: string;

  beforeAll(async () => {
    const customers = server.table('customers').id;
    const pushed = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: {
        filename: 'customers.yml',
        content:
          'table: customers\nsource: analytics_dev.customers\ncolumns:\n  - name: id\n  - name: email\n',
        connectorId: devConnector,
        replaceId: customers,
      },
    });
    expect(pushed.status).toBe(202);
    const listed = await get('/api/recertification-requests');
    expect(listed.body.requests).toHaveLength(1);
    requestId = listed.body.requests[0].id;
    expect(listed.body.requests[0]).toMatchObject({
      tableName: 'customers',
      cause: 'schema_change',
      status: 'OPEN',
    });
  });

  it('refuses a dismiss by someone neither table owner nor steward (403) and an unknown id (404)', async () => {
    const refused = await server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, {
      token: server.user('MEMBER').cliToken,
    });
    expect(refused.status).toBe(403);
    const missing = await server.request('POST', '/api/recertification-requests/rcr_nothing/dismiss', {
      token: server.user('STEWARD').cliToken,
    });
    expect(missing.status).toBe(404);
  });

  it('dismisses an open request with an audit entry; it leaves the list and cannot be dismissed twice', async () => {
    const dismissed = await server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, {
      token: server.user('STEWARD').cliToken,
      body: { reason: 'column rename only' },
    });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body.request).toMatchObject({
      id: requestId,
      status: 'DISMISSED',
      dismissedBy: server.user('STEWARD').userId,
    });
    expect((await get('/api/recertification-requests')).body.requests).toEqual([]);
    const [audit] = await server.sql(
      `SELECT details FROM gds.audit_log WHERE action = 'RECERTIFICATION_DISMISSED'`,
    );
    expect(audit?.details).toEqual({ requestId, cause: 'schema_change', reason: 'column rename only' });
    const [table] = await server.sql('SELECT state FROM gds.tables WHERE id = $1', [
      server.table('customers').id,
    ]);
    expect(table?.state).toBe('QUARANTINED');
    const again = await server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, {
      token: server.user('STEWARD').cliToken,
    });
    expect(again.status).toBe(400);
  });
});
