// Token revocation with gds in the test process (a real `gds` on a terminal where it asks): `gds tokens list`
// shows the workspace's integration tokens masked, `gds tokens revoke tf_…` revokes one (the token is 401 on
// its next request), `gds auth revoke` revokes the CLI token it runs with (the next command exits 3). No token is ever printed whole. Both are
// destructive, so both confirm as `gds delete` does: asked on a terminal (n: exit 1, nothing revoked),
// refused without one (exit 2 naming --yes) unless --yes.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import TokensList from '../../src/commands/tokens/list.js';

let server: TestServer;
const outputs: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
});

afterAll(async () => {
  await server?.close();
});

async function envFor(token: string) {
  return {
    GDS_CONFIG_DIR: await mkdtemp(join(tmpdir(), 'gds-revoke-')),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: token,
  };
}

async function gds(args: string[], token: string): Promise<CliResult> {
  const result = await runInProcess(args, { env: await envFor(token) });
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** `gds args…` on a pseudo-terminal: waits for `question`, answers `answer`, resolves the result. */
async function answered(args: string[], token: string, question: string, answer: string) {
  const [command, argv] = cliCommand(args);
  const line = `stty cols 200 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
  const { child, result } = runInTerminal(line, await envFor(token));
  let seen = '';
  child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
  for (let i = 0; i < 300 && !seen.includes(question); i += 1) await sleep(50);
  expect(seen).toContain(question);
  child.stdin?.write(answer);
  const r = await result;
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** An integration token reading the orders table, issued by `role`. */
function ordersFeed(role: 'OWNER' | 'MEMBER', name: string) {
  const orders = server.table('orders');
  const scopes = [{ tableId: orders.id, permissions: ['read' as const] }];
  return server.issueToken(role, { name, env: orders.environmentLabel, scopes });
}

const live = (token: string) => server.request('GET', '/api/me', { token }).then((r) => r.status);

describe('gds tokens list / revoke, gds auth revoke', () => {
  it('lists masked, revokes by tf_ client token, and the revoked token is 401 on its next request', async () => {
    const crm = server.table('crm_contacts').id;
    const issued = await server.issueToken('OWNER', {
      name: 'pipeline',
      env: '*',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const admin = server.user('ADMIN').cliToken;
    const list = await gds(['tokens', 'list', '--json'], admin);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    const rows = list.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows.find((r) => r.id === issued.id)).toMatchObject({ name: 'pipeline', revokedAt: null });

    const revoked = await gds(['tokens', 'revoke', issued.clientToken, '--yes'], admin);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`✓ Revoked "pipeline" ${issued.id}`);
    expect(revoked.stdout).toBe('');
    const next = await server.request('GET', `/api/tables/${crm}/records?limit=1`, {
      token: issued.tokens.accessToken,
    });
    expect(next.status).toBe(401);

    // A MEMBER sees their own tokens, not the OWNER's.
    const member = await gds(['tokens', 'list', '--json'], server.user('MEMBER').cliToken);
    expect(member.code).toBe(0);
    expect(member.stdout).not.toContain(issued.id);
    for (const output of outputs) expect(output).not.toContain(issued.clientToken.slice(8));
  });

  it('a MEMBER revokes the token they issued for a table they own', async () => {
    const orders = server.table('orders');
    const issued = await ordersFeed('MEMBER', 'member-feed');
    const revoked = await gds(
      ['tokens', 'revoke', issued.clientToken, '--yes'],
      server.user('MEMBER').cliToken,
    );
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(`✓ Revoked "member-feed" ${issued.id}`);
    const next = await server.request('GET', `/api/tables/${orders.id}/records?limit=1`, {
      token: issued.tokens.accessToken,
    });
    expect(next.status).toBe(401);
  });

  it("tokens list's jq example prints what tokens revoke takes; a masked client token is 404 pointing at the id or name", async () => {
    const issued = await ordersFeed('OWNER', 'example-feed');
    const owner = server.user('OWNER').cliToken;
    const listed = await gds(['tokens', 'list', '--json'], owner);
    const row = listed.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; clientToken: string })
      .find((r) => r.id === issued.id);
    const masked = await gds(['tokens', 'revoke', row?.clientToken ?? '', '--yes'], owner);
    expect(masked.code).toBe(5);
    expect(masked.stderr).toContain('gds tokens list');
    expect(masked.stderr).toMatch(/\bid\b.*\bNAME\b|\bNAME\b.*\bid\b/);

    const example = TokensList.examples.map(String).find((e) => e.includes('jq -r'));
    const filter = /jq -r '(.*)'$/.exec(example ?? '')?.[1] ?? '';
    const picked = await gds(['tokens', 'list', '--json', '--jq', filter], owner);
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout.split('\n')).toContain(issued.id);
    const revoked = await gds(['tokens', 'revoke', issued.id, '--yes'], owner);
    expect(revoked.code, revoked.stderr).toBe(0);
  });

  it('gds auth revoke revokes the CLI token it runs with: the next command exits 3', async () => {
    const steward = server.user('STEWARD').cliToken;
    expect((await gds(['whoami'], steward)).code).toBe(0);
    const revoked = await gds(['auth', 'revoke', '--yes', '--json'], steward);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });
    expect((await gds(['whoami'], steward)).code).toBe(3);
  });

  it('without a terminal and without --yes: exit 2 naming --yes, nothing revoked', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'kept',
      env: '*',
      scopes: ['workspace:read:audit'] as never,
    });
    const admin = server.user('ADMIN').cliToken;
    const tokens = await gds(['tokens', 'revoke', issued.id, '--json'], admin);
    expect(tokens.code).toBe(2);
    expect(JSON.parse(tokens.stderr.trim()).error).toMatchObject({ code: 'confirmation_required' });
    expect(tokens.stderr).toContain('--yes');
    expect(await live(issued.tokens.accessToken)).toBe(200);
    const own = await gds(['auth', 'revoke'], admin);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain('Pass --yes');
    expect(await live(admin)).toBe(200);
  });

  it('on a terminal: asks first; n keeps the token (exit 1), y revokes it', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'asked',
      env: '*',
      scopes: ['workspace:read:audit'] as never,
    });
    const owner = server.user('OWNER').cliToken;
    const no = await answered(
      ['tokens', 'revoke', issued.clientToken],
      owner,
      'Revoke integration token tf_',
      'n\r',
    );
    expect(no.code).toBe(1);
    expect(no.stdout).toContain('Not revoked');
    expect(await live(issued.tokens.accessToken)).toBe(200);
    const yes = await answered(
      ['tokens', 'revoke', issued.clientToken],
      owner,
      'Revoke integration token tf_',
      'y\r',
    );
    expect(yes.code, yes.stdout).toBe(0);
    expect(await live(issued.tokens.accessToken)).toBe(401);

    const member = server.user('MEMBER').cliToken;
    const keep = await answered(['auth', 'revoke'], member, 'Revoke cli_', '\r');
    expect(keep.code).toBe(1);
    expect(await live(member)).toBe(200);
    const gone = await answered(['auth', 'revoke'], member, 'Revoke cli_', 'y\r');
    expect(gone.code, gone.stdout).toBe(0);
    expect(await live(member)).toBe(401);
  });
});
