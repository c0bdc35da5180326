// Sign-in with the OS keychain for real (CI runs the tests inside dbus-run-session with an unlocked
// gnome-keyring; elsewhere this file skips and says why): the session's tokens go to the Secret
// Service and never into the config file, parallel whoami processes refresh them there exactly once,
// and logout removes the entry.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateConfig } from '../../src/auth/config.js';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer } from '../server/oauth/oauth-server.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';
import { needs, whyNoSecretService } from '../helpers/skip.js';

function secretTool(...args: string[]) {
  return collect(spawn('secret-tool', args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 5_000 }));
}

describe('sign-in with the keychain', needs(await whyNoSecretService()), () => {
  let server: OAuthTestServer;
  let w: Workspace;
  const secretsSeen: string[] = [];

  beforeAll(async () => {
    [server, w] = await Promise.all([
      startOAuthServer(),
      // Sixteen processes reach the keychain at once: on a loaded machine its answers take longer than the
      // default 3 s limit, which is for a person at a terminal, not for what this test checks. Well under
      // the test's limit, so a keychain call that never ends fails the process saying which call it was;
      // GDS_DEBUG puts what each process waited on into its stderr.
      newWorkspace({ GDS_SECRET_STORAGE: undefined, GDS_KEYCHAIN_TIMEOUT_MS: '60000', GDS_DEBUG: '1' }),
      ensureBuilt(),
    ]);
  });

  afterAll(async () => {
    const outputs = w.outputs.join('\n');
    for (const secret of secretsSeen) expect(outputs).not.toContain(secret);
    await w.remove();
    await server.close();
  });

  /** The keychain account of the sign-in's save (`default#<savedId>@<config folder>`), once it is known. */
  let account = '';
  const keychainSecrets = async () => {
    const found = await secretTool('lookup', 'service', 'gds-cli', 'username', account);
    if (found.code !== 0) return null;
    const secrets = JSON.parse(found.stdout) as { accessToken: string; refreshToken: string };
    secretsSeen.push(secrets.accessToken, secrets.refreshToken);
    return secrets;
  };

  /** A process still running after this is hung: killed, so its stderr says what it waited on. */
  const HUNG_MS = 150_000;
  /** stderr without GDS_DEBUG's lines: what a user would see. */
  const said = (stderr: string) =>
    stderr.split('\n').filter((line) => line !== '' && !line.startsWith('gds: '));

  const runWatched = async (args: string[]) => {
    const [command, argv] = cliCommand(args);
    const child = spawn(command, argv, {
      cwd: repoRoot,
      env: cliEnv(w.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const hung = setTimeout(() => child.kill('SIGKILL'), HUNG_MS);
    const result = await collect(child).finally(() => clearTimeout(hung));
    w.outputs.push(result.stdout, result.stderr);
    return result;
  };

  it(
    'keeps the tokens in the keychain, refreshes them there once for 16 processes, and logout removes them',
    { timeout: 2 * HUNG_MS },
    async () => {
      const login = w.start(['auth', 'login', '--base', server.url, '--no-browser', '--json']);
      const hung = setTimeout(() => login.kill('SIGKILL'), HUNG_MS);
      await server.decide(await login.code, 'owner@example.com', 'approve');
      const result = await login.result.finally(() => clearTimeout(hung));
      expect(result.code, result.stderr).toBe(0);
      expect(ndjson(result.stdout)[0]).toMatchObject({ storage: 'keychain' });
      const saved = (await w.config()).profiles.default;
      account = `default#${saved.savedId}@${w.configDir}`;
      const first = await keychainSecrets();
      expect(first?.refreshToken).toMatch(/^gdsr_/);
      const file = JSON.stringify(await w.config());
      expect(file).not.toContain(first?.accessToken);
      expect(file).not.toContain(first?.refreshToken);
      expect((await w.config()).profiles.default.secretRef).toEqual({
        store: 'keychain',
        service: 'gds-cli',
        account,
      });

      await updateConfig(
        (config) => {
          const profile = config.profiles.default;
          if (profile?.kind === 'session') profile.expiresAt = new Date(Date.now() - 60_000).toISOString();
        },
        { env: w.env },
      );
      const refreshes = await server.auditCount('SESSION_REFRESHED');
      const runs = await Promise.all(Array.from({ length: 16 }, () => runWatched(['whoami', '--json'])));
      for (const run of runs) expect([run.code, said(run.stderr)], run.stderr).toEqual([0, []]);
      expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshes + 1);
      const second = await keychainSecrets();
      expect(second?.refreshToken).not.toBe(first?.refreshToken);
      expect(JSON.stringify(await w.config())).not.toContain(second?.accessToken);

      const logout = await w.run(['auth', 'logout', '--profile', 'default']);
      expect(logout.code).toBe(0);
      expect(await keychainSecrets()).toBeNull();
    },
  );
});
