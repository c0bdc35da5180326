// A refresher whose keychain read outlasts the profile lock's stale time: another process takes the lock
// over and refreshes with the same single-use refresh token. The first must not present it again (the
// service would revoke the whole sign-in): it starts over and adopts what the other one saved.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { refreshUnderLock } from '../../src/auth/refresh.js';
import type * as SecretStore from '../../src/auth/secret-store.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';

const slowRead = vi.hoisted(() => ({ after: undefined as (() => Promise<void>) | undefined }));

vi.mock('../../src/auth/secret-store.js', async (importOriginal) => {
  const real = await importOriginal<typeof SecretStore>();
  return {
    ...real,
    // The secrets as they were when the read began, answered only once `after` is done.
    readSecrets: async (...args: Parameters<typeof SecretStore.readSecrets>) => {
      const answer = await real.readSecrets(...args);
      const after = slowRead.after;
      slowRead.after = undefined;
      await after?.();
      return answer;
    },
  };
});

let server: OAuthTestServer;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  // No reuse grace: a refresh token presented twice revokes the sign-in, as the spec says.
  server = await startOAuthServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-refresh-lock-'));
  env = { GDS_CONFIG_DIR: dir, GDS_SECRET_STORAGE: 'file' };
  return () => rm(dir, { recursive: true, force: true });
});

it('a refresher that lost the profile lock while reading the secrets starts over instead of presenting the spent token', async () => {
  const issued = await server.signIn('owner@example.com');
  const tokens = { accessToken: issued.access_token, refreshToken: issued.refresh_token };
  await writeSessionProfile(env, 'work', server.url, tokens, new Date(Date.now() + 30_000).toISOString());
  const refreshed = await server.auditCount('SESSION_REFRESHED');
  const revoked = await server.auditCount('SESSION_REFRESH_REUSE_REVOKED');

  let reading!: () => void;
  const firstIsReading = new Promise<void>((resolve) => (reading = resolve));
  let otherDone!: () => void;
  slowRead.after = () => {
    reading();
    return new Promise<void>((resolve) => (otherDone = resolve));
  };
  const first = refreshUnderLock('work', tokens.accessToken, false, { env });
  await firstIsReading;
  // The read outlasted the stale time: another process removed the lock as abandoned, took it, refreshed.
  await rm(join(dir, 'profile-work.lock'), { recursive: true, force: true });
  const other = await refreshUnderLock('work', tokens.accessToken, false, { env });
  otherDone();

  expect(await first).toEqual(other);
  expect(other.accessToken).not.toBe(tokens.accessToken);
  expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshed + 1);
  expect(await server.auditCount('SESSION_REFRESH_REUSE_REVOKED')).toBe(revoked);
  const saved = (await loadConfig({ env })).profiles.work;
  expect(saved).toMatchObject({ accessToken: other.accessToken });
  expect(saved).not.toHaveProperty('refreshInFlight');
  const me = await fetch(`${server.url}/api/me`, {
    headers: { authorization: `Bearer ${other.accessToken}` },
  });
  expect(me.status).toBe(200);
});
