// A certified view exists exactly while its table is CERTIFIED under that name: replacing (and so
// renaming), re-submitting, rejecting or deleting the table takes the view away, and certifying again
// publishes it under the table's current name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { submit } from './arrange.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
});

afterAll(async () => {
  await server?.close();
});

/** The views published in a certified schema, by name. */
const viewsIn = async (schema: string) =>
  (
    await server.sql<{ table_name: string }>(
      'SELECT table_name FROM information_schema.views WHERE table_schema = $1 ORDER BY table_name',
      [schema],
    )
  ).map((r) => r.table_name);

const stateOf = async (tableId: string) =>
  (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [tableId]))[0]?.state;

const yaml = (table: string, columns: string[], source: string) =>
  [`table: ${table}`, `source: ${source}`, 'columns:', ...columns.map((c) => `  - name: ${c}`)].join('\n');

const replace = (replaceId: string, table: string, columns: string[]) =>
  server.request('POST', '/api/artifacts', {
    token: server.user('ADMIN').cliToken,
    body: { filename: `${table}.yml`, content: yaml(table, columns, 'analytics_dev.customers'), replaceId },
  });

const certify = (tableId: string) =>
  server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
    token: server.user('STEWARD').accessToken,
    body: {},
  });

describe('a certified view follows its table', () => {
  it('is dropped when the definition is replaced, and published under the new name once certified again', async () => {
    const customers = server.table('customers').id;
    expect(await viewsIn('certified_dev')).toContain('customers');

    const replaced = await replace(customers, 'clients', ['id', 'customer_id', 'email']);
    expect(replaced.status).toBe(202);
    expect(await stateOf(customers)).toBe('QUARANTINED');
    const views = await viewsIn('certified_dev');
    expect(views).not.toContain('customers');
    expect(views).not.toContain('clients');

    await submit(server, customers);
    expect((await certify(customers)).status).toBe(200);
    expect(await viewsIn('certified_dev')).toContain('clients');
    expect(await viewsIn('certified_dev')).not.toContain('customers');
    const rows = await server.sql('SELECT * FROM certified_dev.clients ORDER BY id LIMIT 1');
    expect(Object.keys(rows[0])).toEqual(['id', 'customer_id', 'email']);
  });

  it('is dropped when a certified table goes back under review, and stays away when the review rejects it', async () => {
    const crm = server.table('crm_contacts').id;
    expect(await viewsIn('certified_dev')).toContain('crm_contacts');
    await submit(server, crm);
    expect(await viewsIn('certified_dev')).not.toContain('crm_contacts');

    const rejected = await server.request('POST', `/api/tables/${crm}/reject`, {
      token: server.user('STEWARD').accessToken,
      body: { reason: 'The contact list is stale' },
    });
    expect(rejected.status).toBe(200);
    expect(await stateOf(crm)).toBe('QUARANTINED');
    expect(await viewsIn('certified_dev')).not.toContain('crm_contacts');
  });

  it('is dropped when its table is deleted', async () => {
    const production = server.table('customers_production').id;
    expect(await viewsIn('certified_production')).toContain('customers_production');
    const deleted = await server.request('DELETE', `/api/tables/${production}`, {
      token: server.user('OWNER').accessToken,
    });
    expect(deleted.status).toBe(200);
    expect(await viewsIn('certified_production')).not.toContain('customers_production');
  });

  it('is left alone by a refused transition', async () => {
    const clients = server.table('customers').id;
    const refused = await server.request('DELETE', `/api/tables/${clients}`, {
      token: server.user('MEMBER').accessToken,
    });
    expect(refused.status).toBe(403);
    expect(await viewsIn('certified_dev')).toContain('clients');
  });
});
