// Tokens their holders can find and end, on both engines: a member lists and revokes the integration tokens
// they issued (and no one else's); a signed-in person creates named CLI tokens (`cli_…`, shown whole once),
// lists them masked and revokes them; a CLI token draws short-lived MANAGEMENT or DATA-API tokens that
// nothing lists and that end with it; and the clock offset file moves the server's time at each request.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const DAY = 24 * 60 * 60;

describe.each(ENGINES)('tokens and their holders on $engine', (engine) => {
  let server: TestServer;
  let offsetFile: string;
  const moveClock = (seconds: number) => writeFile(offsetFile, `${seconds}\n`);

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    offsetFile = join(await mkdtemp(join(tmpdir(), 'gds-clock-')), 'offset');
    server = await startTestServer({
      clockOffsetFile: offsetFile,
      ...(engine.postgres ? { database: 'postgres' as const } : {}),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  const session = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER') => server.user(role).accessToken;
  const createCli = (token: string, name: string) =>
    server.request('POST', '/api/cli-tokens', { token, body: { name } });

  it(
    'a MEMBER lists and revokes the integration token they issued, and only theirs',
    needs(engine.skip),
    async () => {
      const orders = server.table('orders');
      const member = server.user('MEMBER');
      const own = await server.issueToken('MEMBER', {
        name: 'orders-feed',
        env: orders.environmentLabel,
        scopes: [{ tableId: orders.id, permissions: ['read'] }],
      });
      const others = await server.issueToken('OWNER', {
        name: 'owner-feed',
        env: '*',
        scopes: [{ tableId: orders.id, permissions: ['read'] }],
      });
      const listed = await server.request('GET', '/api/integration/tokens', { token: member.cliToken });
      expect(listed.status).toBe(200);
      const ids = listed.body.tokens.map((t: { id: string }) => t.id);
      expect(ids).toEqual([own.id]);
      expect(listed.body.tokens[0]).toMatchObject({ name: 'orders-feed', issuedBy: member.email });
      expect(JSON.stringify(listed.body)).not.toContain(own.clientToken);
      const someoneElses = await server.request(
        'GET',
        `/api/integration/tokens?userId=${server.user('OWNER').userId}`,
        {
          token: member.cliToken,
        },
      );
      expect(someoneElses.status).toBe(403);

      const refused = await server.request('POST', '/api/integration/tokens/revoke', {
        token: member.cliToken,
        body: { token: others.clientToken },
      });
      expect(refused.status).toBe(403);
      const revoked = await server.request('POST', '/api/integration/tokens/revoke', {
        token: member.cliToken,
        body: { token: own.clientToken },
      });
      expect(revoked.status).toBe(200);
      expect(revoked.body.token).toMatchObject({ id: own.id, revokedAt: expect.any(String) });
      const read = (token: string) =>
        server.request('GET', `/api/tables/${orders.id}/records?limit=1`, { token });
      expect((await read(own.tokens.accessToken)).status).toBe(401);
      expect((await read(others.tokens.accessToken)).status).toBe(200);
    },
  );

  it(
    'a signed-in person creates a named CLI token, shown whole once, listed masked; a CLI token cannot make one',
    needs(engine.skip),
    async () => {
      const steward = server.user('STEWARD');
      const created = await createCli(session('STEWARD'), 'ci');
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: 'ci',
        userId: steward.userId,
        id: expect.stringMatching(/^clt_/),
      });
      expect(created.body.token).toMatch(/^cli_/);
      const me = await server.request('GET', '/api/me', { token: created.body.token });
      expect(me.status).toBe(200);

      const again = await createCli(session('STEWARD'), 'CI');
      expect(again.status).toBe(409);
      expect(again.body.error.code).toBe('token_name_taken');
      const fromCliToken = await createCli(steward.cliToken, 'other');
      expect(fromCliToken.status).toBe(401);
      expect(fromCliToken.body.error.code).toBe('interactive_login_required');

      const list = await server.request('GET', '/api/cli-tokens', { token: steward.cliToken });
      const row = list.body.tokens.find((t: { id: string }) => t.id === created.body.id);
      expect(row).toMatchObject({ name: 'ci', issuedBy: steward.email, revokedAt: null });
      expect(row.token).toMatch(/^cli_.{4}….{4}$/);
      expect(JSON.stringify(list.body)).not.toContain(created.body.token);
      const [audit] = await server.sql(
        `SELECT details FROM gds.audit_log WHERE action = 'CLI_TOKEN_CREATED' AND details->>'tokenId' = $1`,
        [created.body.id],
      );
      expect(JSON.stringify(audit.details)).not.toContain(created.body.token);
    },
  );

  it(
    'a CLI token cannot mint or draw a token that certifies (§5.9: certify needs an interactive sign-in)',
    needs(engine.skip),
    async () => {
      const admin = server.user('ADMIN');
      const certify = { env: 'dev', scopes: ['workspace:write:certify'] };
      for (const path of ['/api/integration/short-lived-tokens', '/api/integration/tokens']) {
        const body = path.endsWith('/tokens') ? { ...certify, name: 'certify-by-cli' } : certify;
        const fromCliToken = await server.request('POST', path, { token: admin.cliToken, body });
        expect(fromCliToken.status, path).toBe(401);
        expect(fromCliToken.body.error.code, path).toBe('interactive_login_required');
        // A signed-in person still may; a CLI token still draws what does not certify.
        const signedIn = await server.request('POST', path, { token: session('ADMIN'), body });
        expect(signedIn.status, path).toBe(201);
        const recertify = { ...body, scopes: ['workspace:write:recertify'] };
        expect((await server.request('POST', path, { token: admin.cliToken, body: recertify })).status).toBe(
          201,
        );
      }
    },
  );

  it(
    'the holder revokes their CLI token; another member cannot (404), an ADMIN can',
    needs(engine.skip),
    async () => {
      const mine = await createCli(session('MEMBER'), 'laptop');
      const theirs = await createCli(session('OWNER'), 'owner-script');
      const byMember = (id: string) =>
        server.request('POST', `/api/cli-tokens/${id}/revoke`, { token: server.user('MEMBER').cliToken });
      expect((await byMember(theirs.body.id)).status).toBe(404);
      expect((await server.request('GET', '/api/me', { token: theirs.body.token })).status).toBe(200);
      const revoked = await byMember(mine.body.id);
      expect(revoked.status).toBe(200);
      expect(revoked.body.token).toMatchObject({
        id: mine.body.id,
        name: 'laptop',
        revokedAt: expect.any(String),
      });
      expect((await server.request('GET', '/api/me', { token: mine.body.token })).status).toBe(401);
      // The name is free again once the token it named is revoked.
      expect((await createCli(session('MEMBER'), 'laptop')).status).toBe(201);
      const byAdmin = await server.request('POST', `/api/cli-tokens/${theirs.body.id}/revoke`, {
        token: server.user('ADMIN').cliToken,
      });
      expect(byAdmin.status).toBe(200);
    },
  );

  it(
    'a CLI token draws short-lived tokens after the clock moves 2 hours and 31 days; they end with it and leave nothing listed',
    needs(engine.skip),
    async () => {
      const created = await createCli(session('ADMIN'), 'nightly');
      const cli = created.body.token as string;
      const tokensBefore = (await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens'))[0].n;
      const recertify = (token: string) =>
        server.request('POST', '/api/workspace/recertify', {
          token,
          body: { tables: ['customers'], environmentLabel: 'dev' },
        });
      const draw = (body: unknown) =>
        server.request('POST', '/api/integration/short-lived-tokens', { token: cli, body });
      try {
        for (const seconds of [2 * 60 * 60, 31 * DAY]) {
          await moveClock(seconds);
          expect((await server.request('GET', '/api/me', { token: cli })).status).toBe(200);
          const drawn = await draw({ env: 'dev', scopes: ['workspace:write:recertify'] });
          expect(drawn.status).toBe(201);
          expect(drawn.body).toMatchObject({
            audience: 'MANAGEMENT',
            env: 'dev',
            scopes: ['workspace:write:recertify'],
          });
          expect(Date.parse(drawn.body.expiresAt)).toBeGreaterThan(Date.now() + seconds * 1000);
          const answered = await recertify(drawn.body.accessToken);
          expect(answered.status).toBe(200);
          expect(answered.body.environmentLabel).toBe('dev');
          // "Last used" is the server's time, which the offset file moved.
          const listed = await server.request('GET', '/api/cli-tokens', { token: cli });
          const nightly = listed.body.tokens.find((t: { id: string }) => t.id === created.body.id);
          expect(Date.parse(nightly.lastUsedAt)).toBeGreaterThan(Date.now() + (seconds - 60) * 1000);
        }
        const data = await draw({
          env: 'dev',
          scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
        });
        expect(data.status).toBe(201);
        expect(data.body.audience).toBe('DATA-API');
        const records = `/api/tables/${server.table('crm_contacts').id}/records?limit=1`;
        expect((await server.request('GET', records, { token: data.body.accessToken })).status).toBe(200);
        // Table grants without env take the tables' environment; workspace scopes must name one.
        const defaulted = await draw({
          scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
        });
        expect(defaulted.status).toBe(201);
        expect(defaulted.body.env).toBe(server.table('crm_contacts').environmentLabel);
        const unnamed = await draw({ scopes: ['workspace:write:recertify'] });
        expect(unnamed.status).toBe(400);
        expect(unnamed.body.error.code).toBe('env_required');
        // The same rules as issuing: a MEMBER may not draw a write scope of the workspace.
        const member = await server.request('POST', '/api/integration/short-lived-tokens', {
          token: server.user('MEMBER').cliToken,
          body: { env: 'dev', scopes: ['workspace:write:recertify'] },
        });
        expect(member.status).toBe(403);
        // Nothing to list or clean up.
        expect((await server.sql('SELECT count(*)::int AS n FROM gds.integration_tokens'))[0].n).toBe(
          tokensBefore,
        );
        const drawn = await draw({ env: 'dev', scopes: ['workspace:write:recertify'] });
        await server.request('POST', `/api/cli-tokens/${created.body.id}/revoke`, {
          token: server.user('ADMIN').cliToken,
        });
        const after = await recertify(drawn.body.accessToken);
        expect(after.status).toBe(401);
        expect(after.body.error.code).toBe('token_revoked');
        expect((await server.request('GET', records, { token: data.body.accessToken })).status).toBe(401);
      } finally {
        await moveClock(0);
      }
    },
  );

  it(
    'the clock offset file moves the server past an access token’s hour; empty is real time',
    needs(engine.skip),
    async () => {
      const issued = await server.issueToken('ADMIN', {
        name: 'hourly',
        env: 'dev',
        scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
      });
      const read = () =>
        server.request('GET', `/api/tables/${server.table('crm_contacts').id}/records?limit=1`, {
          token: issued.tokens.accessToken,
        });
      await moveClock(2 * 60 * 60);
      try {
        const expired = await read();
        expect(expired.status).toBe(401);
        expect(expired.body.error.code).toBe('token_expired');
      } finally {
        await writeFile(offsetFile, '');
      }
      expect((await read()).status).toBe(200);
    },
  );
});
