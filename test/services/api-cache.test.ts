import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResolvedCredentials } from '../../src/auth/credentials.js';
import type { ApiCallResult } from '../../src/services/api-call.js';
import { cachedCall } from '../../src/services/api-cache.js';

const base = 'https://gds.example.test';
const request = { path: '/api/me', method: undefined, fields: [], body: undefined, headers: [] };

function session(accessToken: string): ResolvedCredentials {
  return {
    token: accessToken,
    baseUrl: base,
    tokenSource: 'profile:work',
    baseSource: 'profile:work',
    profileName: 'work',
    tokenKind: 'session',
    storage: 'file',
    profile: { kind: 'session', base },
  };
}

describe('gds api --cache, who asks', () => {
  let cacheHome: string;
  beforeEach(async () => {
    cacheHome = await mkdtemp(join(tmpdir(), 'gds-api-cache-'));
  });
  afterEach(async () => {
    await rm(cacheHome, { recursive: true, force: true });
  });

  const ask = async (credentials: ResolvedCredentials, answer: string) => {
    const call = async (): Promise<ApiCallResult> => ({
      status: 200,
      headers: [],
      body: { me: answer },
      exitCode: 0,
    });
    const result = await cachedCall({ baseUrl: base, credentials, request }, 3_600_000, 'GET', call, {
      env: { XDG_CACHE_HOME: cacheHome },
    });
    return result.body;
  };

  it('someone signed in again under the same profile name is not shown the answer the first person was given', async () => {
    expect(await ask(session('session_access_token_alice_1'), 'alice')).toEqual({ me: 'alice' });
    expect(await ask(session('session_access_token_alice_1'), 'asked again')).toEqual({ me: 'alice' });
    expect(await ask(session('session_access_token_bob_1'), 'bob')).toEqual({ me: 'bob' });
  });
});
