// Integration tokens (§2.1, §2.2, §4.1, §4.2, §5): what is issued, how access tokens are signed,
// and refresh with single-use rotation and reuse detection.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { pushDevDefinition } from '../helpers/push.js';
import { startTestServer } from '../helpers/server.js';
import { BIND_EXISTING_GRANTS } from '../../src/server/db/migrations.js';

let server: TestServer;
let crm: string;

beforeAll(async () => {
  server = await startTestServer({ refreshGraceMs: 30_000 });
  crm = server.table('crm_contacts').id;
});

afterAll(async () => {
  await server?.close();
});

const readGrant = () => [{ tableId: crm, permissions: ['read' as const] }];
const listCrm = (token: string) => server.request('GET', `/api/tables/${crm}/records?limit=1`, { token });
const refresh = (refreshToken: unknown) =>
  server.request('POST', '/api/integration/refresh', { body: { refreshToken } });
/** A refresh sent `laterMs` after now on the server's clock. */
async function refreshLater(refreshToken: string, laterMs: number) {
  server.clock.advance(laterMs);
  try {
    return await refresh(refreshToken);
  } finally {
    server.clock.reset();
  }
}

describe('issuing', () => {
  it('returns a tf_ client token, a JWT access token and a <tokenId>.<secret> refresh token', async () => {
    const issued = await server.issueToken('ADMIN', { name: 'loader', env: 'dev', scopes: readGrant() });
    expect(issued).toMatchObject({
      name: 'loader',
      audience: 'DATA-API',
      env: 'dev',
      scopes: ['tables:crm_contacts:read'],
    });
    expect(issued.clientToken).toMatch(/^tf_[A-Za-z0-9_-]{20,}$/);
    expect(issued.tokens.refreshToken).toMatch(/^rt_[0-9a-f]+\.[A-Za-z0-9_-]{40,}$/);
    const expiresIn = Date.parse(issued.tokens.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(59 * 60_000);
    expect(expiresIn).toBeLessThanOrEqual(60 * 60_000);
    const refreshIn = Date.parse(issued.tokens.refreshExpiresAt) - Date.now();
    expect(Math.round(refreshIn / 86_400_000)).toBe(30);
  });

  it('signs access tokens with EdDSA under a key published at /.well-known/jwks.json', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'verify',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    const jwt = issued.tokens.accessToken;
    expect(decodeProtectedHeader(jwt).alg).toBe('EdDSA');
    const jwks = createRemoteJWKSet(new URL(`${server.origin}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(jwt, jwks, {
      algorithms: ['EdDSA'],
      issuer: server.url,
      audience: 'MANAGEMENT',
    });
    expect(payload).toMatchObject({
      sub: server.user('OWNER').userId,
      ws: server.ready.workspaceId,
      scope: 'workspace:read:audit',
      env: '*',
      tid: issued.id,
    });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
  });

  it('mints a MANAGEMENT token from workspace scope strings, one audience per token', async () => {
    const issued = await server.issueToken('STEWARD', {
      name: 'pipeline',
      env: 'staging',
      scopes: ['workspace:write:definition', 'workspace:write:recertify'],
    });
    expect(issued.audience).toBe('MANAGEMENT');
    expect(issued.scopes).toEqual(['workspace:write:definition', 'workspace:write:recertify']);
  });

  it.each([
    ['env missing', { name: 'x', scopes: [{ tableId: 'x', permissions: ['read'] }] }, 'invalid_body'],
    [
      'env not an environment of the workspace',
      { name: 'x', env: 'qa', scopes: ['workspace:read:audit'] },
      'unknown_environment',
    ],
    ['no scopes', { name: 'x', env: '*', scopes: [] }, 'invalid_body'],
    [
      'an unknown scope string',
      { name: 'x', env: '*', scopes: ['workspace:write:everything'] },
      'invalid_body',
    ],
    [
      'a permission other than read/write',
      { name: 'x', env: '*', scopes: [{ tableId: 'x', permissions: ['certify'] }] },
      'invalid_body',
    ],
    [
      'table grants mixed with workspace scopes',
      { name: 'x', env: '*', scopes: ['workspace:read:audit', { tableId: 'T', permissions: ['read'] }] },
      'mixed_audiences',
    ],
  ])('refuses %s with 400', async (_case, body, code) => {
    const payload = JSON.parse(JSON.stringify(body).replaceAll('"T"', JSON.stringify(crm)));
    const response = await server.request('POST', '/api/integration/tokens', {
      token: server.user('OWNER').accessToken,
      body: payload,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe(code);
  });

  it.each([
    ['STEWARD', 'workspace:read:audit', 'ADMIN'],
    ['STEWARD', 'workspace:read:members', 'ADMIN'],
    ['MEMBER', 'workspace:write:certify', 'STEWARD'],
    ['MEMBER', 'workspace:write:definition', 'STEWARD'],
    ['MEMBER', 'workspace:write:recertify', 'STEWARD'],
  ] as const)(
    'refuses a %s minting %s with 403 (§2.2: it needs %s or above), issuing nothing',
    async (role, scope, requiredRole) => {
      const before = await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens');
      const response = await server.request('POST', '/api/integration/tokens', {
        token: server.user(role).accessToken,
        body: { name: 'above-role', env: 'dev', scopes: [scope] },
      });
      expect(response.status).toBe(403);
      expect(response.body.error).toMatchObject({
        code: 'role_cannot_mint_scope',
        details: { scope, requiredRole, role },
      });
      expect(await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens')).toEqual(before);
    },
  );

  it('lets the lowest role of each scope mint it (§2.2: read scopes ADMIN, write scopes STEWARD)', async () => {
    for (const [role, scope] of [
      ['ADMIN', 'workspace:read:audit'],
      ['ADMIN', 'workspace:read:members'],
      ['STEWARD', 'workspace:write:certify'],
      ['STEWARD', 'workspace:write:definition'],
      ['STEWARD', 'workspace:write:recertify'],
    ] as const) {
      const issued = await server.issueToken(role, { name: 'lowest', env: 'dev', scopes: [scope] });
      expect(issued, `${role} ${scope}`).toMatchObject({ audience: 'MANAGEMENT', scopes: [scope] });
    }
  });

  it('refuses a DATA-API token the certify scope at mint (400), whoever asks, issuing nothing', async () => {
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens');
    const response = await server.request('POST', '/api/integration/tokens', {
      token: server.user('OWNER').accessToken,
      body: { name: 'rows-and-certify', env: 'dev', scopes: [...readGrant(), 'workspace:write:certify'] },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('certify_scope_refused');
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens')).toEqual(before);
  });

  describe("within the issuer's environment scope (§5.6)", () => {
    // The seeded steward's scope is dev and staging; the workspace also has production.
    const mint = (role: 'OWNER' | 'STEWARD', env: string) =>
      server.request('POST', '/api/integration/tokens', {
        token: server.user(role).accessToken,
        body: { name: 'scoped', env, scopes: ['workspace:write:definition'] },
      });

    it.each([
      ['production, outside the scope', 'production'],
      ['* (every environment), wider than the scope', '*'],
    ])('refuses a steward minting for %s with 403', async (_case, env) => {
      const before = await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens');
      const response = await mint('STEWARD', env);
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('environment_not_in_scope');
      expect(response.body.error.details).toMatchObject({ env, missing: ['production'] });
      expect(await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens')).toEqual(before);
    });

    it('lets a steward mint for an environment of the scope', async () => {
      const response = await mint('STEWARD', 'dev');
      expect(response.status).toBe(201);
      expect(response.body.env).toBe('dev');
    });

    it('lets an owner, whose scope is every environment, mint for *', async () => {
      const response = await mint('OWNER', '*');
      expect(response.status).toBe(201);
      expect(response.body.env).toBe('*');
    });
  });

  it('answers 404 for a table that is unknown, inactive or in another workspace', async () => {
    const ids = ['tbl_missing', server.table('legacy_leads').id, server.ready.otherWorkspace.tables[0]?.id];
    for (const tableId of ids) {
      const response = await server.request('POST', '/api/integration/tokens', {
        token: server.user('OWNER').accessToken,
        body: { name: 'x', env: '*', scopes: [{ tableId, permissions: ['read'] }] },
      });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('table_not_found');
    }
  });

  it('records the issue in the audit log without the secrets', async () => {
    const issued = await server.issueToken('OWNER', { name: 'audited', env: '*', scopes: readGrant() });
    const log = await server.request(
      'GET',
      '/api/workspace/audit-log?eventType=INTEGRATION_TOKEN_ISSUED&limit=200',
      {
        token: server.user('OWNER').accessToken,
      },
    );
    const entry = log.body.entries.find(
      (e: { details: { tokenId: string } }) => e.details.tokenId === issued.id,
    );
    expect(entry).toMatchObject({ userId: server.user('OWNER').userId, resource: 'integration_token' });
    const text = JSON.stringify(log.body);
    expect(text).not.toContain(issued.clientToken);
    expect(text).not.toContain(issued.tokens.refreshToken.split('.')[1]);
  });
});

describe('refresh', () => {
  it('rotates: a new access and refresh token, and the old refresh token is spent', async () => {
    const issued = await server.issueToken('OWNER', { name: 'rotate', env: '*', scopes: readGrant() });
    const first = await refresh(issued.tokens.refreshToken);
    expect(first.status).toBe(200);
    const { accessToken, refreshToken } = first.body.tokens;
    expect(refreshToken).not.toBe(issued.tokens.refreshToken);
    expect((await listCrm(accessToken)).status).toBe(200);
    const second = await refresh(refreshToken);
    expect(second.status).toBe(200);
    expect((await listCrm(second.body.tokens.accessToken)).status).toBe(200);
  });

  it("keeps the refresh token's id and rotates only its secret (§2.1: `<tokenId>.<secret>`)", async () => {
    const issued = await server.issueToken('OWNER', { name: 'same id', env: '*', scopes: readGrant() });
    const first = await refresh(issued.tokens.refreshToken);
    const second = await refresh(first.body.tokens.refreshToken);
    const pairs = [
      issued.tokens.refreshToken,
      first.body.tokens.refreshToken,
      second.body.tokens.refreshToken,
    ].map((token: string) => token.split('.'));
    expect(new Set(pairs.map(([id]) => id)).size).toBe(1);
    expect(new Set(pairs.map(([, secret]) => secret)).size).toBe(3);
    // The first secret, spent twice over, is reuse: the family is revoked and the newest secret with it.
    const reused = await refreshLater(issued.tokens.refreshToken, 31_000);
    expect(reused.body.error.code).toBe('refresh_token_reused');
    expect((await refresh(second.body.tokens.refreshToken)).status).toBe(401);
  });

  it('treats a spent refresh token presented after the grace window as reuse: 401, and every token of the family is revoked', async () => {
    const issued = await server.issueToken('OWNER', { name: 'stolen', env: '*', scopes: readGrant() });
    const rotated = await refresh(issued.tokens.refreshToken);
    expect(rotated.status).toBe(200);
    const reused = await refreshLater(issued.tokens.refreshToken, 31_000);
    expect(reused.status).toBe(401);
    expect(reused.body.error.code).toBe('refresh_token_reused');
    // The legitimate holder's newer tokens die with the family, the original access token too.
    expect((await refresh(rotated.body.tokens.refreshToken)).status).toBe(401);
    for (const token of [rotated.body.tokens.accessToken, issued.tokens.accessToken]) {
      const response = await listCrm(token);
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('token_revoked');
    }
    const log = await server.request('GET', '/api/workspace/audit-log?eventType=INTEGRATION_TOKEN_REVOKED', {
      token: server.user('ADMIN').accessToken,
    });
    expect(log.body.entries.map((e: { details: { tokenId: string } }) => e.details.tokenId)).toContain(
      issued.id,
    );
  });

  it('answers a spent refresh token presented again within the grace window with the same pair', async () => {
    const issued = await server.issueToken('OWNER', { name: 'lost-answer', env: '*', scopes: readGrant() });
    const rotated = await refresh(issued.tokens.refreshToken);
    expect(rotated.status).toBe(200);
    const again = await refreshLater(issued.tokens.refreshToken, 29_000);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(rotated.body);
    expect((await listCrm(rotated.body.tokens.accessToken)).status).toBe(200);
    const next = await refresh(rotated.body.tokens.refreshToken);
    expect(next.status).toBe(200);
    expect((await listCrm(next.body.tokens.accessToken)).status).toBe(200);
    // One rotation was recorded, not two.
    const rows = await server.sql(`SELECT count(*)::int AS n FROM gds.refresh_tokens WHERE family_id = $1`, [
      issued.id,
    ]);
    expect(rows[0].n).toBe(3);
  });

  it('keeps a sealed successor no longer than the grace window: the next refresh after it drops the seal', async () => {
    const issued = await server.issueToken('OWNER', { name: 'sealed', env: '*', scopes: readGrant() });
    const rotated = await refresh(issued.tokens.refreshToken);
    expect(rotated.status).toBe(200);
    const sealed = () =>
      server.sql(
        `SELECT count(*)::int AS n FROM gds.refresh_tokens WHERE family_id = $1 AND successor_sealed IS NOT NULL`,
        [issued.id],
      );
    expect((await sealed())[0].n).toBe(1);
    server.clock.advance(31_000);
    try {
      const other = await server.issueToken('OWNER', { name: 'sweeper', env: '*', scopes: readGrant() });
      expect((await refresh(other.tokens.refreshToken)).status).toBe(200);
      expect((await sealed())[0].n).toBe(0);
    } finally {
      server.clock.reset();
    }
  });

  it('16 parallel refreshes of one token: every answer is the same pair, and it works', async () => {
    const issued = await server.issueToken('OWNER', { name: 'racing', env: '*', scopes: readGrant() });
    const answers = await Promise.all(Array.from({ length: 16 }, () => refresh(issued.tokens.refreshToken)));
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    const pairs = new Set(answers.map((a) => JSON.stringify(a.body.tokens)));
    expect(pairs.size).toBe(1);
    const { accessToken, refreshToken } = answers[0]?.body.tokens as {
      accessToken: string;
      refreshToken: string;
    };
    expect((await listCrm(accessToken)).status).toBe(200);
    const next = await refresh(refreshToken);
    expect(next.status).toBe(200);
    expect((await listCrm(next.body.tokens.accessToken)).status).toBe(200);
  });

  it('keeps the successor sealed: the database holds neither its refresh token nor its access token', async () => {
    const issued = await server.issueToken('OWNER', { name: 'sealed', env: '*', scopes: readGrant() });
    const rotated = await refresh(issued.tokens.refreshToken);
    const [id] = issued.tokens.refreshToken.split('.');
    const [row] = await server.sql('SELECT * FROM gds.refresh_tokens WHERE id = $1', [id]);
    const stored = JSON.stringify(row);
    expect(row.successor_sealed).toEqual(expect.any(String));
    expect(stored).not.toContain(rotated.body.tokens.refreshToken.split('.')[1]);
    expect(stored).not.toContain(rotated.body.tokens.accessToken.split('.')[1]);
    // A wrong secret for the spent id does not open it, and revokes nothing.
    expect((await refresh(`${id}.not-the-secret`)).body.error.code).toBe('invalid_refresh_token');
    expect((await listCrm(rotated.body.tokens.accessToken)).status).toBe(200);
  });

  it('refuses a wrong secret with 401 without revoking the family', async () => {
    const issued = await server.issueToken('OWNER', { name: 'guess', env: '*', scopes: readGrant() });
    const [id] = issued.tokens.refreshToken.split('.');
    const guessed = await refresh(`${id}.not-the-secret`);
    expect(guessed.status).toBe(401);
    expect(guessed.body.error.code).toBe('invalid_refresh_token');
    expect((await refresh(issued.tokens.refreshToken)).status).toBe(200);
  });

  it.each([['garbage'], ['rt_unknown.secret'], ['a.b.c']])('refuses %s with 401', async (token) => {
    expect((await refresh(token)).status).toBe(401);
  });

  it('answers 400 when the body has no refreshToken', async () => {
    const response = await server.request('POST', '/api/integration/refresh', { body: {} });
    expect(response.status).toBe(400);
  });

  it('lets an expired access token be replaced, and refuses a refresh token after 30 days', async () => {
    const issued = await server.issueToken('OWNER', { name: 'ageing', env: '*', scopes: readGrant() });
    server.clock.advance(61 * 60_000);
    try {
      expect((await listCrm(issued.tokens.accessToken)).body.error.code).toBe('token_expired');
      const renewed = await refresh(issued.tokens.refreshToken);
      expect(renewed.status).toBe(200);
      expect((await listCrm(renewed.body.tokens.accessToken)).status).toBe(200);
      server.clock.advance(30 * 24 * 60 * 60_000);
      const late = await refresh(renewed.body.tokens.refreshToken);
      expect(late.status).toBe(401);
      expect(late.body.error.code).toBe('refresh_token_expired');
    } finally {
      server.clock.reset();
    }
  });
});

describe('a grant belongs to the table it was made on', () => {
  const productsdim = () => pushDevDefinition(server, 'productsdim', ['product_id', 'price'], 'OWNER');
  const records = (tableId: string, token: string) =>
    server.request('GET', `/api/tables/${tableId}/records?limit=1`, { token });

  it('a token granted on a deleted table reads nothing of a new table reusing its slug, refreshed or not', async () => {
    const owner = server.user('OWNER').cliToken;
    const first = await productsdim();
    expect(first.status).toBe(202);
    const granted = await server.issueToken('OWNER', {
      name: 'old-grant',
      env: 'dev',
      scopes: [{ tableId: first.body.tableId, permissions: ['read'] }],
    });
    expect(granted.scopes).toEqual(['tables:productsdim:read']);
    expect((await records(first.body.tableId, granted.tokens.accessToken)).status).toBe(200);

    expect(
      (await server.request('DELETE', `/api/tables/${first.body.tableId}`, { token: owner })).status,
    ).toBe(200);
    const second = await productsdim();
    expect(second.status).toBe(202);
    expect(second.body.tableId).not.toBe(first.body.tableId);

    const refused = await records(second.body.tableId, granted.tokens.accessToken);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('table_not_in_scope');
    const refreshed = await refresh(granted.tokens.refreshToken);
    expect(refreshed.status).toBe(200);
    expect((await records(second.body.tableId, refreshed.body.tokens.accessToken)).status).toBe(403);

    const fresh = await server.issueToken('OWNER', {
      name: 'new-grant',
      env: 'dev',
      scopes: [{ tableId: second.body.tableId, permissions: ['read'] }],
    });
    expect(fresh.scopes).toEqual(['tables:productsdim:read']);
    expect((await records(second.body.tableId, fresh.tokens.accessToken)).status).toBe(200);
  });

  it('a token issued before grants were bound keeps its table after the upgrade, and only that table', async () => {
    const owner = server.user('OWNER').cliToken;
    for (const { id } of await server.sql(`SELECT id FROM gds.tables WHERE slug = 'productsdim' AND active`))
      await server.request('DELETE', `/api/tables/${String(id)}`, { token: owner });
    const first = await productsdim();
    expect(first.status).toBe(202);
    const legacy = await server.issueToken('OWNER', {
      name: 'legacy-grant',
      env: 'dev',
      scopes: [{ tableId: first.body.tableId, permissions: ['read'] }],
    });
    // As a server before migration 7 stored it: no table ids, so the grant reads nothing.
    await server.sql(`UPDATE gds.integration_tokens SET table_ids = '{}'::jsonb WHERE name = 'legacy-grant'`);
    const before = await refresh(legacy.tokens.refreshToken);
    expect((await records(first.body.tableId, before.body.tokens.accessToken)).status).toBe(403);

    await server.sql(BIND_EXISTING_GRANTS);
    const [row] = await server.sql(
      `SELECT table_ids FROM gds.integration_tokens WHERE name = 'legacy-grant'`,
    );
    expect(row?.table_ids).toEqual({ productsdim: first.body.tableId });
    const after = await refresh(before.body.tokens.refreshToken);
    expect(after.status).toBe(200);
    expect((await records(first.body.tableId, after.body.tokens.accessToken)).status).toBe(200);

    // A later table reusing the slug stays outside the upgraded token.
    expect(
      (await server.request('DELETE', `/api/tables/${first.body.tableId}`, { token: owner })).status,
    ).toBe(200);
    const second = await productsdim();
    await server.sql(BIND_EXISTING_GRANTS);
    const [again] = await server.sql(
      `SELECT table_ids FROM gds.integration_tokens WHERE name = 'legacy-grant'`,
    );
    expect(again?.table_ids).toEqual({ productsdim: first.body.tableId });
    expect(second.body.tableId).not.toBe(first.body.tableId);
  });
});
