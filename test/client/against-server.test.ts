// The typed client against the real reference server (in process, every response checked against
// openapi.yaml): each area method, the walkers, a real 429 waited out, and a real token expiry
// recovered through the refresh hook. The server's clock stands in for waiting.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient, ApiClientOptions } from '../../src/client/index.js';
import type { TableRecord } from '../../src/contract/types.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;
let dataToken: string;
const clients: ApiClient[] = [];

function clientWith(token: string | undefined, options: Partial<ApiClientOptions> = {}): ApiClient {
  const client = createApiClient({
    baseUrl: server.url,
    ...(token === undefined ? {} : { auth: staticToken(token) }),
    // Waiting is the server's clock moving on.
    sleep: async (ms) => server.clock.advance(ms),
    logger: () => {},
    ...options,
  });
  clients.push(client);
  return client;
}

/** An integration token pair of its own for a test (each test runs in any order: none spends another's). */
async function issueDataTokens(name: string) {
  const issued = await clientWith(server.user('OWNER').cliToken).tokens.issue({
    name,
    env: 'dev',
    scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
  });
  return issued.tokens;
}

beforeAll(async () => {
  server = await startTestServer({ rateLimit: 5 });
  crm = server.table('crm_contacts').id;
  dataToken = (await issueDataTokens('client-e2e')).accessToken;
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server?.close();
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('client against the reference server', () => {
  it('writes, reads, walks and deletes records, waiting out the rate limit', async () => {
    const client = clientWith(dataToken);
    const created = await client.records.create(crm, { email: 'e2e@client.test', full_name: 'E2E One' });
    const patched = await client.records.patch(crm, created.id, { score: 42 });
    expect(patched).toMatchObject({ id: created.id, email: 'e2e@client.test', score: 42 });

    const bulk = await client.records.bulkUpdate(crm, [
      { id: created.id, data: { company: 'Client Co' } },
      { data: { email: 'e2e2@client.test', full_name: 'E2E Two' } },
    ]);
    expect(bulk).toMatchObject({ created: 1, updated: 1 });
    const imported = await client.records.import(
      crm,
      [
        { email: 'e2e2@client.test', full_name: 'E2E Two, renamed' },
        { email: 'e2e3@client.test', full_name: 'E2E Three' },
      ],
      'email',
    );
    expect(imported).toEqual({ inserted: 1, updated: 1 });

    const walked = await collect(client.records.iterate(crm, { limit: 4, search: 'client.test' }));
    expect(walked.map((r) => r.email).sort()).toEqual([
      'e2e2@client.test',
      'e2e3@client.test',
      'e2e@client.test',
    ]);
    const everything: TableRecord[] = await collect(client.records.iterate(crm, { limit: 4 }));
    const { total, nextCursor } = await client.records.list(crm, { limit: 1 });
    expect(nextCursor).toEqual(expect.any(String));
    expect(everything).toHaveLength(total ?? -1);
    expect(new Set(everything.map((r) => r.id)).size).toBe(total);

    await client.records.delete(crm, created.id);
    await expect(client.records.delete(crm, created.id)).rejects.toMatchObject({
      name: 'ApiError',
      status: 404,
      requestId: expect.any(String),
    });
    // Five requests a minute: the walks above only finished because each 429 was waited out.
    expect(client.stats.retries).toBeGreaterThan(0);
  });

  it('maps a refusal of the real server to an ApiError with its code and request id', async () => {
    const client = clientWith(dataToken);
    const other = server.table('customers').id;
    const err = await client.records.list(other).catch((e) => e);
    expect(err).toMatchObject({ name: 'ApiError', status: 403, code: expect.stringMatching(/^[a-z_]+$/) });
    expect(err.requestId).toEqual(expect.any(String));
    expect(err.message).not.toContain(dataToken);
  });

  it('walks the audit log across pages, newest first, each entry once', async () => {
    await clientWith(dataToken).records.create(crm, { email: 'walker@audit.test', full_name: 'Audit One' });
    const client = clientWith(server.user('OWNER').accessToken);
    const firstPage = await client.auditLog.page({ limit: 200 });
    expect(firstPage.nextCursor).toBe('');
    const walked = await collect(client.auditLog.iterate({ limit: 3 }));
    expect(walked.map((e) => e.id)).toEqual(firstPage.entries.map((e) => e.id));
    const created = await collect(client.auditLog.iterate({ limit: 1, eventType: 'RECORD_CREATED' }));
    expect(created.length).toBeGreaterThan(0);
    expect(created.every((e) => e.action === 'RECORD_CREATED')).toBe(true);
  });

  it('lists the members, without the platform operator', async () => {
    const { members } = await clientWith(server.user('OWNER').accessToken).members.list();
    const emails = members.map((m) => m.email);
    expect(emails).toContain('owner@example.com');
    expect(emails).not.toContain('operator@example.com');
  });

  it('recovers from an expired access token through the refresh hook, once', async () => {
    const issued = await issueDataTokens('client-e2e-expiry');
    let { accessToken: current, refreshToken } = issued;
    let refreshes = 0;
    const unauthenticated = clientWith(undefined);
    const client = clientWith(undefined, {
      auth: {
        getToken: async () => current,
        onUnauthorized: async () => {
          refreshes += 1;
          const { tokens } = await unauthenticated.tokens.refresh(refreshToken);
          refreshToken = tokens.refreshToken;
          current = tokens.accessToken;
          return current;
        },
      },
    });
    server.clock.advance(61 * 60_000);
    try {
      const page = await client.records.list(crm, { limit: 1 });
      expect(page.records).toHaveLength(1);
      expect(refreshes).toBe(1);
      expect(current).not.toBe(issued.accessToken);
    } finally {
      // The other tests' tokens stay valid, whichever runs next.
      server.clock.advance(-61 * 60_000);
    }
  });

  it('answers a spent refresh token with 401 and revokes its successor (single use, the spec’s default)', async () => {
    const { refreshToken } = await issueDataTokens('client-e2e-spent');
    const client = clientWith(undefined);
    const { tokens } = await client.tokens.refresh(refreshToken);
    await expect(client.tokens.refresh(refreshToken)).rejects.toMatchObject({ status: 401 });
    await expect(client.tokens.refresh(tokens.refreshToken)).rejects.toMatchObject({ status: 401 });
  });
});
