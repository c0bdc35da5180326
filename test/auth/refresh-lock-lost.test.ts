// A refresher whose keychain read outlasts the profile lock's stale time: another process takes the lock
// over and refreshes with the same single-use refresh token. The first must not present it again (the
// service would revoke the whole sign-in): it starts over and adopts what the other one saved. And the
// other way round: a refresher whose keychain write of the new tokens outlasts the stale time, after it
// presented the token, is waited for by the process that takes the lock over, which never presents the
// spent token again while that refresher lives.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { loadConfig, updateConfig } from '../../src/auth/config.js';
import { refreshUnderLock } from '../../src/auth/refresh.js';
import { holderOf } from '../../src/auth/refresh-holder.js';
import type * as SecretStore from '../../src/auth/secret-store.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { saveSessionProfile, startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';
import { gate } from '../helpers/gate.js';

const slowRead = vi.hoisted(() => ({ after: undefined as (() => Promise<void>) | undefined }));
const slowWrite = vi.hoisted(() => ({ before: undefined as (() => Promise<void>) | undefined }));
const debugLines = vi.hoisted(() => ({ seen: (_line: string): void => undefined }));

vi.mock('../../src/auth/debug-log.js', () => ({ debugLog: (line: string) => debugLines.seen(line) }));

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
    // The new tokens written only once `before` is done.
    placeSecrets: async (...args: Parameters<typeof SecretStore.placeSecrets>) => {
      const before = slowWrite.before;
      slowWrite.before = undefined;
      await before?.();
      return real.placeSecrets(...args);
    },
  };
});

/** Resolves at the first debug line saying a refresh waits for another process's. */
function waitingForHolder(): Promise<string> {
  return new Promise((resolve) => {
    debugLines.seen = (line) => {
      if (/waiting for it to save the new tokens/.test(line)) resolve(line);
    };
  });
}

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

interface Before {
  tokens: { accessToken: string; refreshToken: string };
  refreshed: number;
  revoked: number;
}

/** A signed-in profile `work` whose access token expires within the refresh margin; the audit counts before. */
async function expiringSession(): Promise<Before> {
  const issued = await server.signIn('owner@example.com');
  const tokens = { accessToken: issued.access_token, refreshToken: issued.refresh_token };
  await writeSessionProfile(env, 'work', server.url, tokens, new Date(Date.now() + 30_000).toISOString());
  return {
    tokens,
    refreshed: await server.auditCount('SESSION_REFRESHED'),
    revoked: await server.auditCount('SESSION_REFRESH_REUSE_REVOKED'),
  };
}

/** One refresh reached the service and none was revoked; the saved tokens are `result`'s, and work. */
async function refreshedOnce(before: Before, result: { accessToken: string }) {
  expect(result.accessToken).not.toBe(before.tokens.accessToken);
  expect(await server.auditCount('SESSION_REFRESHED')).toBe(before.refreshed + 1);
  expect(await server.auditCount('SESSION_REFRESH_REUSE_REVOKED')).toBe(before.revoked);
  const saved = (await loadConfig({ env })).profiles.work;
  expect(saved).toMatchObject({ accessToken: result.accessToken });
  expect(saved).not.toHaveProperty('refreshInFlight');
  const me = await fetch(`${server.url}/api/me`, {
    headers: { authorization: `Bearer ${result.accessToken}` },
  });
  expect(me.status).toBe(200);
}

it.each([
  {
    moment: 'while reading the secrets starts over instead of presenting the spent token',
    slow: (hook: () => Promise<void>) => (slowRead.after = hook),
  },
  {
    moment:
      'after presenting the token, while writing the new ones, is waited for instead of the token presented again',
    slow: (hook: () => Promise<void>) => (slowWrite.before = hook),
  },
])('a refresher that lost the profile lock $moment', async ({ slow }) => {
  const before = await expiringSession();
  const held = gate();
  slow(held.hook);
  const first = refreshUnderLock('work', before.tokens.accessToken, false, { env });
  await held.reached;
  // The read or write outlasted the stale time: another process removed the lock as abandoned and took it.
  // Before the first presented the token, it refreshes; after, it finds the old tokens and the record of the
  // refresh under way, and waits.
  await rm(join(dir, 'profile-work.lock'), { recursive: true, force: true });
  const waiting = waitingForHolder();
  const other = refreshUnderLock('work', before.tokens.accessToken, false, { env });
  await Promise.race([waiting, other.catch(() => undefined)]);
  held.go();

  const ours = await first;
  expect(await other).toEqual(ours);
  await refreshedOnce(before, ours);
});

it('a refresher whose tokens another process renewed and saved while it read them starts over, even believing it holds the lock', async () => {
  // Under load a starved holder's lock update can land on the lock folder another process took over, so both
  // believe they hold it (an older gds writes without it): what was saved since the read must still stop it.
  const before = await expiringSession();
  const held = gate();
  slowRead.after = held.hook;
  const first = refreshUnderLock('work', before.tokens.accessToken, false, { env });
  await held.reached;
  const renewed = await server.post('/oauth/token', {
    grant_type: 'refresh_token',
    refresh_token: before.tokens.refreshToken,
    client_id: 'gds-cli',
  });
  expect(renewed.status).toBe(200);
  const theirs = { accessToken: renewed.body.access_token, refreshToken: renewed.body.refresh_token };
  await saveSessionProfile(env, 'work', server.url, theirs, new Date(Date.now() + 3_600_000).toISOString());
  held.go();

  const ours = await first;
  expect(ours.accessToken).toBe(theirs.accessToken);
  await refreshedOnce(before, ours);
});

it('a refresh recorded by another live process is waited for, and taken over once that process has ended', async () => {
  const before = await expiringSession();
  const { tokens } = before;
  const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const ended = new Promise((resolve) => holder.once('exit', resolve));
  try {
    const named = await holderOf(holder.pid);
    // That process recorded the refresh and has not presented the token yet (or not had the answer).
    await updateConfig(
      (config) => {
        Object.assign(config.profiles.work ?? {}, {
          refreshInFlight: {
            since: new Date().toISOString(),
            refreshTokenSha256: createHash('sha256').update(tokens.refreshToken).digest('hex').slice(0, 16),
            holder: named,
          },
        });
      },
      { env },
    );
    const waiting = waitingForHolder();
    const renewed = refreshUnderLock('work', tokens.accessToken, false, { env });
    const first = await Promise.race([waiting, renewed.then(() => 'refreshed at once')]);
    expect(first).toMatch(new RegExp(`process ${holder.pid} presented its refresh token`));
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before.refreshed);
    holder.kill('SIGKILL');
    await ended;
    await refreshedOnce(before, await renewed);
  } finally {
    holder.kill('SIGKILL');
  }
});
