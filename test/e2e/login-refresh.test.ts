// Refresh under parallel use: 16 `gds whoami` processes started at once on one session profile whose
// access token has expired (by the profile's clock, or by the server's) all succeed, and the server
// records exactly ONE refresh per round; when the refresh token is refused, gds says to sign in again
// and leaves the profile as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

const PARALLEL = 16;
let server: OAuthTestServer;
let w: Workspace;
const tokensSeen: string[] = [];

beforeAll(async () => {
  [server, w] = await Promise.all([
    startOAuthServer({}, { refreshGraceMs: 30_000 }),
    newWorkspace(),
    ensureBuilt(),
  ]);
});

afterAll(async () => {
  const outputs = w.outputs.join('\n');
  for (const token of tokensSeen) expect(outputs).not.toContain(token);
  await w.remove();
  await server.close();
});

/** A device sign-in over HTTP, then the profile written as `gds auth login` writes it. */
async function signIn(email: string) {
  const tokens = await server.signIn(email);
  await writeProfile(
    tokens.access_token,
    tokens.refresh_token,
    new Date(Date.now() + 3600_000).toISOString(),
  );
  return tokens;
}

async function writeProfile(accessToken: string, refreshToken: string, expiresAt: string) {
  tokensSeen.push(accessToken, refreshToken);
  await writeSessionProfile(w.env, 'default', server.url, { accessToken, refreshToken }, expiresAt);
}

async function storedProfile() {
  const profile = (await w.config()).profiles.default;
  tokensSeen.push(profile.accessToken, profile.refreshToken);
  return profile as { accessToken: string; refreshToken: string; expiresAt: string };
}

async function parallelWhoami() {
  const results = await Promise.all(
    Array.from({ length: PARALLEL }, () => w.runProcess(['whoami', '--json'])),
  );
  for (const result of results) {
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ndjson(result.stdout)).toEqual([expect.objectContaining({ role: 'OWNER', profile: 'default' })]);
  }
}

describe('parallel refresh', () => {
  it('16 processes on an expired profile: all succeed, one refresh per round (2 rounds)', async () => {
    await signIn('owner@example.com');
    const refreshes = await server.auditCount('SESSION_REFRESHED');

    // The profile says its access token expired a minute ago: each process refreshes before its request.
    const before = await storedProfile();
    await writeProfile(before.accessToken, before.refreshToken, new Date(Date.now() - 60_000).toISOString());
    await parallelWhoami();
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshes + 1);
    const after = await storedProfile();
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);

    // The server's clock runs 61 minutes ahead: the profile looks fresh, the server answers 401, and
    // each process refreshes once on that 401 and retries, with the refresh token the first round saved.
    server.clock.advance(61 * 60_000);
    await parallelWhoami();
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshes + 2);
    expect((await storedProfile()).refreshToken).not.toBe(after.refreshToken);
  }, 300_000);

  it('a refused refresh token ends with exit 3 and the sign-in hint, and the profile is kept', async () => {
    const first = await signIn('owner@example.com');
    // Spend the refresh token elsewhere, then present it again: reuse revokes the whole sign-in.
    const rotated = await server.post('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: 'gds-cli',
    });
    tokensSeen.push(rotated.body.access_token, rotated.body.refresh_token);
    // Past the reuse grace window, within which the spent token would get the same answer again.
    server.clock.advance(31_000);
    await writeProfile(first.access_token, first.refresh_token, new Date(Date.now() - 60_000).toISOString());
    const result = await w.run(['whoami']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('gds auth login --profile default');
    expect(result.stdout).toBe('');
    const kept = await storedProfile();
    expect([kept.accessToken, kept.refreshToken]).toEqual([first.access_token, first.refresh_token]);
  });

  it('tokens issue --save-profile into the expired session that mints it: refreshes, then replaces it', async () => {
    await signIn('owner@example.com');
    const before = await storedProfile();
    await writeProfile(before.accessToken, before.refreshToken, new Date(Date.now() - 60_000).toISOString());
    const refreshes = await server.auditCount('SESSION_REFRESHED');
    // The session's refresh takes the profile's lock, which saving the minted token into that same
    // profile already holds: one process, so it must not wait for itself.
    const args = ['tokens', 'issue', '--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'];
    // Without --force the sign-in is kept: it renews itself, expired access token or not.
    const refused = await w.run([...args, '--save-profile', 'default', '--json']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already holds a browser sign-in that renews itself');
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshes);
    expect((await loadConfig({ env: w.env })).profiles.default).toMatchObject({ kind: 'session' });
    const result = await w.run([...args, '--save-profile', 'default', '--force', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ndjson(result.stdout)).toEqual([expect.objectContaining({ profile: 'default' })]);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(refreshes + 1);
    const config = await loadConfig({ env: w.env });
    expect(config.profiles.default).toMatchObject({ kind: 'integration', base: server.url, env: 'dev' });
    tokensSeen.push(config.profiles.default?.accessToken ?? '', config.profiles.default?.refreshToken ?? '');
  });

  it('processes killed in the middle of a refresh leave a config that still loads', async () => {
    await signIn('owner@example.com');
    const before = await storedProfile();
    await writeProfile(before.accessToken, before.refreshToken, new Date(Date.now() - 60_000).toISOString());
    const runs = Array.from({ length: 6 }, (_, i) => {
      const run = w.start(['whoami', '--json']);
      setTimeout(() => run.kill('SIGKILL'), 150 * (i + 1));
      return run.result;
    });
    await Promise.all(runs);
    const config = await loadConfig({ env: w.env });
    expect(config.profiles.default).toMatchObject({ kind: 'session', base: server.url });
    expect(typeof config.profiles.default?.accessToken).toBe('string');
    const after = await w.run(['auth', 'status', '--json']);
    expect(after.code).toBe(0);
    expect(ndjson(after.stdout)[0]).toMatchObject({ profile: 'default', storage: 'file' });
  });
});
