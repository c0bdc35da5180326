// `gds auth login` and a session's refresh honour HTTPS_PROXY / NO_PROXY like the
// transport does (openid-client has its own fetch; gds gives it one with undici's proxy agent). The
// authorization server here is https at a name that resolves only through the loopback CONNECT proxy
// (service.gds.test → 127.0.0.1, as in proxy.test.ts): reaching it at all means going through the proxy.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectProxy, serviceHost } from './connect-proxy.js';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

const fixtures = fileURLToPath(new URL('./fixtures/tls/', import.meta.url));
const certificate = join(fixtures, 'proxied-cert.pem');

const heard: string[] = [];
const body = (request: IncomingMessage) =>
  new Promise<URLSearchParams>((resolve) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    request.on('end', () => resolve(new URLSearchParams(text)));
  });
let base = '';
let generation = 0;
const authorizationServer = createServer(
  { key: readFileSync(join(fixtures, 'proxied-key.pem')), cert: readFileSync(certificate) },
  (request, response) => {
    void (async () => {
      const form = request.method === 'POST' ? await body(request) : new URLSearchParams();
      const path = new URL(request.url ?? '/', base).pathname;
      heard.push(`${request.method} ${path}${form.get('grant_type') ? ` ${form.get('grant_type')}` : ''}`);
      response.setHeader('content-type', 'application/json');
      const send = (value: unknown) => response.end(JSON.stringify(value));
      if (path === '/.well-known/openid-configuration')
        return send({
          issuer: base,
          device_authorization_endpoint: `${base}/oauth/device/code`,
          token_endpoint: `${base}/oauth/token`,
          grant_types_supported: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
          token_endpoint_auth_methods_supported: ['none'],
        });
      if (path === '/oauth/device/code')
        return send({
          device_code: 'device-1',
          user_code: 'WDJB-MJHT',
          verification_uri: `${base}/device`,
          expires_in: 60,
          interval: 1,
        });
      if (path === '/oauth/token') {
        generation += 1;
        // Short-lived, so that the next command refreshes first.
        return send({
          access_token: `proxied-access-${generation}`,
          token_type: 'Bearer',
          expires_in: 30,
          refresh_token: `proxied-refresh-${generation}`,
        });
      }
      if (path === '/api/me')
        return send({
          user: { id: 'usr_1', email: 'proxied@example.com', displayName: 'Proxied' },
          workspace: { id: 'ws_1', name: 'Behind a proxy' },
          role: 'MEMBER',
          token: { kind: 'session', audience: 'session', scopes: [], environment: null },
          effectiveEnvironmentScope: ['dev'],
        });
      response.statusCode = 404;
      send({ error: { code: 'not_found', message: path } });
    })();
  },
);
const { proxy, connects } = connectProxy();
let proxyUrl = '';
let w: Workspace;

beforeAll(async () => {
  await Promise.all([
    new Promise<void>((resolve) => authorizationServer.listen(0, '127.0.0.1', resolve)),
    new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve)),
    ensureBuilt(),
  ]);
  base = `https://${serviceHost}:${(authorizationServer.address() as AddressInfo).port}`;
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  w = await newWorkspace({ NODE_EXTRA_CA_CERTS: certificate });
});

afterAll(async () => {
  authorizationServer.close();
  proxy.close();
  await w?.remove();
});

describe('sign-in and refresh behind a proxy', () => {
  it('auth login goes through HTTPS_PROXY (discovery, device code, token), and so does the refresh', async () => {
    const login = await w.run(['auth', 'login', '--base', base, '--no-browser', '--json'], {
      HTTPS_PROXY: proxyUrl,
    });
    expect(login.code, login.stderr).toBe(0);
    expect(ndjson(login.stdout)).toEqual([expect.objectContaining({ profile: 'default', kind: 'session' })]);
    expect(heard).toEqual([
      'GET /.well-known/openid-configuration',
      'POST /oauth/device/code',
      'POST /oauth/token urn:ietf:params:oauth:grant-type:device_code',
      // Who signed in is asked with the new access token itself, not renewed first.
      'GET /api/me',
    ]);
    expect(connects.length).toBeGreaterThan(0);
    expect(new Set(connects)).toEqual(new Set([`CONNECT ${new URL(base).host}`]));

    // The access token expires within the refresh margin: the next command refreshes through the proxy.
    heard.length = 0;
    connects.length = 0;
    const call = await w.run(['api', '/api/me'], { HTTPS_PROXY: proxyUrl });
    expect(call.code, call.stderr).toBe(0);
    expect(heard).toEqual(['POST /oauth/token refresh_token', 'GET /api/me']);
    expect(connects.length).toBeGreaterThan(0);
    expect((await w.config()).profiles.default.refreshToken).toBe('proxied-refresh-2');
  });

  it('NO_PROXY naming the host: the sign-in goes around the proxy (which alone resolves the name)', async () => {
    connects.length = 0;
    const login = await w.run(
      ['auth', 'login', '--base', base, '--no-browser', '--force', '--profile', 'np'],
      {
        HTTPS_PROXY: proxyUrl,
        NO_PROXY: serviceHost,
      },
    );
    expect(login.code).not.toBe(0);
    expect(login.stderr).toContain('Could not read the sign-in settings');
    expect(connects).toEqual([]);
  });
});
