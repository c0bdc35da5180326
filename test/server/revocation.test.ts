// Tokens can be revoked, as the spec says (§2.1 the tf_ client token is for "revocation
// scripts"; §5.9 CLI tokens are "revocable"). An OWNER or ADMIN lists the workspace's integration tokens
// (client tokens masked) and a person's CLI tokens, and revokes either; a person revokes the credential
// they call with. A revoked token is 401 on its very next request; every revocation is audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
});

afterAll(async () => {
  await server?.close();
});

const records = (token: string) => server.request('GET', `/api/tables/${crm}/records?limit=1`, { token });
const audited = async (action: string) =>
  (await server.sql(`SELECT count(*)::int AS n FROM gds.audit_log WHERE action = $1`, [action]))[0]
    .n as number;

describe('integration tokens', () => {
  it('are listed masked for an ADMIN, with last use and who issued them; a MEMBER sees only their own', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'nightly',
      env: 'dev',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    expect((await records(issued.tokens.accessToken)).status).toBe(200);
    const list = await server.request('GET', '/api/integration/tokens', {
      token: server.user('ADMIN').cliToken,
    });
    expect(list.status).toBe(200);
    const row = list.body.tokens.find((t: { id: string }) => t.id === issued.id);
    expect(row).toMatchObject({
      name: 'nightly',
      audience: 'DATA-API',
      environment: 'dev',
      scopes: ['tables:crm_contacts:read'],
      revokedAt: null,
    });
    expect(row.clientToken).toMatch(/^tf_.{4}….{4}$/);
    expect(row.lastUsedAt).not.toBeNull();
    expect(JSON.stringify(list.body)).not.toContain(issued.clientToken);
    const member = await server.request('GET', '/api/integration/tokens', {
      token: server.user('MEMBER').cliToken,
    });
    expect(member.status).toBe(200);
    expect(member.body.tokens.map((t: { id: string }) => t.id)).not.toContain(issued.id);
    expect(row.issuedBy).toBe(server.user('OWNER').email);
  });

  it('revoked by the tf_ client token: access and refresh tokens are 401 at once, audited', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'victim',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    expect((await records(issued.tokens.accessToken)).status).toBe(200);
    const before = await audited('INTEGRATION_TOKEN_REVOKED');
    const revoked = await server.request('POST', '/api/integration/tokens/revoke', {
      token: server.user('OWNER').cliToken,
      body: { token: issued.clientToken },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.token).toMatchObject({ id: issued.id, revokedAt: expect.any(String) });
    const next = await records(issued.tokens.accessToken);
    expect(next.status).toBe(401);
    expect(next.body.error.code).toBe('token_revoked');
    const refresh = await server.request('POST', '/api/integration/refresh', {
      body: { refreshToken: issued.tokens.refreshToken },
    });
    expect(refresh.status).toBe(401);
    expect(await audited('INTEGRATION_TOKEN_REVOKED')).toBe(before + 1);
  });

  it('revoked by its id; unknown references are 404; a STEWARD may not revoke', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'by-id',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const steward = await server.request('POST', '/api/integration/tokens/revoke', {
      token: server.user('STEWARD').cliToken,
      body: { token: issued.id },
    });
    expect(steward.status).toBe(403);
    expect((await records(issued.tokens.accessToken)).status).toBe(200);
    const revoked = await server.request('POST', '/api/integration/tokens/revoke', {
      token: server.user('ADMIN').cliToken,
      body: { token: issued.id },
    });
    expect(revoked.status).toBe(200);
    expect((await records(issued.tokens.accessToken)).status).toBe(401);
    for (const token of ['tf_nosuchtoken', 'itk_missing']) {
      const missing = await server.request('POST', '/api/integration/tokens/revoke', {
        token: server.user('ADMIN').cliToken,
        body: { token },
      });
      expect(missing.status).toBe(404);
    }
  });
});

describe("integration tokens and the ADMIN's environment scope", () => {
  it('a dev-scoped ADMIN lists and revokes only dev tokens: production and * tokens are hidden and 403', async () => {
    const prod = server.table('customers_production').id;
    const dev = await server.issueToken('OWNER', {
      name: 'dev-token',
      env: 'dev',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const production = await server.issueToken('OWNER', {
      name: 'prod-token',
      env: 'production',
      scopes: [{ tableId: prod, permissions: ['read'] }],
    });
    const any = await server.issueToken('OWNER', {
      name: 'any-token',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const admin = server.user('ADMIN');
    const scope = (envScope: string[]) =>
      server.sql(
        `UPDATE gds.memberships SET env_scope = $2 WHERE user_id = (SELECT id FROM gds.users WHERE email = $1)`,
        [admin.email, JSON.stringify(envScope)],
      );
    await scope(['dev']);
    try {
      const list = await server.request('GET', '/api/integration/tokens', { token: admin.cliToken });
      expect(list.status).toBe(200);
      const ids = list.body.tokens.map((t: { id: string }) => t.id);
      expect(ids).toContain(dev.id);
      expect(ids).not.toContain(production.id);
      expect(ids).not.toContain(any.id);
      for (const token of [production, any]) {
        const refused = await server.request('POST', '/api/integration/tokens/revoke', {
          token: admin.cliToken,
          body: { token: token.id },
        });
        expect(refused.status).toBe(403);
        expect(refused.body.error.code).toBe('environment_forbidden');
      }
      const [still] = await server.sql(
        `SELECT count(*)::int AS n FROM gds.integration_tokens WHERE id = ANY($1) AND revoked_at IS NULL`,
        [[production.id, any.id]],
      );
      expect(still.n).toBe(2);
      const revoked = await server.request('POST', '/api/integration/tokens/revoke', {
        token: admin.cliToken,
        body: { token: dev.id },
      });
      expect(revoked.status).toBe(200);
    } finally {
      await scope(['dev', 'staging', 'production']);
    }
  });
});

describe('CLI tokens and sign-ins', () => {
  it('an ADMIN lists a person’s CLI tokens and revokes one: 401 on its next request', async () => {
    const member = server.user('MEMBER');
    expect((await server.request('GET', '/api/me', { token: member.cliToken })).status).toBe(200);
    const list = await server.request('GET', `/api/cli-tokens?userId=${member.userId}`, {
      token: server.user('ADMIN').cliToken,
    });
    expect(list.status).toBe(200);
    expect(list.body.tokens).toHaveLength(1);
    expect(list.body.tokens[0].token).toMatch(/^cli_.{4}….{4}$/);
    expect(JSON.stringify(list.body)).not.toContain(member.cliToken);
    const others = await server.request('GET', `/api/cli-tokens?userId=${member.userId}`, {
      token: server.user('STEWARD').cliToken,
    });
    expect(others.status).toBe(403);
    const revoked = await server.request('POST', `/api/cli-tokens/${list.body.tokens[0].id}/revoke`, {
      token: server.user('ADMIN').cliToken,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.token.revokedAt).not.toBeNull();
    expect((await server.request('GET', '/api/me', { token: member.cliToken })).status).toBe(401);
    expect(await audited('CLI_TOKEN_REVOKED')).toBeGreaterThanOrEqual(1);
  });

  it('POST /api/auth/revoke revokes the calling CLI token, or the calling session token', async () => {
    const steward = server.user('STEWARD');
    expect((await server.request('POST', '/api/auth/revoke', { token: steward.cliToken })).status).toBe(204);
    expect((await server.request('GET', '/api/me', { token: steward.cliToken })).status).toBe(401);
    const session = server.user('OWNER').accessToken;
    expect((await server.request('POST', '/api/auth/revoke', { token: session })).status).toBe(204);
    const after = await server.request('GET', '/api/me', { token: session });
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('token_revoked');
    expect((await server.request('GET', '/api/me', { token: server.user('OWNER').cliToken })).status).toBe(
      200,
    );
  });
});
