// The 409 of a push whose name or source a Mode A table of another environment holds names the promotion
// (gds env promote <id> --to <env>) only where it is true: for a table the caller could promote (its owner or a
// workspace admin, in the caller's environment scope), and where the promotion would land. A table of an
// environment the caller may not read is not named in the reason. Where both environments' connectors read one
// schema, the promotion would land on the very source the table holds: the reason says what would succeed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let staging: string;
let dev: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
  dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
});

afterAll(async () => {
  await server?.close();
});

const push = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER', content: string, connectorId: string) =>
  server.request('POST', '/api/artifacts', {
    token: server.user(role).cliToken,
    body: { filename: 'pushed.yml', content, connectorId },
  });

describe('the promotion a 409 names', () => {
  it('not for a table of another person the caller is no admin over', async () => {
    // orders (dev) is the member's; the steward (dev and staging) pushes its name to staging.
    const orders = server.table('orders').id;
    const response = await push(
      'STEWARD',
      'table: orders\nsource: analytics_staging.orders\ncolumns:\n  - name: id\n',
      staging,
    );
    expect(response.status).toBe(409);
    expect(response.body.error.details).toMatchObject({ existingId: orders, replaceable: false });
    expect(response.body.error.details.reason).not.toContain('gds env promote');
    expect(response.body.error.details.reason).toContain('another table name');
    // Its owner is told the promotion.
    const owner = await push(
      'ADMIN',
      'table: orders\nsource: analytics_staging.orders\ncolumns:\n  - name: id\n',
      staging,
    );
    expect(owner.body.error.details.reason).toContain(`gds env promote ${orders} --to staging`);
  });

  it('nor names a table of an environment the caller may not read', async () => {
    // customers_production is in production; the member sees dev only.
    const held = server.table('customers_production');
    const response = await push(
      'MEMBER',
      'table: customers_production\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
      dev,
    );
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('name_conflict');
    const reason = String(response.body.error.details.reason);
    expect(reason).not.toContain('gds env promote');
    expect(reason).not.toContain(held.id);
    expect(reason).not.toContain('production');
    expect(reason).toContain('another table name');
  });

  it('not where both connectors read one schema: the promotion would take the source the table holds', async () => {
    const orders = server.table('orders').id;
    await server.sql(`UPDATE gds.connectors SET warehouse_schema = 'analytics_dev' WHERE id = $1`, [staging]);
    const content = 'table: orders_copy\nsource: analytics_dev.orders\ncolumns:\n  - name: id\n';
    const response = await push('OWNER', content, staging);
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('source_conflict');
    const reason = String(response.body.error.details.reason);
    expect(reason).not.toContain('gds env promote');
    expect(reason).toContain(`gds delete ${orders}`);
    // The promotion the reason used to name is refused: it lands on the source orders holds.
    const promoted = await server.request('POST', `/api/tables/${orders}/promotions`, {
      token: server.user('OWNER').cliToken,
      body: { to: 'staging' },
    });
    expect(promoted.status).toBe(409);
    expect(promoted.body.error.code).toBe('source_conflict');
    // What it says instead succeeds: with orders deleted, the push lands.
    const deleted = await server.request('DELETE', `/api/tables/${orders}`, {
      token: server.user('OWNER').cliToken,
    });
    expect(deleted.status).toBe(200);
    expect((await push('OWNER', content, staging)).status).toBe(202);
  });
});
