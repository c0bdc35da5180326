// `gds tokens refresh --save-profile`: the profile it writes says what the NEW access token is for (its
// audience, environment and scopes, read from the token's claims), never what the profile held before and
// never nothing: `gds auth status`, the profile picker and the re-issue hint read these fields.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Workspace } from './login-helpers.js';
import { newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace()]);
});

afterAll(async () => {
  await w.remove();
  await server.close();
});

const refreshInto = (profile: string, refreshToken: string, ...more: string[]) =>
  w.run(['tokens', 'refresh', '--refresh-token', refreshToken, '--save-profile', profile, ...more], {
    SERVICE_API_URL: server.url,
  });

describe('gds tokens refresh --save-profile records the new token’s claims', () => {
  it('a new profile gets the audience, environment and scopes of the refreshed token', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'fresh',
      env: 'staging',
      scopes: ['workspace:read:audit', 'workspace:read:members'],
    });
    const r = await refreshInto('fresh', issued.tokens.refreshToken);
    expect(r.code).toBe(0);
    const profile = (await w.config()).profiles.fresh;
    expect(profile).toMatchObject({
      kind: 'integration',
      audience: 'MANAGEMENT',
      env: 'staging',
    });
    expect([...profile.scopes].sort()).toEqual(['workspace:read:audit', 'workspace:read:members']);
  });

  it('over a profile that held another token (--force), nothing of the old one is kept', async () => {
    const steward = server.user('STEWARD').userId;
    const table = server.ready.tables.find((t) => t.ownerId === steward && t.environmentLabel === 'dev');
    expect(table).toBeDefined();
    const issued = await w.run(
      [
        'tokens',
        'issue',
        '--name',
        'data',
        '--env',
        'dev',
        '--table',
        `${table?.id}:read`,
        '--save-profile',
        'ci',
      ],
      { SERVICE_TOKEN: server.user('STEWARD').cliToken, SERVICE_API_URL: server.url },
    );
    expect(issued.code).toBe(0);
    const before = (await w.config()).profiles.ci;
    expect(before).toMatchObject({ audience: 'DATA-API', env: 'dev' });
    expect(before.scopes).toHaveLength(1);

    const management = await server.issueToken('OWNER', {
      name: 'audit',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    const r = await refreshInto('ci', management.tokens.refreshToken, '--force');
    expect(r.code).toBe(0);
    const after = (await w.config()).profiles.ci;
    expect(after).toMatchObject({
      kind: 'integration',
      audience: 'MANAGEMENT',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.tokenId).not.toBe(before.tokenId);

    // What the profile says is what it does: the re-issue hint and `audit list` agree with the new token.
    const list = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(list).toMatchObject({ code: 0, stderr: '' });
  });

  it('the profile holds the tokenId (as tokens issue --save-profile writes it), 0600, the secret never printed', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'ided',
      env: 'dev',
      scopes: ['workspace:read:audit'],
    });
    const secret = issued.tokens.refreshToken.split('.')[1];
    const r = await refreshInto('ided', issued.tokens.refreshToken);
    expect(r.code).toBe(0);
    const profile = (await w.config()).profiles.ided;
    // The id tokens issue answers (and `tokens revoke` takes): a refresh keeps it.
    expect(profile).toMatchObject({ kind: 'integration', tokenId: issued.id });
    const config = join(w.configDir, 'config.json');
    expect((await stat(config)).mode & 0o777).toBe(0o600);
    expect((await readdir(w.configDir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    for (const printed of [r.stdout, r.stderr]) {
      for (const whole of [secret, profile.refreshToken.split('.')[1], profile.accessToken])
        expect(printed).not.toContain(whole);
    }
  });
});
