// Issue 22 item 7 with the real gds: `gds tokens list` shows the workspace's integration tokens masked,
// `gds tokens revoke tf_…` revokes one (the token is 401 on its next request), `gds auth revoke` revokes
// the CLI token it runs with (the next command exits 3). No token is ever printed whole.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
const outputs: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

async function gds(args: string[], token: string): Promise<CliResult> {
  const result = await runCli(args, {
    env: {
      GDS_CONFIG_DIR: await mkdtemp(join(tmpdir(), 'gds-revoke-')),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: token,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

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

    const revoked = await gds(['tokens', 'revoke', issued.clientToken], admin);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${issued.id}`);
    const next = await server.request('GET', `/api/tables/${crm}/records?limit=1`, {
      token: issued.tokens.accessToken,
    });
    expect(next.status).toBe(401);

    const member = await gds(['tokens', 'list'], server.user('MEMBER').cliToken);
    expect(member.code).toBe(4);
    for (const output of outputs) expect(output).not.toContain(issued.clientToken.slice(8));
  });

  it('gds auth revoke revokes the CLI token it runs with: the next command exits 3', async () => {
    const steward = server.user('STEWARD').cliToken;
    expect((await gds(['whoami'], steward)).code).toBe(0);
    const revoked = await gds(['auth', 'revoke', '--json'], steward);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: true });
    expect((await gds(['whoami'], steward)).code).toBe(3);
  });
});
