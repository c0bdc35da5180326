// A table name wherever a table id goes: gds in the test process against the reference server. A name of one
// table answers as its id does; a name used in two environments is exit 2 listing both ids (--env picks);
// an unknown name is exit 5 with the nearest name; an id is used as it is.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let stagingOrders: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-names-'));
  // orders promoted to staging, then that copy renamed orders as a service may hold one name per environment
  // (this server names a promoted copy orders_staging).
  const promoted = await gds(['env', 'promote', 'orders', '--to', 'staging', '--json']);
  expect(promoted.stderr).toBe('');
  expect(promoted.code).toBe(0);
  stagingOrders = (JSON.parse(promoted.stdout) as { tableId: string }).tableId;
  await server.sql(`UPDATE gds.tables SET name = 'orders' WHERE id = $1`, [stagingOrders]);
});

afterAll(async () => {
  await server?.close();
});

function gds(args: string[]): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('ADMIN').cliToken,
    },
  });
}

describe('a table name wherever a table id goes', () => {
  it('gds status <name> answers as gds status <id>', async () => {
    const customers = server.table('customers').id;
    const byName = await gds(['status', 'customers', '--json']);
    expect(byName).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(byName.stdout)).toMatchObject({ id: customers, name: 'customers' });
    const upper = await gds(['status', 'CUSTOMERS', '--json']);
    expect(JSON.parse(upper.stdout)).toMatchObject({ id: customers });
  });

  it('gate get (the 404 names the id), versions list and contract set-intent --dry-run take the name too', async () => {
    const customers = server.table('customers').id;
    const gate = await gds(['gate', 'get', 'customers', '--json']);
    expect(gate.code).toBe(5);
    expect(JSON.parse(gate.stderr)).toMatchObject({
      error: { code: 'gate1_not_found', details: { server: { tableId: customers } } },
    });
    const versions = await gds(['versions', 'list', 'customers', '--json']);
    expect(versions.code).toBe(0);
    const intent = await gds([
      'contract',
      'set-intent',
      'customers',
      '--intent',
      'METRIC',
      '--dry-run',
      '--json',
    ]);
    expect(intent.code).toBe(0);
  });

  it('a name in two environments: exit 2 listing each id with its environment; --env picks', async () => {
    const devOrders = server.table('orders').id;
    const r = await gds(['status', 'orders']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${devOrders}  dev`);
    expect(r.stderr).toContain(`${stagingOrders}  staging`);
    expect(r.stderr).toContain('--env');
    const json = await gds(['status', 'orders', '--json']);
    const error = (JSON.parse(json.stderr) as { error: { code: string; details: unknown } }).error;
    expect(error).toMatchObject({
      code: 'ambiguous_table_name',
      details: {
        tables: expect.arrayContaining([
          { id: devOrders, environmentLabel: 'dev' },
          { id: stagingOrders, environmentLabel: 'staging' },
        ]),
      },
    });
    const picked = await gds(['status', 'orders', '--env', 'staging', '--json']);
    expect(picked.code).toBe(0);
    expect(JSON.parse(picked.stdout)).toMatchObject({ id: stagingOrders, environmentLabel: 'staging' });
  });

  it('tokens issue --table <name>:read grants that table; a name in two environments is picked by --env', async () => {
    const r = await gds([
      'tokens',
      'issue',
      '--name',
      'by-name',
      '--env',
      'dev',
      '--table',
      'customers:read',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ scopes: ['tables:customers:read'] });
    const staging = await gds([
      'tokens',
      'issue',
      '--name',
      'by-name-2',
      '--env',
      'staging',
      '--table',
      'orders:read',
      '--json',
    ]);
    expect(staging.code).toBe(0);
    const any = await gds([
      'tokens',
      'issue',
      '--name',
      'by-name-3',
      '--env',
      '*',
      '--table',
      'orders:read',
      '--json',
    ]);
    expect(any.code).toBe(2);
  });

  it('an unknown name: exit 5 with the nearest name', async () => {
    const r = await gds(['status', 'custmers', '--json']);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: { code: 'table_not_found', details: { name: 'custmers', didYouMean: 'customers' } },
    });
    const human = await gds(['gate', 'get', 'custmers']);
    expect(human.code).toBe(5);
    expect(human.stderr).toContain('Did you mean customers?');
  });

  it('an id is used as it is: an unknown id is the service 404, not a name lookup', async () => {
    const r = await gds(['status', 'tbl_0123456789abcdef', '--json']);
    expect(r.code).toBe(5);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: 'table_not_found' } });
    expect(JSON.parse(r.stderr).error.details?.name).toBeUndefined();
  });
});
