// A refresh spends the single-use refresh token before gds can save the new one. When the secret storage is set
// to keychain and the keychain does not answer the write (a locked keyring, a busy or missing session bus on a
// CI runner), refusing to store them would lose the only copy: the next run presents the spent token, and the
// service (no reuse grace, the spec's default) refuses it for good. So the renewed tokens go to the 0600 config
// file, said on stderr every time, and the next renewal that reaches the keychain moves them back.
import { stat } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { configPath, loadConfig } from '../../src/auth/config.js';
import { renewingAuthProvider } from '../../src/auth/refresh.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';

let server: OAuthTestServer;
let dir: string;

beforeAll(async () => {
  // The spec's service: a spent refresh token presented again is refused (no reuse grace).
  server = await startOAuthServer({}, { refreshGraceMs: 0 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-refresh-keychain-'));
  // No session bus to reach: every keychain call fails at once, as on a CI runner without D-Bus.
  vi.stubEnv('DBUS_SESSION_BUS_ADDRESS', `unix:path=${join(dir, 'no-bus')}`);
  return async () => {
    vi.unstubAllEnvs();
    await rm(dir, { recursive: true, force: true });
  };
});

describe('a refresh whose new tokens the keychain does not take (GDS_SECRET_STORAGE=keychain)', () => {
  it('keeps them in the 0600 config file, says so, and the sign-in still works in the next run', async () => {
    const fileEnv = { GDS_CONFIG_DIR: join(dir, 'gds'), GDS_SECRET_STORAGE: 'file' };
    const issued = await server.signIn('owner@example.com');
    await writeSessionProfile(
      fileEnv,
      'work',
      server.url,
      { accessToken: issued.access_token, refreshToken: issued.refresh_token },
      new Date(Date.now() + 30_000).toISOString(),
    );
    const env = { ...fileEnv, GDS_SECRET_STORAGE: 'keychain', XDG_STATE_HOME: join(dir, 'state') };
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);

    const fresh = await renewingAuthProvider('work', { env, warn }).getToken();
    expect(fresh).not.toBe(issued.access_token);
    const profile = (await loadConfig({ env })).profiles.work;
    expect(profile).toMatchObject({ kind: 'session', accessToken: fresh });
    expect(profile?.refreshToken).not.toBe(issued.refresh_token);
    expect(profile?.secretRef).toBeUndefined();
    expect(profile).not.toHaveProperty('refreshInFlight');
    expect((await stat(configPath(env))).mode & 0o777).toBe(0o600);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`stored in ${configPath(env)} (mode 600)`);
    expect(warnings[0]).toContain('The secret storage is set to keychain');
    expect(warnings.join('\n')).not.toContain(fresh);

    // The next run renews with the refresh token saved: the service accepts it.
    const expired = await renewingAuthProvider('work', {
      env,
      warn,
      now: () => Date.now() + 2 * 60 * 60_000,
    }).getToken();
    expect(expired).not.toBe(fresh);
    expect(warnings).toHaveLength(2);
  });
});
