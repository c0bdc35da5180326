// A CI runner whose clock runs ahead of the service's (a hardware clock kept in local time, a VM resumed
// from a snapshot, no NTP): the service's absolute expiry of an access token is already past on the runner.
// gds must not take every token for expired: an integration profile renewed on every request (a records
// export of 30,000 pages is 30,000 refreshes), or a drawn MANAGEMENT token drawn again for each part of a
// recertify. The expiry is kept on the runner's clock (the token's lifetime from when it was received), so a
// token is renewed as often as with clocks that agree: once an hour. The server's clock is moved back two
// hours (`server.clock`); gds runs in the test process.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Workspace } from './login-helpers.js';
import { newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;
const HOUR = 60 * 60_000;

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace()]);
});

afterAll(async () => {
  server?.clock.reset();
  await w?.remove();
  await server?.close();
});

async function count(action: string): Promise<number> {
  const rows = await server.sql(`SELECT count(*)::int AS n FROM gds.audit_log WHERE action = $1`, [action]);
  return rows[0].n as number;
}

describe('a runner whose clock is two hours ahead of the service', () => {
  it('an integration profile is refreshed once an hour, not on every run and request', async () => {
    server.clock.advance(-2 * HOUR);
    const issued = await w.run(
      ['tokens', 'issue', '--name', 'nightly', '--env', 'dev', '--scope', 'workspace:read:audit'].concat([
        '--save-profile',
        'ci',
      ]),
      { SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url },
    );
    expect(issued.code, issued.stderr).toBe(0);
    // Told as an instant of the runner's clock (piped: the ISO time), not one already past.
    const told = /Access token: +expires (\S+)/.exec(issued.stdout)?.[1];
    expect(Math.abs(Date.parse(told ?? '') - (Date.now() + HOUR))).toBeLessThan(5 * 60_000);
    const saved = (await w.config()).profiles.ci;
    // On the runner's clock: about an hour from now.
    expect(Math.abs(Date.parse(saved.expiresAt) - (Date.now() + HOUR))).toBeLessThan(5 * 60_000);

    const before = await count('INTEGRATION_TOKEN_REFRESHED');
    for (let run = 0; run < 3; run += 1) {
      const list = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
      expect(list, list.stderr).toMatchObject({ code: 0, stderr: '' });
    }
    expect(await count('INTEGRATION_TOKEN_REFRESHED')).toBe(before);

    // An hour later on both clocks: one refresh, and the renewed expiry is on the runner's clock too.
    server.clock.advance(61 * 60_000);
    const now = Date.now;
    const later = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(later, later.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(await count('INTEGRATION_TOKEN_REFRESHED')).toBe(before + 1);
    const renewed = (await w.config()).profiles.ci;
    expect(Date.parse(renewed.expiresAt)).toBeGreaterThan(now() + 50 * 60_000);
    const again = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(await count('INTEGRATION_TOKEN_REFRESHED')).toBe(before + 1);
  });

  it('recertify on a CLI token draws its MANAGEMENT token once for a run of three parts, not once a part', async () => {
    // 1,200 rebuilt models: three signals of at most 500, each sent with the drawn token.
    const results = Array.from({ length: 1_200 }, (_, i) => ({
      status: 'success',
      unique_id: `model.shop.skew_${i}`,
      message: 'CREATE TABLE',
      adapter_response: {},
      relation_name: `"dev"."analytics_dev"."skew_${i}"`,
    }));
    const runResults = join(w.configDir, 'run_results.json');
    await writeFile(
      runResults,
      JSON.stringify({
        metadata: {
          dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
          dbt_version: '1.8.0',
          invocation_id: 'skew-1',
        },
        results,
        elapsed_time: 60,
        args: { which: 'build' },
      }),
    );
    const before = await count('SHORT_LIVED_TOKEN_ISSUED');
    const run = await w.run(['recertify', '--run-results', runResults, '--env', 'dev', '--json'], {
      SERVICE_TOKEN: server.user('STEWARD').cliToken,
      SERVICE_API_URL: server.url,
      XDG_STATE_HOME: join(w.configDir, 'state'),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ submitted: 1_200 });
    expect(await count('SHORT_LIVED_TOKEN_ISSUED')).toBe(before + 1);
  });
});
