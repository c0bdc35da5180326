// `gds tokens issue|refresh --save-profile`: the real gds against the reference server. The integration
// token is stored only when asked, then renews itself through POST /api/integration/refresh when the
// server's clock says it expired; the old refresh token is spent; no token is ever printed whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;
const secrets: string[] = [];

beforeAll(async () => {
  [server, w] = await Promise.all([
    startTestServer({ refreshGraceMs: 30_000 }),
    newWorkspace(),
    ensureBuilt(),
  ]);
});

afterAll(async () => {
  const outputs = w.outputs.join('\n');
  for (const secret of secrets) expect(outputs).not.toContain(secret);
  await w.remove();
  await server.close();
});

/** Signed in as a person for this one call (the flag and variable win over any profile). */
const asPerson = (role: 'OWNER' | 'STEWARD') => {
  secrets.push(server.user(role).cliToken);
  return { SERVICE_TOKEN: server.user(role).cliToken, SERVICE_API_URL: server.url };
};

async function refreshCount(): Promise<number> {
  const rows = await server.sql(
    `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'INTEGRATION_TOKEN_REFRESHED'`,
  );
  return rows[0].n as number;
}

async function ciProfile() {
  const profile = (await w.config()).profiles.ci;
  secrets.push(profile.accessToken, profile.refreshToken);
  return profile;
}

const auditIssue = [
  'tokens',
  'issue',
  '--name',
  'ci-audit',
  '--env',
  'dev',
  '--scope',
  'workspace:read:audit',
];

describe('gds tokens issue --save-profile', () => {
  it('without --save-profile nothing is written to the config', async () => {
    const r = await w.run([...auditIssue, '--json'], asPerson('OWNER'));
    expect(r).toMatchObject({ code: 0, stderr: '' });
    // Shown once, as asked: this one output is left out of the check that no token is ever printed.
    w.outputs.splice(-2);
    const [issued] = ndjson(r.stdout);
    expect(issued.tokens.refreshToken).toMatch(/^.+\..+$/);
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });

  it('a STEWARD stores a DATA-API token for dev in profile ci: told where, the tokens not shown', async () => {
    const steward = server.user('STEWARD').userId;
    const table = server.ready.tables.find((t) => t.ownerId === steward)?.id;
    expect(table).toBeDefined();
    const r = await w.run(
      [
        'tokens',
        'issue',
        '--name',
        'ci-data',
        '--env',
        'dev',
        '--table',
        `${table}:read`,
        '--save-profile',
        'ci',
      ],
      asPerson('STEWARD'),
    );
    expect(r.code).toBe(0);
    const profile = await ciProfile();
    expect(profile).toMatchObject({
      kind: 'integration',
      base: server.url,
      audience: 'DATA-API',
      env: 'dev',
    });
    expect(r.stderr).toContain('✓ Issued DATA-API token');
    expect(r.stdout).not.toContain('Issued');
    expect(r.stderr).toContain(
      `Stored in profile ci (file: the config file ${join(w.configDir, 'config.json')})`,
    );
    expect(r.stderr).not.toContain('Shown once');
    // The client token, a label the API refuses and revocation scripts need, is shown whole once: it is
    // stored nowhere else, and the service keeps only its hash.
    const clientToken = /Client token: {2}(tf_[A-Za-z0-9_-]+) {2}\(/.exec(r.stdout + r.stderr)?.[1];
    expect(clientToken).toBeDefined();
    const [issued] = await server.sql(
      `SELECT client_token_hash FROM gds.integration_tokens WHERE name = 'ci-data'`,
    );
    expect(issued?.client_token_hash).toBe(
      createHash('sha256')
        .update(clientToken ?? '')
        .digest('hex'),
    );
  });

  it('refuses to replace the live profile without --force: nothing issued, the profile unchanged', async () => {
    const before = await ciProfile();
    const r = await w.run([...auditIssue, '--save-profile', 'ci', '--json'], asPerson('OWNER'));
    expect(r.code).toBe(2);
    expect(ndjson(r.stderr)).toEqual([{ error: expect.objectContaining({ code: 'profile_in_use' }) }]);
    expect(await ciProfile()).toEqual(before);
  });

  it('an OWNER replaces it with --force by a MANAGEMENT token; audit list --profile ci works', async () => {
    const r = await w.run([...auditIssue, '--save-profile', 'ci', '--force', '--json'], asPerson('OWNER'));
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const [record] = ndjson(r.stdout);
    expect(record).toMatchObject({ audience: 'MANAGEMENT', profile: 'ci', storage: 'file' });
    expect(record.clientToken).toMatch(/^tf_[A-Za-z0-9_-]{20,}$/);
    expect(Object.keys(record.tokens).sort()).toEqual(['expiresAt', 'refreshExpiresAt']);
    expect(await ciProfile()).toMatchObject({
      kind: 'integration',
      audience: 'MANAGEMENT',
      tokenId: record.id,
    });

    const list = await w.run(['audit', 'list', '--profile', 'ci', '--json']);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(ndjson(list.stdout).length).toBeGreaterThan(0);
  });

  it('once the server says the access token expired, --profile ci refreshes once and succeeds', async () => {
    const before = await ciProfile();
    const refreshes = await refreshCount();
    server.clock.advance(61 * 60_000);
    try {
      const list = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
      expect(list).toMatchObject({ code: 0, stderr: '' });
      expect(await refreshCount()).toBe(refreshes + 1);
      const after = await ciProfile();
      expect(after.refreshToken).not.toBe(before.refreshToken);
      expect(after.accessToken).not.toBe(before.accessToken);
      expect(after).toMatchObject({ kind: 'integration', audience: 'MANAGEMENT', tokenId: before.tokenId });

      // The old refresh token is spent: presented after the reuse grace window it is a 401 (and revokes
      // the family, §4.2).
      server.clock.advance(31_000);
      const spent = await server.request('POST', '/api/integration/refresh', {
        body: { refreshToken: before.refreshToken },
      });
      expect(spent.status).toBe(401);
    } finally {
      server.clock.reset();
    }
  });

  it('after the reuse revoked the family, --profile ci says to issue a new token and keeps the profile', async () => {
    const before = await ciProfile();
    const json = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(json).toMatchObject({ code: 3, stdout: '' });
    expect(ndjson(json.stderr)).toEqual([
      { error: expect.objectContaining({ code: 'integration_token_expired' }) },
    ]);
    const human = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1']);
    expect(human.code).toBe(3);
    expect(human.stderr).toContain('The integration token of profile ci cannot be renewed');
    expect(human.stderr).toContain('gds tokens issue --save-profile ci --force');
    expect(await ciProfile()).toEqual(before);
  });

  it('tokens refresh --save-profile stores the rotated tokens in a new profile, refusing a live one', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'rotate',
      env: 'dev',
      scopes: ['workspace:read:audit'],
    });
    secrets.push(issued.tokens.accessToken, issued.tokens.refreshToken);
    const base = { SERVICE_API_URL: server.url };
    const refused = await w.run(['tokens', 'refresh', '--save-profile', 'ci'], base);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('No refresh token on stdin');
    const r = await w.run(
      ['tokens', 'refresh', '--refresh-token', issued.tokens.refreshToken, '--save-profile', 'rot'],
      base,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('✓ Refreshed. The refresh token you gave is spent.');
    expect(r.stdout).not.toContain('Refreshed.');
    const rot = (await w.config()).profiles.rot;
    secrets.push(rot.accessToken, rot.refreshToken);
    expect(rot).toMatchObject({ kind: 'integration', base: server.url, tokenId: issued.id });
    const again = await w.run(
      ['tokens', 'refresh', '--refresh-token', rot.refreshToken, '--save-profile', 'rot'],
      base,
    );
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds a live token');
    const list = await w.run(['audit', 'list', '--profile', 'rot', '--limit', '1', '--json']);
    expect(list).toMatchObject({ code: 0, stderr: '' });
  });
});
