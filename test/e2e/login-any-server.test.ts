// `gds auth login` works with any standard-conforming authorization server, not only the reference
// one: a minimal one here, with its own path layout (issuer under /tenant, endpoints under /as), its
// own client id (GDS_CLIENT_ID) and opaque tokens. It answers `slow_down` to the first poll and
// checks the client then waits the interval plus 5 s (RFC 8628 §3.5) before polling again. A refresh
// afterwards goes to the token endpoint saved at login, without a second discovery.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import { renewingAuthProvider } from '../../src/auth/refresh.js';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

const CLIENT_ID = 'other-cli';
const INTERVAL_S = 1;

interface Seen {
  discoveries: number;
  polls: number[];
  clientIds: string[];
  /** Polls sooner than the interval the server asked for. */
  tooSoon: number;
  refreshes: string[];
}

async function minimalAuthorizationServer() {
  const seen: Seen = { discoveries: 0, polls: [], clientIds: [], tooSoon: 0, refreshes: [] };
  const app = Fastify();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_r, body, done) =>
    done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );
  let base = '';
  let required = INTERVAL_S;
  let refreshGeneration = 0;
  app.get('/tenant/.well-known/openid-configuration', async () => {
    seen.discoveries += 1;
    return {
      issuer: `${base}/tenant`,
      device_authorization_endpoint: `${base}/as/device_authorization`,
      token_endpoint: `${base}/as/token`,
      grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
    };
  });
  app.post<{ Body: Record<string, string> }>('/as/device_authorization', async (request, reply) => {
    if (request.body.client_id !== CLIENT_ID) return reply.code(400).send({ error: 'invalid_client' });
    return {
      device_code: 'device-1',
      user_code: 'WDJB-MJHT',
      verification_uri: `${base}/activate`,
      expires_in: 60,
      interval: INTERVAL_S,
    };
  });
  app.post<{ Body: Record<string, string> }>('/as/token', async (request, reply) => {
    const form = request.body;
    seen.clientIds.push(form.client_id ?? '');
    if (form.grant_type === 'refresh_token') {
      seen.refreshes.push(form.refresh_token ?? '');
      refreshGeneration += 1;
      return {
        access_token: `opaque-access-${refreshGeneration + 1}`,
        token_type: 'Bearer',
        expires_in: 300,
        refresh_token: `opaque-refresh-${refreshGeneration + 1}`,
      };
    }
    const now = Date.now();
    const last = seen.polls.at(-1);
    seen.polls.push(now);
    if (last === undefined) {
      required += 5;
      return reply.code(400).send({ error: 'slow_down' });
    }
    if (now - last < required * 1000 - 100) {
      seen.tooSoon += 1;
      required += 5;
      return reply.code(400).send({ error: 'slow_down' });
    }
    return {
      access_token: 'opaque-access-1',
      token_type: 'Bearer',
      expires_in: 300,
      refresh_token: 'opaque-refresh-1',
    };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { base, seen, close: () => app.close() };
}

let other: Awaited<ReturnType<typeof minimalAuthorizationServer>>;
let w: Workspace;

beforeAll(async () => {
  [other, w] = await Promise.all([minimalAuthorizationServer(), newWorkspace(), ensureBuilt()]);
});

afterAll(async () => {
  const outputs = w.outputs.join('\n');
  expect(outputs).not.toContain('opaque-access');
  expect(outputs).not.toContain('opaque-refresh');
  await w.remove();
  await other.close();
});

describe('another authorization server', () => {
  it('signs in through its discovery document, slows down when told, and refreshes at its token endpoint', async () => {
    const result = await w.run(
      ['auth', 'login', '--base', `${other.base}/tenant`, '--no-browser', '--json'],
      {
        GDS_CLIENT_ID: CLIENT_ID,
      },
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`open ${other.base}/activate and enter the code WDJB-MJHT`);
    expect(ndjson(result.stdout)).toEqual([
      expect.objectContaining({ profile: 'default', issuer: `${other.base}/tenant`, kind: 'session' }),
    ]);
    expect(other.seen.polls).toHaveLength(2);
    expect(other.seen.tooSoon).toBe(0);
    const profile = (await w.config()).profiles.default;
    expect(profile).toMatchObject({
      tokenEndpoint: `${other.base}/as/token`,
      clientId: CLIENT_ID,
      accessToken: 'opaque-access-1',
      refreshToken: 'opaque-refresh-1',
    });

    // The access token is about to expire: the next request refreshes it first.
    await withProfileLock(
      'default',
      async () => {
        const { accessToken, refreshToken, ...fields } = profile;
        const expiresAt = new Date(Date.now() + 10_000).toISOString();
        await saveProfile('default', { ...fields, expiresAt }, { accessToken, refreshToken }, { env: w.env });
      },
      { env: w.env },
    );
    const auth = renewingAuthProvider('default', { env: w.env });
    expect(await auth.getToken()).toBe('opaque-access-2');
    expect(other.seen.refreshes).toEqual(['opaque-refresh-1']);
    expect(other.seen.discoveries).toBe(1);
    expect(new Set(other.seen.clientIds)).toEqual(new Set([CLIENT_ID]));
    expect((await w.config()).profiles.default.refreshToken).toBe('opaque-refresh-2');
  });
});
