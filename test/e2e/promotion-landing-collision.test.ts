// A promotion whose landing takes a name or source another table holds is refused (409) with advice worded for
// a promotion: which table holds what, and what frees it (rename, re-point or delete that table, then promote
// again), not a push's "--replace" nor the promoted table's `gds status`. A holder the caller may not read is
// not named.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
const connectorOf = (environment: string) =>
  server.ready.connectors.find((c) => c.environmentLabel === environment)?.id ?? '';

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-promotion-landing-'));
  for (const table of ['analytics_dev.pl_a', 'analytics_staging.pl_a', 'analytics_prod.pl_taker'])
    await server.sql(`CREATE TABLE ${table} (id integer)`);
});

afterAll(async () => {
  await server?.close();
});

const push = async (name: string, source: string, environment: string) => {
  const response = await server.request('POST', '/api/artifacts', {
    token: server.user('OWNER').cliToken,
    body: {
      filename: `${name}.yml`,
      content: `table: ${name}\nsource: ${source}\ncolumns:\n  - name: id\n`,
      connectorId: connectorOf(environment),
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return String(response.body.governanceId);
};

const promote = (id: string, role: 'OWNER' | 'STEWARD' = 'OWNER') =>
  runInProcess(['env', 'promote', id, '--to', 'staging'], {
    env: {
      GDS_CONFIG_DIR: dir,
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user(role).cliToken,
    },
  });

describe('a promotion landing on a held name or source', () => {
  it('the source it takes, held in the target: says which table and how to free it', async () => {
    const promoted = await push('pl_a', 'analytics_dev.pl_a', 'dev');
    const copy = await push('pl_copy', 'analytics_staging.pl_a', 'staging');
    const result = await promote(promoted);
    expect(result.code).toBe(6);
    expect(result.stderr).toContain(
      "A governance artifact for source 'analytics_staging.pl_a' already exists",
    );
    expect(result.stderr).toContain(
      `'pl_copy' (${copy}, staging) holds the source analytics_staging.pl_a the promotion would take in staging`,
    );
    expect(result.stderr).toContain(`gds delete ${copy}`);
    expect(result.stderr).toContain('then promote again');
    expect(result.stderr).not.toContain(`gds status ${promoted}`);
    const landed = await server.sql(`SELECT id FROM gds.tables WHERE active AND name = 'pl_a_staging'`);
    expect(landed).toEqual([]);
  });

  it('the name it takes, held in another environment: named, worded for the promotion', async () => {
    const orders = server.table('orders').id;
    const taker = await push('orders_staging', 'analytics_prod.pl_taker', 'production');
    const result = await promote(orders);
    expect(result.code).toBe(6);
    expect(result.stderr).toContain(
      `'orders_staging' (${taker}, production) holds the table name orders_staging the promotion would take in staging`,
    );
    expect(result.stderr).not.toContain('a push to staging');
    expect(result.stderr).not.toContain('Give the artifact another');
    // The steward, who may not read production, is not told which table.
    const steward = await promote(orders, 'STEWARD');
    expect(steward.code).not.toBe(0);
    expect(steward.stderr).not.toContain(taker);
  });
});
