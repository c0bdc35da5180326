// `gds auth logout` (every profile) at the same time as `gds tokens issue --profile a --save-profile b`: the
// issue renews a's sign-in under a's lock when a's access token has expired or is refused (refresh.ts). It once
// held b's lock while it issued, and a logout that took every profile's lock in name order held a's while it
// waited for b's: each command waited for the other's lock until one of them gave up with config_locked (~20 s).
// Now the issue takes b's lock only to save the answer: the logout ends at once, and the issue, finding b
// logged out when its answer came, saves nothing (profile_changed). The locks are folders on the disk, so the
// two calls of this one process contend for them as two gds processes do.
import { access, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveIntegrationTokens } from '../../src/auth/integration-profile.js';
import { removeAllProfiles, setStaticProfile } from '../../src/auth/profiles.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Settles once `path` exists (polled: a lock folder may stand only for a moment), or once `ended` settles. */
async function untilExists(path: string, ended: Promise<unknown>): Promise<void> {
  let over = false;
  void ended.finally(() => (over = true)).catch(() => undefined);
  while (!over && !(await exists(path))) await sleep(2);
}

describe('auth logout while tokens issue --save-profile holds another profile', () => {
  it('both end at once: neither holds one profile lock while it waits for the other', async () => {
    const dir = join(await mkdtemp(join(tmpdir(), 'gds-logout-order-')), 'gds');
    const env = { GDS_CONFIG_DIR: dir, GDS_SECRET_STORAGE: 'file' };
    for (const name of ['a', 'b'])
      await setStaticProfile({ name, token: `cli_${name}Token42`, base: `https://${name}.example` }, { env });
    let issuing!: () => void;
    const holdsB = new Promise<void>((resolve) => (issuing = resolve));
    let loggedOut: Promise<unknown> = new Promise(() => undefined);
    const issue = saveIntegrationTokens(
      'b',
      async () => {
        issuing();
        // The logout has begun and holds a's lock (it takes a before b)...
        await untilExists(join(dir, 'profile-a.lock'), loggedOut);
        // ...when the issue renews a's sign-in, under a's lock.
        await withProfileLock('a', async () => undefined, { env });
        const tokens = {
          accessToken: 'b-access',
          refreshToken: 'b-refresh',
          expiresAt: '2099-01-01T00:00:00Z',
        };
        return { base: 'https://b.example', tokens: { ...tokens, refreshExpiresAt: '2099-01-01T00:00:00Z' } };
      },
      { force: true, env },
    );
    await holdsB;
    loggedOut = removeAllProfiles({ env });
    const [issued, logout] = await Promise.allSettled([issue, loggedOut]);
    expect(issued).toMatchObject({ status: 'rejected', reason: { code: 'profile_changed' } });
    expect(logout.status, String((logout as PromiseRejectedResult).reason)).toBe('fulfilled');
    // The logout removed a and b, and the file; the issue did not bring b back.
    expect((logout as PromiseFulfilledResult<{ configFileRemoved: boolean }>).value.configFileRemoved).toBe(
      true,
    );
    await expect(readFile(join(dir, 'config.json'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  }, 120_000);
});
