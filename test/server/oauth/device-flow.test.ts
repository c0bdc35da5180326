// The authorization-server half of the reference server over HTTP: discovery, the device-code
// grant with every RFC 8628 error, the verification page, refresh rotation with reuse revocation,
// and GET /api/me. Contract checking is on: close() fails on any response that breaks openapi.yaml.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../../../src/contract/types.js';
import type { OAuthTestServer } from './oauth-server.js';
import { startOAuthServer } from './oauth-server.js';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let server: OAuthTestServer;

beforeAll(async () => {
  server = await startOAuthServer({ intervalSeconds: 2, expiresInSeconds: 120 }, { refreshGraceMs: 30_000 });
});
afterAll(async () => {
  await server.close();
});

async function startDevice() {
  const { status, body } = await server.post('/oauth/device/code', {
    client_id: 'gds-cli',
    scope: 'openid offline_access',
  });
  expect(status).toBe(200);
  return body as { device_code: string; user_code: string; interval: number; expires_in: number };
}

const poll = (deviceCode: string) =>
  server.post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: 'gds-cli' });

async function me(token: string) {
  const response = await fetch(`${server.url}/api/me`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as Schema<'Me'> };
}

describe('discovery', () => {
  it('names the issuer (the REST base URL, under which it is found), the device and token endpoints, the JWKS, grants and a public client', async () => {
    expect(server.url).toBe(`${server.origin}/v1`);
    const response = await fetch(`${server.url}/.well-known/openid-configuration`);
    const doc = (await response.json()) as Record<string, unknown>;
    expect(response.status).toBe(200);
    expect(doc).toMatchObject({
      issuer: server.url,
      device_authorization_endpoint: `${server.origin}/oauth/device/code`,
      token_endpoint: `${server.origin}/oauth/token`,
      jwks_uri: `${server.origin}/.well-known/jwks.json`,
      token_endpoint_auth_methods_supported: ['none'],
    });
    expect(doc.grant_types_supported).toEqual([DEVICE_GRANT, 'refresh_token']);
    expect((await fetch(String(doc.jwks_uri))).status).toBe(200);
  });
});

describe('device authorization', () => {
  it('returns a typable user code, the verification address and the configured timings', async () => {
    const device = (await server.post('/oauth/device/code', { client_id: 'gds-cli' })).body;
    expect(device.user_code).toMatch(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/);
    expect(device.verification_uri).toBe(`${server.origin}/device`);
    expect(device.verification_uri_complete).toBe(`${server.origin}/device?user_code=${device.user_code}`);
    expect(device).toMatchObject({ expires_in: 120, interval: 2 });
    const page = await fetch(device.verification_uri_complete);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain(`value="${device.user_code}"`);
  });

  it('refuses an unknown client and an unknown scope with RFC 6749 errors', async () => {
    const unknown = await server.post('/oauth/device/code', { client_id: 'other' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('invalid_client');
    const scope = await server.post('/oauth/device/code', { client_id: 'gds-cli', scope: 'openid admin' });
    expect(scope.status).toBe(400);
    expect(scope.body.error).toBe('invalid_scope');
  });
});

describe('device-code grant', () => {
  it('is pending, then slow_down when polled too soon (interval +5 s), then tokens once approved', async () => {
    const device = await startDevice();
    const first = await poll(device.device_code);
    expect([first.status, first.body.error]).toEqual([400, 'authorization_pending']);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const tooSoon = await poll(device.device_code);
    expect([tooSoon.status, tooSoon.body.error]).toEqual([400, 'slow_down']);
    server.clock.advance(2_000); // the old interval is no longer enough: it is 7 s now, and 12 s after this
    expect((await poll(device.device_code)).body.error).toBe('slow_down');
    server.clock.advance(12_000);
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');

    const approved = await server.decide(device.user_code.toLowerCase(), 'admin@example.com', 'approve');
    expect(approved.status).toBe(200);
    expect(approved.html).toContain('Signed in');
    server.clock.advance(12_000);
    const tokens = await poll(device.device_code);
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'openid offline_access',
    });
    const who = await me(tokens.body.access_token);
    expect(who.status).toBe(200);
    expect(who.body).toMatchObject({
      user: { email: 'admin@example.com' },
      role: 'ADMIN',
      token: { kind: 'session', audience: 'session' },
    });

    server.clock.advance(12_000);
    const again = await poll(device.device_code);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect(await server.auditCount('DEVICE_SIGN_IN_APPROVED')).toBeGreaterThanOrEqual(1);
  });

  it('answers access_denied after a denial, and the code cannot be approved afterwards', async () => {
    const before = await server.auditCount('DEVICE_SIGN_IN_DENIED');
    const device = await startDevice();
    expect((await server.decide(device.user_code, 'member@example.com', 'deny')).status).toBe(200);
    const denied = await poll(device.device_code);
    expect([denied.status, denied.body.error]).toEqual([400, 'access_denied']);
    const late = await server.decide(device.user_code, 'member@example.com', 'approve');
    expect(late.status).toBe(400);
    expect(late.html).toContain('already used');
    expect(await server.auditCount('DEVICE_SIGN_IN_DENIED')).toBe(before + 1);
  });

  it('answers expired_token once the code has expired, and the page refuses it', async () => {
    const device = await startDevice();
    server.clock.advance(121_000);
    const expired = await poll(device.device_code);
    expect([expired.status, expired.body.error]).toEqual([400, 'expired_token']);
    const page = await server.decide(device.user_code, 'owner@example.com', 'approve');
    expect(page.status).toBe(400);
    expect(page.html).toContain('expired');
  });

  it('refuses an unknown device code, a missing one, and unknown grant types', async () => {
    expect((await poll('not-a-code')).body.error).toBe('invalid_grant');
    const missing = await server.post('/oauth/token', { grant_type: DEVICE_GRANT, client_id: 'gds-cli' });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
    const other = await server.post('/oauth/token', { grant_type: 'password', client_id: 'gds-cli' });
    expect([other.status, other.body.error]).toEqual([400, 'unsupported_grant_type']);
    const noClient = await server.post('/oauth/token', { grant_type: DEVICE_GRANT, device_code: 'x' });
    expect([noClient.status, noClient.body.error]).toEqual([400, 'invalid_client']);
  });
});

describe('verification page', () => {
  it('refuses an unknown e-mail, an unknown code and a missing action, changing nothing', async () => {
    const device = await startDevice();
    const stranger = await server.decide(device.user_code, 'nobody@example.com', 'approve');
    expect(stranger.status).toBe(400);
    expect(stranger.html).toContain('No active member');
    expect((await server.decide('BBBB-CCCC', 'owner@example.com', 'approve')).status).toBe(400);
    const noAction = await server.post('/device', {
      user_code: device.user_code,
      email: 'owner@example.com',
    });
    expect(noAction.status).toBe(400);
    server.clock.advance(7_000);
    expect((await poll(device.device_code)).body.error).toBe('authorization_pending');
  });

  it('escapes what it echoes', async () => {
    const page = await fetch(`${server.origin}/device?user_code=${encodeURIComponent('"><script>')}`);
    const html = await page.text();
    expect(html).not.toContain('<script>');
    expect(html).toContain('&quot;&gt;&lt;script&gt;');
  });
});

describe('refresh-token grant', () => {
  const refresh = (token: string) =>
    server.post('/oauth/token', { grant_type: 'refresh_token', refresh_token: token, client_id: 'gds-cli' });

  it('16 parallel refreshes of one refresh token all get the same tokens, and they work', async () => {
    const tokens = await server.signIn('steward@example.com');
    const answers = await Promise.all(Array.from({ length: 16 }, () => refresh(tokens.refresh_token)));
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    expect(new Set(answers.map((a) => a.body.refresh_token)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.access_token)).size).toBe(1);
    const [answer] = answers as [(typeof answers)[number]];
    expect((await me(answer.body.access_token)).body.role).toBe('STEWARD');
    expect((await refresh(answer.body.refresh_token)).status).toBe(200);
  });

  it('rotates single-use refresh tokens; reuse after the grace window revokes the whole family', async () => {
    const refreshedBefore = await server.auditCount('SESSION_REFRESHED');
    const first = await server.signIn('steward@example.com');
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await me(second.body.access_token)).body.role).toBe('STEWARD');
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshedBefore + 1);

    // Within the grace window the spent token is answered again with the same tokens.
    const again = await refresh(first.refresh_token);
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(second.body.refresh_token);
    expect(again.body.access_token).toBe(second.body.access_token);

    server.clock.advance(31_000);
    const reused = await refresh(first.refresh_token);
    expect([reused.status, reused.body.error]).toEqual([400, 'invalid_grant']);
    expect(reused.body.error_description).toContain('already used');
    const revoked = await refresh(second.body.refresh_token);
    expect([revoked.status, revoked.body.error]).toEqual([400, 'invalid_grant']);
    expect(await server.auditCount('SESSION_REFRESH_REUSE_REVOKED')).toBeGreaterThanOrEqual(1);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshedBefore + 1);
  });

  it('refuses an unknown, a missing and an expired refresh token', async () => {
    expect((await refresh('gdsr_unknown')).body.error).toBe('invalid_grant');
    const missing = await server.post('/oauth/token', { grant_type: 'refresh_token', client_id: 'gds-cli' });
    expect(missing.body.error).toBe('invalid_request');
    const tokens = await server.signIn('owner@example.com');
    server.clock.advance(31 * 24 * 60 * 60 * 1000);
    const expired = await refresh(tokens.refresh_token);
    expect([expired.status, expired.body.error]).toEqual([400, 'invalid_grant']);
    expect(expired.body.error_description).toContain('expired');
  });
});

describe('GET /api/me', () => {
  it('describes a static CLI token, and refuses a request without a token', async () => {
    const fresh = await startOAuthServer();
    try {
      const member = fresh.user('MEMBER');
      const who = await fetch(`${fresh.url}/api/me`, {
        headers: { authorization: `Bearer ${member.cliToken}` },
      });
      expect(await who.json()).toEqual({
        user: { id: member.userId, email: 'member@example.com', displayName: 'Max Member' },
        workspace: { id: expect.any(String), name: 'Northwind Analytics' },
        role: 'MEMBER',
        token: { kind: 'cli_token', audience: 'session', scopes: [], environment: null },
        effectiveEnvironmentScope: ['dev'],
        doors: { rest: fresh.url, graphql: `${fresh.origin}/graphql`, mcp: `${fresh.origin}/mcp` },
      });
      expect((await fetch(`${fresh.url}/api/me`)).status).toBe(401);
    } finally {
      await fresh.close();
    }
  });
});
