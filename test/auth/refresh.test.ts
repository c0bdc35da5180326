// renewingAuthProvider in this process against the reference server: a fresh token is used as it is,
// one about to expire is refreshed and written back, a refresh another process already made is
// adopted instead of repeated, and a sign-in that cannot be renewed says how to sign in again.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import type { ResolvedCredentials } from '../../src/auth/credentials.js';
import { authProviderFor, refreshUnderLock, renewingAuthProvider } from '../../src/auth/refresh.js';
import { CliError } from '../../src/cli/errors.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer, writeSessionProfile } from '../server/oauth/oauth-server.js';

let server: OAuthTestServer;
let env: NodeJS.ProcessEnv;
let dir: string;

beforeAll(async () => {
  server = await startOAuthServer();
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
      tokenEndpoint: `${server.url}/oauth/token`,
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

  it('says to sign in again (exit 3) when there is no refresh token, and keeps the profile', async () => {
    await signIn(inMinutes(-1), { accessToken: 'eyJ.expired.token' });
    const failure = await renewingAuthProvider('work', { env })
      .getToken()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliError);
    expect((failure as CliError).exitCode).toBe(3);
    expect((failure as CliError).suggestion).toBe('Sign in again: gds auth login --profile work');
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
