// Refresh tokens are single-use, as the spec says (§4.2 "invalid, expired or reused refresh
// token: 401"; §5.7). By default a spent refresh token presented again is refused and revokes its family,
// access tokens included (session access tokens too, checked on every call). With a reuse grace configured, a
// spent token gets its successor again only while that successor is unused: never the successor's successor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import type { OAuthTestServer } from './oauth/oauth-server.js';
import { startOAuthServer } from './oauth/oauth-server.js';

const AUDIT = ['workspace:read:audit'] as never;

describe('integration refresh tokens, default server (no grace)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });
  const refresh = (refreshToken: string) =>
    server.request('POST', '/api/integration/refresh', { body: { refreshToken } });
  const audit = (token: string) => server.request('GET', '/api/workspace/audit-log?limit=1', { token });

  it('answers a spent refresh token with 401 at once, and every token of its family dies', async () => {
    const issued = await server.issueToken('ADMIN', { name: 'ci', env: '*', scopes: AUDIT });
    const first = await refresh(issued.tokens.refreshToken);
    expect(first.status).toBe(200);
    const reused = await refresh(issued.tokens.refreshToken);
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe('refresh_token_reused');
    expect((await audit(first.body.tokens.accessToken)).status).toBe(401);
    expect((await audit(issued.tokens.accessToken)).status).toBe(401);
    expect((await refresh(first.body.tokens.refreshToken)).status).toBe(401);
  });
});

describe('integration refresh tokens, with a grace configured', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ refreshGraceMs: 30_000 });
  });
  afterAll(async () => {
    await server?.close();
  });
  const refresh = (refreshToken: string) =>
    server.request('POST', '/api/integration/refresh', { body: { refreshToken } });

  it('answers a spent token with its successor only while that successor is unused, never a chain', async () => {
    const issued = await server.issueToken('ADMIN', { name: 'ci', env: '*', scopes: AUDIT });
    const r0 = issued.tokens.refreshToken;
    const first = await refresh(r0);
    expect(first.status).toBe(200);
    const again = await refresh(r0);
    expect(again.status).toBe(200);
    expect(again.body.tokens.refreshToken).toBe(first.body.tokens.refreshToken);
    // The successor is spent: r0 no longer leads anywhere (not to the successor's successor).
    const second = await refresh(first.body.tokens.refreshToken);
    expect(second.status).toBe(200);
    const chained = await refresh(r0);
    expect(chained.status).toBe(401);
    expect(chained.body.error.code).toBe('refresh_token_reused');
    const token = second.body.tokens.accessToken;
    expect((await server.request('GET', '/api/workspace/audit-log?limit=1', { token })).status).toBe(401);
    expect((await refresh(second.body.tokens.refreshToken)).status).toBe(401);
  });
});

describe('session refresh tokens (device sign-in)', () => {
  let strict: OAuthTestServer;
  let lenient: OAuthTestServer;
  beforeAll(async () => {
    [strict, lenient] = await Promise.all([
      startOAuthServer(),
      startOAuthServer({}, { refreshGraceMs: 30_000 }),
    ]);
  });
  afterAll(async () => {
    await strict?.close();
    await lenient?.close();
  });
  const refresh = (server: OAuthTestServer, token: string) =>
    server.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: 'gds-cli' });
  const me = (server: OAuthTestServer, token: string) =>
    fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });

  it('refuses a reused refresh token and revokes the sign-in’s access tokens at once', async () => {
    const signedIn = await strict.signIn('steward@example.com');
    const next = await refresh(strict, signedIn.refresh_token);
    expect(next.status).toBe(200);
    expect((await me(strict, next.body.access_token)).status).toBe(200);
    const reused = await refresh(strict, signedIn.refresh_token);
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    // Both access tokens of the sign-in, though unexpired, are refused from now on.
    for (const token of [signedIn.access_token, next.body.access_token]) {
      const response = await me(strict, token);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('token_revoked');
    }
    // Another sign-in of the same person is untouched.
    const other = await strict.signIn('steward@example.com');
    expect((await me(strict, other.access_token)).status).toBe(200);
  });

  it('with a grace, answers a spent token again only while its successor is unused', async () => {
    const signedIn = await lenient.signIn('owner@example.com');
    const next = await refresh(lenient, signedIn.refresh_token);
    const again = await refresh(lenient, signedIn.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(next.body.refresh_token);
    const third = await refresh(lenient, next.body.refresh_token);
    expect(third.status).toBe(200);
    const chained = await refresh(lenient, signedIn.refresh_token);
    expect([chained.status, chained.body.error]).toEqual([400, 'invalid_grant']);
    expect((await me(lenient, third.body.access_token)).status).toBe(401);
  });
});
