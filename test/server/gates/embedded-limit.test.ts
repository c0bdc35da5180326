// The embedded database knows its size: on PGlite, a gate run over every row of a table
// holding more rows than --embedded-row-limit is refused before it starts, 422 `beyond_embedded_database`,
// saying to start the server with --database-url (or to check a sample); a sampled run is not refused, nor
// is a table at the limit; the baseline job of such an object fails with the same reason. PostgreSQL has
// no such limit. (At the default limit the refusal is what stands between a user and PGlite's "out of
// memory" 500; a small limit here lets the seeded tables, cut or filled to just past or below it, stand for
// large ones.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushDevDefinition } from '../../helpers/push.js';
import { fillRows } from '../../helpers/records.js';
import type { TestResponse, TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const run = (server: TestServer, tableId: string, body: Record<string, unknown> = {}) =>
  server.request('POST', `/api/tables/${tableId}/gate-runs`, {
    token: server.user('OWNER').accessToken,
    body,
  });

/** The 422 of work beyond the embedded database: its code, the object named, the limit, --database-url. */
function expectBeyond(response: TestResponse, names: string, limit: number): void {
  expect(response.status).toBe(422);
  expect(response.body.error.code).toBe('beyond_embedded_database');
  expect(response.body.error.message).toContain(names);
  expect(response.body.error.message).toContain(`more than ${limit} rows is beyond the embedded database`);
  expect(response.body.error.message).toContain('start the server with --database-url');
  expect(response.body.error.details).toEqual({ limit });
}

/** How many rows the seeded warehouse orders table holds. */
async function ordersRows(server: TestServer): Promise<number> {
  const [row] = await server.sql<{ n: string }>('SELECT count(*)::text AS n FROM analytics_dev.orders');
  return Number(row?.n);
}

describe('work beyond the embedded database (PGlite)', () => {
  let server: TestServer;
  let limit: number;

  beforeAll(async () => {
    limit = 4;
    server = await startTestServer({ jobs: 'manual', embeddedRowLimit: limit });
    // The seeded orders table, cut to one row past the limit.
    await server.sql(
      `DELETE FROM analytics_dev.orders WHERE id NOT IN (SELECT id FROM analytics_dev.orders ORDER BY id LIMIT $1)`,
      [limit + 1],
    );
    expect(await ordersRows(server)).toBe(limit + 1);
  });

  afterAll(async () => {
    await server?.close();
  });

  it('refuses a gate run over every row with 422 beyond_embedded_database, naming --database-url', async () => {
    const response = await run(server, server.table('orders').id);
    expectBeyond(response, 'analytics_dev.orders', limit);
  });

  it('runs a sampled gate run on the same table, and a full one on a table at the limit', async () => {
    const sampled = await run(server, server.table('orders').id, { sample: 'head:2' });
    expect(sampled.status).toBe(200);
    await server.sql(
      `DELETE FROM analytics_dev.orders WHERE ctid = (SELECT max(ctid) FROM analytics_dev.orders)`,
    );
    expect(await ordersRows(server)).toBe(limit);
    const atLimit = await run(server, server.table('orders').id);
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.results.length).toBeGreaterThan(0);
  });

  it('fails the baseline job of an object past the limit with the same reason', async () => {
    await server.sql(
      `CREATE TABLE analytics_dev.big_events AS SELECT g AS id FROM generate_series(1, ${limit + 1}) AS g`,
    );
    const pushed = await pushDevDefinition(server, 'big_events', ['id']);
    expect(pushed.status).toBe(202);
    const jobId = pushed.body.job.id as string;
    await server.jobs.runPending();
    const [job] = await server.sql<{ status: string; error: { message?: string } | string }>(
      'SELECT status, error FROM gds.jobs WHERE id = $1',
      [jobId],
    );
    expect(job?.status).toBe('FAILED');
    expect(JSON.stringify(job?.error)).toContain('beyond the embedded database');
    expect(JSON.stringify(job?.error)).toContain('--database-url');
  });
});

/** How many records a Mode B table holds (as the service counts them). */
async function recordRows(server: TestServer, tableId: string): Promise<number> {
  const [row] = await server.sql<{ n: string }>(
    'SELECT count(*)::text AS n FROM gds.records WHERE table_id = $1',
    [tableId],
  );
  return Number(row?.n);
}

/** A DATA-API token that may read and write the crm_contacts table (a Mode B table of stored records). */
async function crmWriter(server: TestServer): Promise<{ crm: string; token: string }> {
  const crm = server.table('crm_contacts').id;
  const issued = await server.issueToken('OWNER', {
    name: 'records',
    env: 'dev',
    scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
  });
  return { crm, token: issued.tokens.accessToken };
}

const contacts = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    email: `limit${from + i}@example.com`,
    full_name: `L ${from + i}`,
  }));

describe('records imported beyond the embedded database (PGlite)', () => {
  let server: TestServer;
  let crm: string;
  let token: string;
  let limit: number;

  beforeAll(async () => {
    limit = 20;
    server = await startTestServer({ embeddedRowLimit: limit });
    ({ crm, token } = await crmWriter(server));
    // The seeded contacts, filled up to three rows below the limit: room for three more.
    await fillRows(
      server,
      crm,
      limit - 3,
      (i) => ({ email: `filler${i}@example.com`, full_name: `F ${i}` }),
      await recordRows(server, crm),
    );
    expect(await recordRows(server, crm)).toBe(limit - 3);
  });

  afterAll(async () => {
    await server?.close();
  });

  const post = (path: string, body: unknown) =>
    server.request('POST', `/api/tables/${crm}${path}`, { token, body });

  it('refuses an import that would pass the limit with 422 beyond_embedded_database, writing nothing', async () => {
    const before = await recordRows(server, crm);
    const response = await post('/import?mode=upsert&key=email', { rows: contacts(0, 4) });
    expectBeyond(response, 'crm_contacts', limit);
    expect(response.headers.get('x-ratelimit-limit')).toBe('200');
    expect(await recordRows(server, crm)).toBe(before);
  });

  it('refuses key-less bulk creation past the limit the same way, writing nothing', async () => {
    const before = await recordRows(server, crm);
    const response = await post('/bulk-update', { records: contacts(10, 4).map((data) => ({ data })) });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('beyond_embedded_database');
    expect(await recordRows(server, crm)).toBe(before);
  });

  it('takes an import up to the limit, and updates past it (no new rows)', async () => {
    const upTo = await post('/import?mode=upsert&key=email', { rows: contacts(20, 3) });
    expect(upTo.status).toBe(200);
    expect(upTo.body).toEqual({ inserted: 3, updated: 0 });
    expect(await recordRows(server, crm)).toBe(limit);
    const updated = await post('/import?mode=upsert&key=email', {
      rows: [{ email: 'limit20@example.com', full_name: 'Changed' }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ inserted: 0, updated: 1 });
    const oneMore = await post('/import?mode=upsert&key=email', { rows: contacts(30, 1) });
    expect(oneMore.status).toBe(422);
    expect(oneMore.body.error.code).toBe('beyond_embedded_database');
    expect(await recordRows(server, crm)).toBe(limit);
  });
});

describe('no row limit on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', embeddedRowLimit: 1 });
  });

  afterAll(async () => {
    await server?.close();
  });

  it('imports records past any embedded limit', async () => {
    const { crm, token } = await crmWriter(server);
    const response = await server.request('POST', `/api/tables/${crm}/import?mode=upsert&key=email`, {
      token,
      body: { rows: contacts(0, 2) },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ inserted: 2, updated: 0 });
  });

  it('runs a gate run over every row of a table past any embedded limit', async () => {
    expect(await ordersRows(server)).toBeGreaterThan(1);
    const response = await run(server, server.table('orders').id);
    expect(response.status).toBe(200);
  });
});
