// The services behind `gds tokens list|revoke`, `gds auth token create` and the short-lived token a command
// draws on a person's credential, with a real client against the in-process reference server: tokens by
// name, users by e-mail (unknown: exit 5 with the nearest), and recertify run from a CLI token alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import { CliError, ExitCode } from '../../src/core/errors.js';
import { ApiError } from '../../src/client/errors.js';
import { withSession } from '../../src/cli/session.js';
import { recertify } from '../../src/services/recertification.js';
import { listRecordsPage } from '../../src/services/records.js';
import {
  createCliToken,
  drawForTable,
  listTokens,
  revocationTarget,
  revokeToken,
} from '../../src/services/tokens.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bashWords } from '../helpers/bash-words.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
const clients: ApiClient[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.close();
});

function clientOf(token: string): ApiClient {
  const client = createApiClient({ baseUrl: server.url, auth: staticToken(token), logger: () => {} });
  clients.push(client);
  return client;
}

async function failure(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('gds auth token create', () => {
  it('creates a named CLI token for a sign-in, and refuses a CLI token before sending anything', async () => {
    const admin = server.user('ADMIN');
    const created = await createCliToken(
      clientOf(admin.accessToken),
      { token: admin.accessToken, tokenSource: 'env' },
      'svc-create',
    );
    expect(created).toMatchObject({ name: 'svc-create', token: expect.stringMatching(/^cli_/) });
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.cli_tokens');
    const refused = await failure(
      createCliToken(clientOf(admin.cliToken), { token: admin.cliToken, tokenSource: 'env' }, 'again'),
    );
    expect(refused.exitCode).toBe(ExitCode.Unauthenticated);
    expect(refused.message).toContain('the token from SERVICE_TOKEN is a CLI token. Nothing was sent.');
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.cli_tokens')).toEqual(before);
  });
});

describe('gds tokens list', () => {
  it("lists a member's own integration and CLI tokens, each with its kind, newest first", async () => {
    const member = server.user('MEMBER');
    const orders = server.table('orders');
    const issued = await server.issueToken('MEMBER', {
      name: 'member-feed',
      env: orders.environmentLabel,
      scopes: [{ tableId: orders.id, permissions: ['read'] }],
    });
    await server.issueToken('OWNER', {
      name: 'owner-feed',
      env: '*',
      scopes: [{ tableId: orders.id, permissions: ['read'] }],
    });
    const cli = await createCliToken(
      clientOf(member.accessToken),
      { token: member.accessToken, tokenSource: 'env' },
      'member-laptop',
    );
    const rows = await listTokens(clientOf(member.cliToken), { cli: false });
    expect(rows.map((r) => [r.kind, r.name])).toEqual(
      expect.arrayContaining([
        ['integration', 'member-feed'],
        ['cli', 'member-laptop'],
      ]),
    );
    expect(rows.map((r) => r.name)).not.toContain('owner-feed');
    expect(rows.find((r) => r.id === issued.id)).toMatchObject({ issuedBy: member.email });
    const created = rows.map((r) => String(r.createdAt));
    expect(created).toEqual([...created].sort().reverse());
    expect(JSON.stringify(rows)).not.toContain(cli.token);
    const onlyCli = await listTokens(clientOf(member.cliToken), { cli: true });
    expect(new Set(onlyCli.map((r) => r.kind))).toEqual(new Set(['cli']));
  });

  it("--user <e-mail> lists that person's tokens; an unknown e-mail is exit 5 with the nearest", async () => {
    const admin = server.user('ADMIN');
    await server.issueToken('STEWARD', {
      name: 'steward-audit',
      env: 'dev',
      scopes: ['workspace:write:recertify'] as never,
    });
    const rows = await listTokens(clientOf(admin.cliToken), { cli: false, user: 'Steward@Example.com' });
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.userId))).toEqual(new Set([server.user('STEWARD').userId]));
    expect(rows.map((r) => r.name)).toContain('steward-audit');
    const unknown = await failure(
      listTokens(clientOf(admin.cliToken), { cli: false, user: 'stewart@example.com' }),
    );
    expect(unknown.exitCode).toBe(ExitCode.NotFound);
    expect(unknown.code).toBe('user_not_found');
    expect(unknown.suggestion).toContain('Did you mean steward@example.com?');
    // Another person's tokens are an ADMIN's to list: the service's 403 (exit 4 once the session maps it).
    const member = await listTokens(clientOf(server.user('MEMBER').cliToken), {
      cli: false,
      user: admin.email,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(member).toBeInstanceOf(ApiError);
    expect((member as ApiError).status).toBe(403);
  });
});

describe('gds tokens revoke', () => {
  it('revokes by the NAME the list shows; unknown is exit 5 with the nearest, shared is exit 2 with the ids', async () => {
    const steward = server.user('STEWARD');
    const client = clientOf(steward.cliToken);
    const cli = await createCliToken(
      clientOf(steward.accessToken),
      { token: steward.accessToken, tokenSource: 'env' },
      'loader',
    );
    const target = await revocationTarget(client, 'Loader');
    expect(target).toMatchObject({ kind: 'cli', reference: cli.id });
    expect(target.label).toContain('"loader"');
    const revoked = await revokeToken(client, target);
    expect(revoked).toMatchObject({ kind: 'cli', id: cli.id, revokedAt: expect.any(String) });
    expect((await server.request('GET', '/api/me', { token: cli.token })).status).toBe(401);

    const unknown = await failure(revocationTarget(client, 'loadr'));
    expect(unknown.exitCode).toBe(ExitCode.NotFound);
    expect(unknown.suggestion).toContain('tokens list');
    // A revoked token's name names nothing any more.
    expect((await failure(revocationTarget(client, 'loader'))).exitCode).toBe(ExitCode.NotFound);

    await createCliToken(
      clientOf(steward.accessToken),
      { token: steward.accessToken, tokenSource: 'env' },
      'dup',
    );
    const issued = await server.issueToken('STEWARD', {
      name: 'dup',
      env: 'dev',
      scopes: ['workspace:write:recertify'] as never,
    });
    const shared = await failure(revocationTarget(client, 'dup'));
    expect(shared.exitCode).toBe(ExitCode.Usage);
    expect(shared.suggestion).toContain(`gds tokens revoke ${issued.id}`);
    expect((await revocationTarget(client, issued.id)).kind).toBe('integration');
    expect((await revocationTarget(client, issued.clientToken)).label).not.toContain(issued.clientToken);
    expect((await failure(revocationTarget(client, 'cli_whole'))).exitCode).toBe(ExitCode.Usage);
  });
});

describe('gds tokens revoke of a shared name, the list from a hostile service', () => {
  it('suggests one pastable line per token: ids quoted, a line break in who issued it kept in its comment', async () => {
    const token = (id: string, issuedBy: string) => ({
      id,
      name: 'dup',
      audience: 'MANAGEMENT',
      issuedBy,
      userId: 'usr_1',
      revokedAt: null,
    });
    const client = {
      tokens: {
        listCli: async () => ({ tokens: [] }),
        list: async () => ({
          tokens: [token('itk_1;touch PWNED', 'a@example.com\nrm -rf ~'), token('itk_2', 'b@example.com')],
        }),
      },
    } as unknown as Parameters<typeof revocationTarget>[0];
    const shared = await failure(revocationTarget(client, 'dup'));
    expect(shared.suggestion?.split('\n')).toEqual([
      "gds tokens revoke 'itk_1;touch PWNED'   # MANAGEMENT token of a@example.com rm -rf ~",
      'gds tokens revoke itk_2   # MANAGEMENT token of b@example.com',
    ]);
  });
});

describe('a step that takes a MANAGEMENT token, run with a CLI token', () => {
  const signal = (token: string) =>
    withSession(
      {
        flags: { token, base: server.url },
        version: '0.0.0-test',
        draw: async () => ({ env: 'dev', scopes: ['workspace:write:recertify'] }),
      },
      ({ client }) => recertify(client, { tables: ['customers'], environmentLabel: 'dev' }),
    );

  it('draws the short-lived token on the CLI token and signals; a MANAGEMENT token is used as it is', async () => {
    const before = await server.sql(
      `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'SHORT_LIVED_TOKEN_ISSUED'`,
    );
    const answered = await signal(server.user('STEWARD').cliToken);
    expect(answered.environmentLabel).toBe('dev');
    const management = await server.issueToken('STEWARD', {
      name: 'recertify',
      env: 'dev',
      scopes: ['workspace:write:recertify'] as never,
    });
    expect((await signal(management.tokens.accessToken)).environmentLabel).toBe('dev');
    const after = await server.sql(
      `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'SHORT_LIVED_TOKEN_ISSUED'`,
    );
    expect(after[0].n).toBe(before[0].n + 1);
    // A MEMBER's CLI token may not draw a write scope: 403, exit 4, nothing signalled.
    expect((await failure(signal(server.user('MEMBER').cliToken))).exitCode).toBe(ExitCode.Forbidden);
  });
});

describe('a records step run with a CLI token', () => {
  it("draws a DATA-API token for the one table, in the table's environment, and reads its rows", async () => {
    const drawnFor: string[] = [];
    const page = await withSession(
      {
        flags: { token: server.user('MEMBER').cliToken, base: server.url },
        version: '0.0.0-test',
        draw: async (personal) => {
          const drawn = await drawForTable(personal, 'orders', ['read']);
          drawnFor.push(drawn.tableId);
          return drawn.request;
        },
      },
      ({ client }) => listRecordsPage(client, server.table('orders').id, { limit: 1 }),
    );
    expect(drawnFor).toEqual([server.table('orders').id]);
    expect(page.records.length).toBeLessThanOrEqual(1);
    // The member owns orders, not crm_contacts: no DATA-API token for it (403, exit 4).
    const refused = await failure(
      withSession(
        {
          flags: { token: server.user('MEMBER').cliToken, base: server.url },
          version: '0.0.0-test',
          draw: async (personal) => (await drawForTable(personal, 'crm_contacts', ['read'])).request,
        },
        ({ client }) => listRecordsPage(client, server.table('crm_contacts').id, { limit: 1 }),
      ),
    );
    expect(refused.exitCode).toBe(ExitCode.Forbidden);
  });
});

describe('gds auth token create', () => {
  it('says the revoke of a name with a space and `;` as a command that pastes back as that name', async () => {
    const name = 'nightly build; touch PWNED';
    const r = await runInProcess(['auth', 'token', 'create', '--name', name], {
      env: {
        GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-token-hint-')), 'gds'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('ADMIN').accessToken,
      },
    });
    expect(r.code, r.stderr).toBe(0);
    const revoke = /gds tokens revoke (.*) ends it\.$/m.exec(r.stderr);
    expect(bashWords(revoke?.[1] ?? '')).toEqual([name]);
  });
});
