// On a service with single-use refresh tokens (the default, no reuse
// grace), a gds killed after its refresh reached the service finds the refresh recorded in flight and its
// refresh token spent. It cannot get those tokens back, so it says in one line what to run: the
// `gds tokens issue` command that re-issues the profile's token with its environment and scopes.
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace(), ensureBuilt()]);
});

afterAll(async () => {
  await w.remove();
  await server.close();
});

describe('an interrupted refresh whose token the service spent', () => {
  it('exits 3 with the one command that issues the token again; the profile is kept', async () => {
    const issued = await w.run(
      ['tokens', 'issue', '--name', 'nightly', '--env', 'dev', '--scope', 'workspace:read:audit'].concat([
        '--save-profile',
        'ci',
      ]),
      { SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url },
    );
    expect(issued.code, issued.stderr).toBe(0);
    const configPath = join(w.configDir, 'config.json');
    const config = JSON.parse(await readFile(configPath, 'utf8'));
    const { refreshToken } = config.profiles.ci;
    // The refresh reached the service (the token is spent) but the killed gds never saved the answer.
    const spent = await server.request('POST', '/api/integration/refresh', { body: { refreshToken } });
    expect(spent.status).toBe(200);
    config.profiles.ci.refreshInFlight = {
      since: new Date().toISOString(),
      refreshTokenSha256: createHash('sha256').update(refreshToken).digest('hex').slice(0, 16),
    };
    await writeFile(configPath, JSON.stringify(config));

    const human = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1']);
    expect(human.code).toBe(3);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain('had already spent it');
    const command = human.stderr.split('\n').filter((line) => line.includes('gds tokens issue'));
    expect(command).toHaveLength(1);
    expect(command[0]).toContain(
      'gds tokens issue --save-profile ci --force --name ci --env dev --scope workspace:read:audit',
    );
    const json = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(json.code).toBe(3);
    expect(ndjson(json.stderr)).toEqual([
      {
        error: expect.objectContaining({
          code: 'integration_token_expired',
          suggestion: expect.stringContaining('gds tokens issue --save-profile ci --force'),
        }),
      },
    ]);
    expect(JSON.parse(await readFile(configPath, 'utf8')).profiles.ci.kind).toBe('integration');

    // The command it gives works as printed.
    const again = await w.run(
      ['tokens', 'issue', '--save-profile', 'ci', '--force', '--name', 'ci', '--env', 'dev'].concat([
        '--scope',
        'workspace:read:audit',
      ]),
      { SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url },
    );
    expect(again.code, again.stderr).toBe(0);
    expect((await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json'])).code).toBe(0);
  });
});
