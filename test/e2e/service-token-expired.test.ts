// A CI job given an integration access token in SERVICE_TOKEN works for 60 minutes; a longer one (an export of
// millions of rows) gets 401 token_expired half-way, and gds cannot renew a token it was given as it is. The
// error says so, and how to run longer (a profile that renews itself), instead of suggesting SERVICE_TOKEN,
// which is what the job did. The server's clock is moved past the hour; gds runs in the test process.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let config: string;

beforeAll(async () => {
  server = await startTestServer();
  config = join(await mkdtemp(join(tmpdir(), 'gds-e2e-token-expired-')), 'gds');
});

afterAll(async () => {
  server?.clock.reset();
  await server?.close();
});

describe('an integration access token in SERVICE_TOKEN, past its 60 minutes', () => {
  it('exit 3 saying it expired and how a longer job keeps a renewing token, never the token', async () => {
    const issued = await server.issueToken('OWNER', {
      name: 'nightly',
      env: 'dev',
      scopes: ['workspace:read:audit'] as never,
    });
    const token = issued.tokens.accessToken;
    const env = { GDS_CONFIG_DIR: config, SERVICE_API_URL: server.url, SERVICE_TOKEN: token };
    const fresh = await runInProcess(['audit', 'list', '--limit', '1', '--json'], { env });
    expect(fresh.code, fresh.stderr).toBe(0);

    server.clock.advance(61 * 60_000);
    const late = await runInProcess(['audit', 'list', '--limit', '1', '--json'], { env });
    expect(late.code).toBe(3);
    expect(late.stdout).toBe('');
    const { error } = JSON.parse(late.stderr) as { error: { code: string; suggestion: string } };
    expect(error.code).toBe('token_expired');
    expect(error.suggestion).toContain('from SERVICE_TOKEN has expired: it lasts 60 minutes');
    expect(error.suggestion).toContain('gds tokens refresh --save-profile ci');
    expect(error.suggestion).not.toContain('SERVICE_TOKEN=<t>');
    expect(late.stderr).not.toContain(token);

    const human = await runInProcess(['audit', 'list', '--limit', '1'], { env });
    expect(human.code).toBe(3);
    expect(human.stderr).toContain('it lasts 60 minutes, and gds renews only a token kept in a profile');
  });
});
