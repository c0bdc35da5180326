// Two full workspaces in one server (`workspaces: 2`): the ready file lists both, each certifies into
// its own warehouse namespace (the same table name gives two views, each over its own rows), and no
// answer (list, status, audit) or warehouse source of one is reachable from the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/contract/types.js';
import type { TestServer, TestWorkspace } from '../helpers/server.js';
import { postgresTestUrl, startTestServer } from '../helpers/server.js';
import { needs, NO_POSTGRES } from '../helpers/skip.js';
import { submit } from './cert/arrange.js';

let server: TestServer;
let main: TestWorkspace;
let globex: TestWorkspace;

beforeAll(async () => {
  server = await startTestServer({ workspaces: 2 });
  main = server.workspace(0);
  globex = server.workspace(1);
});

afterAll(async () => {
  await server?.close();
});

/** Each workspace with the other: what one sees must not include the other's. */
const bothWays = (): Array<[TestWorkspace, TestWorkspace]> => [
  [main, globex],
  [globex, main],
];

const column = async (sql: string, name: string) =>
  (await server.sql<Record<string, unknown>>(sql)).map((row) => row[name]);

/** Submits and certifies `orders` in both workspaces, then reads each certified view with SQL. */
async function certifyOrdersInBoth(on: TestServer): Promise<void> {
  const ids = async (sql: string) => (await on.sql<{ id: string }>(sql)).map((row) => row.id);
  const [first, second] = [on.workspace(0), on.workspace(1)];
  for (const workspace of [first, second]) {
    const orders = workspace.table('orders').id;
    await submit(on, orders, workspace.user('STEWARD').accessToken);
    const certified = await on.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: workspace.user('STEWARD').accessToken,
      body: {},
    });
    expect(certified.status).toBe(200);
  }
  expect(await ids('SELECT id FROM certified_dev.orders ORDER BY id')).toEqual([
    'o01',
    'o02',
    'o03',
    'o04',
    'o05',
    'o06',
    'o07',
    'o08',
  ]);
  expect(await ids('SELECT id FROM globex_certified_dev.orders ORDER BY id')).toEqual(['go1', 'go2', 'go3']);
  const audit = await on.request('GET', '/api/workspace/audit-log?eventType=TABLE_CERTIFIED&limit=1', {
    token: second.user('ADMIN').accessToken,
  });
  expect(audit.body.entries[0]).toMatchObject({
    tableId: second.table('orders').id,
    details: { certifiedView: 'globex_certified_dev.orders' },
  });
}

const push = (workspace: TestWorkspace, body: Record<string, unknown>) =>
  server.request('POST', '/api/artifacts', {
    token: workspace.user('ADMIN').cliToken,
    body: { filename: 'stolen.yml', content: 'table: stolen\ncolumns:\n  - name: id', ...body },
  });

describe('the ready file', () => {
  it('lists every workspace, the first one also at the top level, and names the workspace of every user', () => {
    const { ready } = server;
    expect(ready.workspaces.map((w) => w.workspaceId)).toEqual([
      ready.workspaceId,
      ready.otherWorkspace.workspaceId,
    ]);
    expect(ready.workspaces[0]).toMatchObject({ name: ready.name, users: ready.users, tables: ready.tables });
    for (const workspace of ready.workspaces) {
      for (const user of workspace.users) expect(user.workspaceId).toBe(workspace.workspaceId);
    }
  });

  it('gives the second workspace users of every role, a connector per environment, tables and warehouse objects of its own', () => {
    const second = globex.ready;
    expect(second.users.map((u) => u.role)).toEqual(['OWNER', 'ADMIN', 'STEWARD', 'MEMBER']);
    expect(second.connectors.map((c) => c.environmentLabel)).toEqual(['dev', 'staging', 'production']);
    expect(second.tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['customers', 'orders', 'customers_production', 'crm_contacts']),
    );
    expect(second.warehousePrefix).toBe('globex_');
    expect(main.ready.warehousePrefix).toBe('');
    const mainSchemas = new Set(main.ready.connectors.map((c) => c.schema));
    for (const connector of second.connectors) {
      expect(connector.schema.startsWith(second.warehousePrefix)).toBe(true);
      expect(mainSchemas.has(connector.schema)).toBe(false);
    }
    expect(second.warehouseObjects.length).toBeGreaterThan(0);
    const connectorIds = second.connectors.map((c) => c.id);
    for (const object of second.warehouseObjects) expect(connectorIds).toContain(object.connectorId);
  });
});

describe('certified views, one namespace per workspace', () => {
  it('keeps the seeded certified customers of each workspace over its own rows', async () => {
    const mainEmails = await column('SELECT email FROM certified_dev.customers ORDER BY id', 'email');
    expect(mainEmails).toContain('ada@example.com');
    expect(mainEmails.some((e) => String(e).endsWith('@globex.example'))).toBe(false);
    const globexEmails = await column(
      'SELECT email FROM globex_certified_dev.customers ORDER BY id',
      'email',
    );
    expect(globexEmails).toEqual(['hank@globex.example', 'homer@globex.example', 'mindy@globex.example']);
  });

  it('certifying a same-named table in both publishes two views, each reading its own warehouse', async () => {
    await certifyOrdersInBoth(server);
  });

  it("de-certifying one workspace's table leaves the other's view alone", async () => {
    const deleted = await server.request('DELETE', `/api/tables/${globex.table('customers').id}`, {
      token: globex.user('OWNER').accessToken,
    });
    expect(deleted.status).toBe(200);
    expect(await column('SELECT count(*)::int AS n FROM certified_dev.customers', 'n')).toEqual([10]);
    const left = await server.sql(
      `SELECT table_name FROM information_schema.views WHERE table_schema = 'globex_certified_dev'`,
    );
    expect(left.map((r) => r.table_name)).not.toContain('customers');
  });
});

describe('answers do not cross', () => {
  it('lists only its own tables', async () => {
    for (const [self, other] of bothWays()) {
      const list = await server.request('GET', '/api/tables', {
        token: self.user('MEMBER').cliToken,
      });
      expect(list.status).toBe(200);
      const ids = list.body.tables.map((t: { id: string }) => t.id);
      expect(ids.length).toBeGreaterThan(0);
      for (const table of other.ready.tables) expect(ids).not.toContain(table.id);
    }
  });

  it("answers 404 for the other workspace's table status, and with no change to it", async () => {
    const theirs = main.table('orders');
    const status = await server.request('GET', `/api/tables/${theirs.id}/status`, {
      token: globex.user('OWNER').cliToken,
    });
    expect(status.status).toBe(404);
    const deleted = await server.request('DELETE', `/api/tables/${theirs.id}`, {
      token: globex.user('OWNER').accessToken,
    });
    expect(deleted.status).toBe(404);
    const [row] = await server.sql('SELECT active, state FROM gds.tables WHERE id = $1', [theirs.id]);
    expect(row).toEqual({ active: true, state: 'CERTIFIED' });
  });

  it("keeps each audit log free of the other workspace's tables", async () => {
    for (const [self, other] of bothWays()) {
      const page = await server.request('GET', '/api/workspace/audit-log?limit=200', {
        token: self.user('ADMIN').accessToken,
      });
      expect(page.status).toBe(200);
      const tableIds = new Set((page.body.entries as AuditEntry[]).map((e) => e.tableId));
      for (const table of other.ready.tables) expect(tableIds.has(table.id)).toBe(false);
    }
  });
});

describe("one workspace's warehouse is out of the other's reach", () => {
  it("refuses a source in the other workspace's schema, with or without a connector", async () => {
    const cases: Array<[TestWorkspace, string, string]> = [
      [globex, 'analytics_dev.orders', globex.ready.connectors[0]?.id ?? ''],
      [main, 'globex_dev.orders', main.ready.connectors[0]?.id ?? ''],
    ];
    for (const [workspace, source, connectorId] of cases) {
      const bare = await push(workspace, { source });
      expect(bare.status).toBe(400);
      expect(bare.body.error.code).toBe('connector_required');
      const named = await push(workspace, { source, connectorId });
      expect(named.status).toBe(400);
      expect(named.body.error.code).toBe('unknown_source');
    }
    const [stolen] = await server.sql(`SELECT count(*)::int AS n FROM gds.tables WHERE name = 'stolen'`);
    expect(stolen).toEqual({ n: 0 });
  });

  it("never checks a reference against the other workspace's warehouse", async () => {
    const pushed = await push(globex, {
      filename: 'refs.yml',
      content: [
        'table: order_refs',
        'source: globex_staging.orders',
        'columns:',
        '  - name: id',
        '  - name: customer_id',
        '    references: analytics_dev.customers.customer_id',
      ].join('\n'),
    });
    expect(pushed.status).toBe(202);
    const run = await server.request('POST', `/api/tables/${pushed.body.tableId}/gate-runs`, {
      token: globex.user('ADMIN').accessToken,
      body: {},
    });
    expect(run.status).toBe(200);
    const check = run.body.results.find(
      (r: { name: string }) => r.name === 'referential_integrity.customer_id',
    );
    expect(check).toMatchObject({ passed: false });
    expect(check.detail).toContain("analytics_dev is not the schema of one of the workspace's connectors");
  });
});

const target = postgresTestUrl();
describe('isolation on PostgreSQL', needs('skip' in target ? NO_POSTGRES : undefined), () => {
  let onPostgres: TestServer;
  beforeAll(async () => {
    onPostgres = await startTestServer({ workspaces: 2, database: 'postgres' });
  });
  afterAll(async () => {
    await onPostgres?.close();
  });

  it('certifies a same-named table in both workspaces into two views, each over its own rows', async () => {
    await certifyOrdersInBoth(onPostgres);
  });
});
