// `gds auth logout` (every profile) while another gds process is in the middle of refreshing a profile's
// tokens: the logout must stick. The refresher holds the profile's lock from reading the profile to saving
// the rotated pair; a logout that does not wait for that lock removes the config file, then the refresher
// writes the profile back, and the user who saw "Removed profile ci" is still signed in.
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { KillHarness } from './refresh-kill-harness.js';
import {
  auditList,
  expiredProfile,
  savedProfileTemplate,
  startGds,
  startKillHarness,
} from './refresh-kill-harness.js';

let harness: KillHarness;
let template: Record<string, unknown>;

beforeAll(async () => {
  harness = await startKillHarness();
  template = await savedProfileTemplate(harness);
});

afterAll(async () => {
  await harness?.close();
});

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('gds auth logout while another gds refreshes the profile', () => {
  it('waits for the refresh and removes what it saved: the profile does not come back', async () => {
    const { configDir, refreshToken } = await expiredProfile(harness, template, 100);
    const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
    let reached!: () => void;
    const reachedProxy = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The service spends the refresh token at once; its answer reaches gds only once the logout has begun.
    harness.plans.set(refreshToken, { mode: 'hold', reached, release: () => released });
    const refresher = startGds(auditList, configDir);
    await Promise.race([
      reachedProxy,
      refresher.result.then((r) => {
        throw new Error(`gds ended (${r.code}) before its refresh reached the proxy:\n${r.stderr}`);
      }),
    ]);
    const logout = runInProcess(['auth', 'logout', '--json'], { env });
    // The answer goes out once the logout has ended (a logout that does not wait for the refresh), or once it
    // has had time to start waiting for the profile's lock (one that does: it ends only after the save).
    void logout.then(release);
    const fallback = setTimeout(release, 3_000);
    const [loggedOut, refreshed] = await Promise.all([logout, refresher.result]);
    clearTimeout(fallback);
    expect(loggedOut.code, loggedOut.stderr).toBe(0);
    expect(refreshed.code, refreshed.stderr).toBe(0);
    // Logged out: no config file, so no profile and no token is left on the disk.
    expect(await exists(join(configDir, 'config.json'))).toBe(false);
    const after = await runInProcess(auditList, { env });
    expect(after.code).not.toBe(0);
  }, 120_000);
});
