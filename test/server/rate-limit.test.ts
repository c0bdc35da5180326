// Rate limit on table endpoints (§8): per token per minute, X-RateLimit-* on every response,
// 429 with Retry-After. This server allows 5 requests a minute so the limit is reached quickly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedToken } from '../../src/contract/types.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;

beforeAll(async () => {
  server = await startTestServer({ rateLimit: 5 });
  crm = server.table('crm_contacts').id;
});

afterAll(async () => {
  await server?.close();
});

const issue = (name: string): Promise<IssuedToken> =>
  server.issueToken('OWNER', { name, env: '*', scopes: [{ tableId: crm, permissions: ['read', 'write'] }] });
const list = (token: string) => server.request('GET', `/api/tables/${crm}/records?limit=1`, { token });
const rateHeaders = (headers: Headers) => ({
  limit: headers.get('x-ratelimit-limit'),
  remaining: headers.get('x-ratelimit-remaining'),
  reset: Number(headers.get('x-ratelimit-reset')),
});

describe('rate limit', () => {
  it('counts down, then answers 429 with Retry-After; another token has its own window', async () => {
    const a = (await issue('a')).tokens.accessToken;
    const remaining: Array<string | null> = [];
    for (let i = 0; i < 5; i += 1) {
      const response = await list(a);
      expect(response.status).toBe(200);
      remaining.push(rateHeaders(response.headers).remaining);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await list(a);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(rateHeaders(limited.headers)).toMatchObject({ limit: '5', remaining: '0' });
    const write = await server.request('POST', `/api/tables/${crm}/records`, {
      token: a,
      body: { email: 'limited@example.com', full_name: 'Limited' },
    });
    expect(write.status).toBe(429);
    expect(
      (
        await server.request('GET', `/api/tables/${crm}/records?search=limited`, {
          token: (await issue('check')).tokens.accessToken,
        })
      ).body.total,
    ).toBe(0);

    const b = (await issue('b')).tokens.accessToken;
    const other = await list(b);
    expect(other.status).toBe(200);
    expect(rateHeaders(other.headers).remaining).toBe('4');
  });

  it('keeps counting for a token across refreshes (the limit is per token, not per JWT string)', async () => {
    const issued = await issue('refreshing');
    for (let i = 0; i < 5; i += 1) await list(issued.tokens.accessToken);
    const refreshed = await server.request('POST', '/api/integration/refresh', {
      body: { refreshToken: issued.tokens.refreshToken },
    });
    expect((await list(refreshed.body.tokens.accessToken)).status).toBe(429);
  });

  it('opens a new window once the minute is over', async () => {
    const token = (await issue('window')).tokens.accessToken;
    for (let i = 0; i < 5; i += 1) await list(token);
    const limited = await list(token);
    expect(limited.status).toBe(429);
    server.clock.advance(61_000);
    try {
      const next = await list(token);
      expect(next.status).toBe(200);
      expect(rateHeaders(next.headers).remaining).toBe('4');
      expect(rateHeaders(next.headers).reset).toBeGreaterThan(rateHeaders(limited.headers).reset);
    } finally {
      server.clock.reset();
    }
  });

  it('keeps its windows in the database, and deletes the windows that ended', async () => {
    const token = (await issue('stored')).tokens.accessToken;
    await list(token);
    await list(token);
    const windows = () =>
      server.sql<{ key: string; count: number }>(
        `SELECT key, count FROM gds.rate_windows WHERE key LIKE 'token:%' ORDER BY key`,
      );
    expect((await windows()).map((w) => w.count)).toContain(2);
    const before = (await windows()).length;
    expect(before).toBeGreaterThan(1);
    // Past the windows of the tests before too (one of them counted a minute ahead).
    server.clock.advance(125_000);
    try {
      await list(token);
      // Every other token's window has ended and is gone; this token's began again.
      expect(await windows()).toEqual([expect.objectContaining({ count: 1 })]);
    } finally {
      server.clock.reset();
    }
  });

  it('sends the headers on error responses of table endpoints too, and not on other endpoints', async () => {
    const token = (await issue('errors')).tokens.accessToken;
    const notFound = await server.request('GET', '/api/tables/tbl_unknown/records', { token });
    expect(notFound.status).toBe(404);
    expect(rateHeaders(notFound.headers).limit).toBe('5');
    const unauthorized = await server.request('GET', `/api/tables/${crm}/records`);
    expect(unauthorized.status).toBe(401);
    expect(rateHeaders(unauthorized.headers).limit).toBe('5');
    const members = await server.request('GET', '/api/workspace/members', {
      token: server.user('OWNER').accessToken,
    });
    expect(members.status).toBe(200);
    expect(members.headers.get('x-ratelimit-limit')).toBeNull();
  });
});
