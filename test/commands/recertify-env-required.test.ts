// `gds recertify` without --env holding an environment-agnostic MANAGEMENT token (SERVICE_TOKEN in CI): the
// service refuses the signal (400 environment_required, nothing applied), and gds says it as it does for a
// person's CLI token, before any request: exit 2, code env_required, naming --env. It said the API's
// "environmentLabel is required" with exit 7 and no suggestion.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

describe('recertify without --env', () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer({ jobs: 'manual' });
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-env-'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[], token: string): Promise<CliResult> =>
    runInProcess(args, {
      env: { GDS_CONFIG_DIR: join(dir, 'gds'), SERVICE_API_URL: server.url, SERVICE_TOKEN: token },
    });

  const applied = async () =>
    (
      await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL'`,
      )
    )[0]?.n;

  it('an environment-agnostic MANAGEMENT token: exit 2 env_required, as with a CLI token; nothing applied', async () => {
    const agnostic = (
      await server.issueToken('ADMIN', { name: 'ci', env: '*', scopes: ['workspace:write:recertify'] })
    ).tokens.accessToken;
    const before = await applied();
    const results = [
      await gds(['recertify', '--tables', 'customers', '--json'], agnostic),
      await gds(['recertify', '--tables', 'customers', '--json'], server.user('ADMIN').cliToken),
    ];
    for (const r of results) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const { error } = JSON.parse(r.stderr.trimEnd()) as { error: { code: string; suggestion: string } };
      expect(error.code).toBe('env_required');
      expect(error.suggestion).toContain('Pass --env');
    }
    expect(await applied()).toBe(before);

    // With --env, the same token signals.
    const r = await gds(['recertify', '--tables', 'customers', '--env', 'dev', '--json'], agnostic);
    expect(r.code, r.stderr).toBe(0);
    expect(await applied()).toBe((before ?? 0) + 1);
  });
});
