// A name collision suggests a replacement only where one is possible. A push whose table
// name is held by a Mode B (custody) table answers 409 with details.replaceable false and the reason, and
// gds says that reason instead of a `--replace` the server would then refuse; so does a push to another
// environment than the Mode A table holding the name (a replacement keeps its table's environment: the
// table moves by promotion); a collision with a Mode A table of the push's environment names its id.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let dev: string;
let production: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-collision-'));
  dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
});

afterAll(async () => {
  await server?.close();
});

const push = async (file: string, content: string, connector = dev, role: 'OWNER' | 'MEMBER' = 'OWNER') => {
  await writeFile(join(dir, file), content);
  return runInProcess(['push', join(dir, file), '--connector', connector], {
    env: {
      GDS_CONFIG_DIR: dir,
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user(role).cliToken,
    },
  });
};

describe('collision suggestions', () => {
  it('a name held by a table the pusher cannot see: gds says so, names no id and suggests no --replace', async () => {
    // customers_production is in production; the member sees dev only.
    const held = server.table('customers_production').id;
    const content =
      'table: customers_production\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n';
    const result = await push('hidden.yml', content, dev, 'MEMBER');
    expect(result.code).toBe(6);
    expect(result.stderr).toContain("A governance artifact named 'customers_production' already exists");
    expect(result.stderr).toContain('a table you cannot see');
    expect(result.stderr).toContain('ask its owner or a workspace admin');
    expect(result.stderr).not.toContain(held);
    expect(result.stderr).not.toContain('--replace');
  });

  it('a Mode B table’s name: 409 not replaceable, with the reason; gds suggests no --replace', async () => {
    const content =
      'table: crm_contacts\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n';
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: { filename: 'crm_contacts.yml', content, connectorId: dev },
    });
    expect(response.status).toBe(409);
    expect(response.body.error.details).toMatchObject({ replaceable: false });
    expect(response.body.error.details.reason).toContain('Mode B');
    const result = await push('crm_contacts.yml', content);
    expect(result.code).toBe(6);
    expect(result.stderr).toContain('Mode B');
    expect(result.stderr).not.toContain('--replace');
  });

  it('a Mode A table’s name: gds names the id to pass to --replace, never a placeholder', async () => {
    const content = 'table: probe_a\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n';
    const first = await push('probe_a.yml', content);
    expect(first.code, first.stderr).toBe(0);
    const [row] = await server.sql(
      `SELECT COALESCE(governance_id, id) AS id FROM gds.tables WHERE name = 'probe_a'`,
    );
    const second = await push(
      'probe_a_again.yml',
      content.replace('category_id', 'category_id\n  - name: x'),
    );
    expect(second.code).toBe(6);
    expect(second.stderr).toContain(`--replace ${row.id}`);
    expect(second.stderr).not.toContain('<governanceId>');
  });

  it('a Mode A table’s name in another environment: 409 not replaceable, naming the promotion; gds suggests no --replace', async () => {
    const orders = server.table('orders').id;
    const content = 'table: orders\nsource: analytics_prod.orders\ncolumns:\n  - name: id\n';
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: { filename: 'orders.yml', content, connectorId: production },
    });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('name_conflict');
    expect(response.body.error.details).toMatchObject({ existingId: orders, replaceable: false });
    expect(response.body.error.details.reason).toContain(`gds env promote ${orders} --to production`);
    // Where the spec's advice ("use replaceId") is followed, the replacement is refused: the 409 said so.
    const replaced = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: { filename: 'orders.yml', content, connectorId: production, replaceId: orders },
    });
    expect(replaced.body.error.code).toBe('replace_environment_mismatch');
    const result = await push('orders.yml', content, production);
    expect(result.code).toBe(6);
    expect(result.stderr).toContain(`gds env promote ${orders} --to production`);
    expect(result.stderr).not.toContain('--replace');
    // What the promotion it names does: lands a table of its own there, orders_production, and keeps orders.
    expect(response.body.error.details.reason).toContain('orders_production');
    const promoted = await runInProcess(['env', 'promote', orders, '--to', 'production', '--json'], {
      env: {
        GDS_CONFIG_DIR: dir,
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
      },
    });
    expect(promoted.code, promoted.stderr).toBe(0);
    const landed = await server.sql(
      `SELECT name, environment_label FROM gds.tables WHERE active AND lower(name) LIKE 'orders%' ORDER BY name`,
    );
    expect(landed).toEqual([
      { name: 'orders', environment_label: 'dev' },
      { name: 'orders_production', environment_label: 'production' },
    ]);
  });
});
