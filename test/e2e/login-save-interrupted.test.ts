// `gds auth login` saves the sign-in into its profile once the code is approved: the tokens into the keychain (or
// the file), then the profile into the config file, whose lock another gds may hold a while. A Ctrl-C or SIGTERM
// in between ended gds at once ("Interrupted."): the profile saved by half (its tokens in a keychain entry no
// profile named), and the sign-in left live on the service with nobody told. The signal is now held around the
// save, as `tokens issue|refresh --save-profile` hold it: one while the save waits for the config file's lock ends
// that wait, the profile stays as it was, the sign-in is ended on the service, and stderr says so; gds then exits
// 130 or 143. A real gds process (from its sources) against the reference server, the config file's lock held by
// the test as another gds writing it would.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer } from '../server/oauth/oauth-server.js';
import { startGdsFromSources } from '../helpers/gds-from-sources.js';
import { holdConfigLock } from '../helpers/held-profile-lock.js';

let server: OAuthTestServer;
beforeAll(async () => {
  server = await startOAuthServer();
});
afterAll(() => server.close());

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe.each(['SIGINT', 'SIGTERM'] as const)('%s while auth login waits to save', (signal) => {
  it('the profile stays as it was, the sign-in is ended on the service and said so, exit by the signal', async () => {
    const env = {
      GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-login-interrupted-')), 'gds'),
      GDS_SECRET_STORAGE: 'file',
    };
    const gds = startGdsFromSources(['auth', 'login', '--base', server.url, '--no-browser', '--json'], env);
    const code = await gds.said(/"userCode":"([A-Z]{4}-[A-Z]{4})"/);
    await holdConfigLock(env, cleanup);
    const ended = await server.auditCount('SESSION_REVOKED');
    expect((await server.decide(code, 'owner@example.com', 'approve')).status).toBe(200);
    await gds.said('config.json.lock: held by another process; waiting up to');
    gds.child.kill(signal);
    const r = await gds.result;

    expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
    expect(r.stdout).toBe('');
    const errors = r.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { error?: { code: string; message: string } })
      .flatMap((line) => (line.error === undefined ? [] : [line.error]));
    expect(errors).toHaveLength(1);
    expect(errors[0]?.code).toBe('interrupted');
    expect(errors[0]?.message).toMatch(
      /^Interrupted.* while waiting for another gds writing \S*config\.json/,
    );
    expect(errors[0]?.message).toMatch(/your new sign-in was not saved, and was ended\.$/);
    expect(await loadConfig({ env })).toMatchObject({ profiles: {} });
    expect(await server.auditCount('SESSION_REVOKED')).toBe(ended + 1);
  }, 120_000);
});
