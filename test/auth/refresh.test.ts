// renewingAuthProvider in this process against the reference server: a fresh token is used as it is,
// one about to expire is refreshed and written back, a refresh another process already made is
// adopted instead of repeated, and a sign-in that cannot be renewed says how to sign in again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { loadConfig, updateConfig } from '../../src/auth/config.js';
import type { ResolvedCredentials } from '../../src/auth/credentials.js';
import { authProviderFor, refreshUnderLock, renewingAuthProvider } from '../../src/auth/refresh.js';
import { CliError } from '../../src/core/errors.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';

let server: OAuthTestServer;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  server = await startOAuthServer({}, { refreshGraceMs: 30_000 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-refresh-'));
  env = { GDS_CONFIG_DIR: dir, GDS_SECRET_STORAGE: 'file' };
  return () => rm(dir, { recursive: true, force: true });
});

const inMinutes = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();

async function signIn(expiresAt: string, secrets?: { accessToken: string; refreshToken?: string }) {
  let tokens = secrets;
  if (tokens === undefined) {
    const issued = await server.signIn('owner@example.com');
    tokens = { accessToken: issued.access_token, refreshToken: issued.refresh_token };
  }
  await writeSessionProfile(env, 'work', server.url, tokens, expiresAt);
  return tokens;
}

const stored = async () => (await loadConfig({ env })).profiles.work;

describe('renewingAuthProvider', () => {
  it('uses a token valid for more than a minute as it is', async () => {
    const tokens = await signIn(inMinutes(30));
    const before = await server.auditCount('SESSION_REFRESHED');
    expect(await renewingAuthProvider('work', { env }).getToken()).toBe(tokens.accessToken);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before);
  });

  it('refreshes a token that expires within a minute, and writes the new tokens first', async () => {
    const tokens = await signIn(inMinutes(0.5));
    const before = await server.auditCount('SESSION_REFRESHED');
    const fresh = await renewingAuthProvider('work', { env }).getToken();
    expect(fresh).not.toBe(tokens.accessToken);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before + 1);
    const profile = await stored();
    expect(profile).toMatchObject({
      kind: 'session',
      accessToken: fresh,
      tokenEndpoint: `${server.origin}/oauth/token`,
    });
    expect(profile?.refreshToken).not.toBe(tokens.refreshToken);
    expect(Date.parse((profile as { expiresAt: string }).expiresAt)).toBeGreaterThan(
      Date.now() + 50 * 60_000,
    );
  });

  it('adopts the tokens another process wrote instead of refreshing again', async () => {
    const tokens = await signIn(inMinutes(30));
    const before = await server.auditCount('SESSION_REFRESHED');
    const auth = renewingAuthProvider('work', { env, initial: { accessToken: 'an-older-token' } });
    expect(await auth.onUnauthorized?.()).toBe(tokens.accessToken);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before);
  });

  it('refreshes on a 401 even when the token looks fresh, when it is still the refused one', async () => {
    const tokens = await signIn(inMinutes(30));
    const before = await server.auditCount('SESSION_REFRESHED');
    const state = await refreshUnderLock('work', tokens.accessToken, true, { env });
    expect(state.accessToken).not.toBe(tokens.accessToken);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before + 1);
  });

  /** Marks the stored profile as a gds killed after sending a refresh of `refreshToken` leaves it. */
  async function recordInFlight(refreshToken: string) {
    await updateConfig(
      (config) => {
        const profile = config.profiles.work;
        if (profile?.kind !== 'session') throw new Error('no session profile');
        profile.refreshInFlight = {
          since: new Date().toISOString(),
          refreshTokenSha256: createHash('sha256').update(refreshToken).digest('hex').slice(0, 16),
        };
      },
      { env },
    );
  }

  it('completes a refresh a killed gds left in flight, with the tokens the service gave it, even when the token looks fresh', async () => {
    const tokens = await signIn(inMinutes(30));
    // The killed process's refresh reached the service: the refresh token is spent, its answer lost.
    const lost = await server.post('/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken as string,
      client_id: 'gds-cli',
    });
    expect(lost.status).toBe(200);
    await recordInFlight(tokens.refreshToken as string);
    const before = await server.auditCount('SESSION_REFRESHED');
    expect(await renewingAuthProvider('work', { env }).getToken()).toBe(lost.body.access_token);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before);
    const profile = await stored();
    expect(profile).toMatchObject({
      accessToken: lost.body.access_token,
      refreshToken: lost.body.refresh_token,
    });
    expect(profile).not.toHaveProperty('refreshInFlight');
    // The completed pair is live: it refreshes as any other.
    expect((await refreshUnderLock('work', lost.body.access_token, true, { env })).accessToken).toEqual(
      expect.any(String),
    );
  });

  it('drops a record of a refresh whose tokens were saved after all, without refreshing', async () => {
    const tokens = await signIn(inMinutes(30));
    await recordInFlight('a-refresh-token-no-longer-stored');
    const before = await server.auditCount('SESSION_REFRESHED');
    expect(await renewingAuthProvider('work', { env }).getToken()).toBe(tokens.accessToken);
    expect(await server.auditCount('SESSION_REFRESHED')).toBe(before);
    expect(await stored()).not.toHaveProperty('refreshInFlight');
  });

  it('records the refresh in the profile before it is sent: one that never got an answer stays recorded', async () => {
    const tokens = await signIn(inMinutes(0.5));
    await updateConfig(
      (config) => {
        Object.assign(config.profiles.work ?? {}, { tokenEndpoint: 'http://127.0.0.1:1/oauth/token' });
      },
      { env },
    );
    const failure = await renewingAuthProvider('work', { env })
      .getToken()
      .catch((e: unknown) => e);
    expect((failure as CliError).exitCode).toBe(9);
    const profile = await stored();
    expect(profile).toMatchObject({
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      refreshInFlight: {
        since: expect.any(String),
        refreshTokenSha256: createHash('sha256')
          .update(tokens.refreshToken as string)
          .digest('hex')
          .slice(0, 16),
      },
    });
  });

  it('says to sign in again (exit 3) when there is no refresh token, and keeps the profile', async () => {
    await signIn(inMinutes(-1), { accessToken: 'eyJ.expired.token' });
    const failure = await renewingAuthProvider('work', { env })
      .getToken()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(3);
    expect((failure as CliError).suggestion).toBe('Sign in again: gds auth login --profile work --force');
    expect((await stored())?.accessToken).toBe('eyJ.expired.token');
  });
});

describe('authProviderFor', () => {
  it('gives static credentials a fixed token and session profiles a renewing one', async () => {
    const base: ResolvedCredentials = {
      token: 'cli_static',
      baseUrl: server.url,
      tokenSource: 'env',
      baseSource: 'env',
      tokenKind: 'static',
      storage: 'none',
    };
    const fixed = authProviderFor(base, { env });
    expect(await fixed.getToken()).toBe('cli_static');
    expect(fixed.onUnauthorized).toBeUndefined();

    const tokens = await signIn(inMinutes(30));
    const session = authProviderFor(
      {
        ...base,
        token: tokens.accessToken,
        tokenSource: 'profile:work',
        tokenKind: 'session',
        profileName: 'work',
      },
      { env },
    );
    expect(await session.getToken()).toBe(tokens.accessToken);
    expect(session.onUnauthorized).toBeTypeOf('function');
  });
});
