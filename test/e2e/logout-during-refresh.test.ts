// `gds auth logout` (every profile) while another gds process is in the middle of refreshing a profile's
// tokens, its request out and the service's answer not yet back (an identity provider or a service that does
// not answer). The logout must end without waiting for that answer (it waited up to ~20 s for the profile's
// lock, which the refresher holds from reading the profile to saving the rotated pair, then failed
// config_locked), and it must stick: the refresher, answered after the logout, must not write the profile back,
// or the user who saw "Removed profile ci" would still be signed in.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import { useKillHarness } from '../helpers/kill-harness.js';
import { auditList, expiredProfile, holdRefresh, startGds } from './refresh-kill-harness.js';

const used = useKillHarness();

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('gds auth logout while another gds refreshes the profile', () => {
  it.each([
    { name: 'auth logout', logout: ['auth', 'logout', '--json'], n: 100 },
    { name: 'auth logout --profile ci', logout: ['auth', 'logout', '--profile', 'ci', '--json'], n: 101 },
  ])(
    '$name: ends while the refresh waits for its answer, and the refresh saves nothing after it',
    async ({ logout, n }) => {
      const { configDir, refreshToken } = await expiredProfile(used.harness, used.template, n);
      const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
      // The service spends the refresh token at once; its answer reaches gds only once the logout has ended.
      const held = holdRefresh(used.harness, refreshToken);
      const refresher = startGds(auditList, configDir);
      await held.reachedBy(refresher);
      const loggedOut = await runInProcess(logout, { env });
      held.release();
      const refreshed = await refresher.result;
      expect(loggedOut.code, loggedOut.stderr).toBe(0);
      expect(JSON.parse(loggedOut.stdout)).toMatchObject({
        removed: [{ name: 'ci' }],
        configFileRemoved: true,
      });
      // The command the refresh was for still ran (it had asked before the logout).
      expect(refreshed.code, refreshed.stderr).toBe(0);
      // Logged out: no config file, so no profile and no token is left on the disk.
      expect(await exists(join(configDir, 'config.json'))).toBe(false);
      const after = await runInProcess(auditList, { env });
      expect(after.code).not.toBe(0);
    },
    120_000,
  );
});
