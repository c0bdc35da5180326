// The same server on a real PostgreSQL (`--database-url`): warehouse reads, Mode B writes, tokens
// and the audit log. CI sets GDS_TEST_DATABASE_URL to a loopback PostgreSQL (.ci/run starts one);
// without it this file is skipped and the last lines of the run say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

describe('on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let crm: string;
  let customers: string;
  let token: string;
  let refreshToken: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', refreshGraceMs: 30_000 });
    crm = server.table('crm_contacts').id;
    customers = server.table('customers').id;
    const issued = await server.issueToken('ADMIN', {
      name: 'pg',
      env: 'dev',
      scopes: [
        { tableId: crm, permissions: ['read', 'write'] },
        { tableId: customers, permissions: ['read'] },
      ],
    });
    token = issued.tokens.accessToken;
    refreshToken = issued.tokens.refreshToken;
  });

  afterAll(async () => {
    await server?.close();
  });

  it('reads Mode A rows from the warehouse schema with numbers as numbers', async () => {
    const response = await server.request('GET', `/api/tables/${customers}/records?search=lovelace`, {
      token,
    });
    expect(response.status).toBe(200);
    expect(response.body.records).toEqual([
      expect.objectContaining({
        id: 'c01',
        customer_id: 1001,
        lifetime_value: 1200.5,
        signup_date: '2024-01-15',
      }),
    ]);
  });

  it('writes Mode B records and upserts by key', async () => {
    const created = await server.request('POST', `/api/tables/${crm}/records`, {
      token,
      body: { email: 'pg@example.com', full_name: 'Post Gres', score: 5 },
    });
    expect(created.status).toBe(201);
    const patched = await server.request('PATCH', `/api/tables/${crm}/records/${created.body.id}`, {
      token,
      body: { score: 6 },
    });
    expect(patched.body.score).toBe(6);
    const imported = await server.request('POST', `/api/tables/${crm}/import?mode=upsert&key=email`, {
      token,
      body: {
        rows: [
          { email: 'pg@example.com', company: 'PGDG' },
          { email: 'new-pg@example.com', full_name: 'N' },
        ],
      },
    });
    expect(imported.body).toEqual({ inserted: 1, updated: 1 });
    expect(
      (await server.request('DELETE', `/api/tables/${crm}/records/${created.body.id}`, { token })).status,
    ).toBe(204);
  });

  it('rotates refresh tokens: 16 parallel refreshes get one pair; reuse after the grace window revokes the family', async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        server.request('POST', '/api/integration/refresh', { body: { refreshToken } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    expect(new Set(answers.map((a) => JSON.stringify(a.body.tokens))).size).toBe(1);
    const [first] = answers as [(typeof answers)[number]];
    server.clock.advance(31_000);
    let reused;
    try {
      reused = await server.request('POST', '/api/integration/refresh', { body: { refreshToken } });
    } finally {
      server.clock.reset();
    }
    expect(reused.status).toBe(401);
    const after = await server.request('GET', `/api/tables/${crm}/records`, {
      token: first.body.tokens.accessToken,
    });
    expect(after.body.error.code).toBe('token_revoked');
  });

  it('pages the audit log newest first', async () => {
    const page = await server.request('GET', '/api/workspace/audit-log?limit=2', {
      token: server.user('OWNER').accessToken,
    });
    expect(page.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'INTEGRATION_TOKEN_REVOKED',
      'INTEGRATION_TOKEN_REFRESHED',
    ]);
    expect(page.body.nextCursor).toEqual(expect.any(String));
  });
});
