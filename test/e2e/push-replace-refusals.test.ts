// `gds push --replace` refused by the service, as a person sees it: a connector of another environment than
// the table's is exit 5 naming `gds env promote` (a replacement never moves a table), and a name another
// table holds is exit 6 naming that table, with no advice to pass the --replace already given.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let orders: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-push-replace-'));
  orders = server.table('orders').id;
});
afterAll(async () => {
  await server?.close();
});

const push = async (name: string, source: string, connector: string) => {
  const file = join(dir, `${name}-${connector}.yml`);
  await writeFile(file, [`table: ${name}`, `source: ${source}`, 'columns:', '  - name: id'].join('\n'));
  return runInProcess(['push', file, '--connector', connector, '--replace', orders], {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('ADMIN').cliToken,
    },
  });
};

describe('gds push --replace refused', () => {
  it('exits 5 naming gds env promote for a connector of another environment; the table stays', async () => {
    const result = await push('orders', 'analytics_prod.orders', 'warehouse-production');
    expect(result.code, result.stderr).toBe(5);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`gds env promote ${orders} --to production`);
    const [row] = await server.sql('SELECT environment_label FROM gds.tables WHERE id = $1', [orders]);
    expect(row?.environment_label).toBe('dev');
  });

  it('exits 6 naming the table holding the name, without asking for --replace', async () => {
    const customers = server.table('customers').id;
    const result = await push('customers', 'analytics_dev.orders', 'warehouse-dev');
    expect(result.code, result.stderr).toBe(6);
    expect(result.stderr).toContain(customers);
    expect(result.stderr).toContain(`gds status ${customers} shows the table that holds the name customers`);
    expect(result.stderr).not.toContain('run again with --replace');
    expect(result.stderr).not.toContain('already exists');
  });
});
