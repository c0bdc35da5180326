// DNS rebinding. A page at rebind.attacker.example:PORT, whose name the attacker points at
// 127.0.0.1, reaches the local server with its own name in Host and its own origin in Origin (and, being
// same-origin to itself, Sec-Fetch-Site: same-origin). The replays below are the probe's: sign in as
// owner@example.com, approve a device code, change the workspace configuration. Each is 421 and changes
// nothing; the server's own names still work; /device carries the dashboard's headers and refuses a
// cross-site post.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let port: number;
let attacker: string;

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with the exact Host given (fetch cannot set Host). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

const fromPage = (host: string) => ({
  host,
  origin: `http://${host}`,
  'sec-fetch-site': 'same-origin',
  'content-type': 'application/x-www-form-urlencoded',
});

async function newDeviceCode(): Promise<string> {
  const response = await fetch(`${server.origin}/oauth/device/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ client_id: 'gds-cli', scope: 'openid offline_access' }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user_code: string }).user_code;
}

const deviceStatus = async (userCode: string) =>
  (await server.sql('SELECT status FROM gds.device_codes WHERE user_code = $1', [userCode]))[0]?.status;

const signIns = async () =>
  (await server.sql(`SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'DASHBOARD_SIGN_IN'`))[0].n;

beforeAll(async () => {
  server = await startTestServer();
  port = Number(new URL(server.url).port);
  attacker = `rebind.attacker.example:${port}`;
});

afterAll(async () => {
  await server?.close();
});

describe('a request whose Host is not one of the server’s names', () => {
  it('cannot sign in to the dashboard (421, no cookie, nothing audited)', async () => {
    const before = await signIns();
    const response = await raw(
      'POST',
      '/dashboard/sign-in',
      fromPage(attacker),
      form({ email: 'owner@example.com', next: '/dashboard' }),
    );
    expect(response.status).toBe(421);
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(JSON.parse(response.body).error.code).toBe('misdirected_request');
    expect(await signIns()).toBe(before);
  });

  it('cannot approve a device code (421, the code stays pending)', async () => {
    const userCode = await newDeviceCode();
    const response = await raw(
      'POST',
      '/device',
      fromPage(attacker),
      form({ user_code: userCode, email: 'owner@example.com', action: 'approve' }),
    );
    expect(response.status).toBe(421);
    expect(await deviceStatus(userCode)).toBe('pending');
  });

  it('cannot change the workspace configuration, even with a credential (421, unchanged)', async () => {
    const response = await raw(
      'PUT',
      '/api/config/gate3_required',
      {
        host: attacker,
        origin: `http://${attacker}`,
        'content-type': 'application/json',
        authorization: `Bearer ${server.user('OWNER').cliToken}`,
      },
      JSON.stringify({ value: 'true' }),
    );
    expect(response.status).toBe(421);
    const config = await server.request('GET', '/api/config', { token: server.user('OWNER').cliToken });
    expect(JSON.stringify(config.body)).not.toContain('"gate3_required","value":"true"');
    const changed = await server.sql(
      `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'WORKSPACE_CONFIG_CHANGED'`,
    );
    expect(changed[0].n).toBe(0);
  });

  it('is refused on every path, unknown ones and GETs included, and on another port or a look-alike name', async () => {
    for (const path of ['/api/me', '/dashboard', '/.well-known/openid-configuration', '/nowhere']) {
      expect((await raw('GET', path, { host: attacker })).status).toBe(421);
    }
    expect((await raw('GET', '/api/me', { host: `127.0.0.1:${port + 1}` })).status).toBe(421);
    expect((await raw('GET', '/api/me', { host: `127.0.0.1.nip.io:${port}` })).status).toBe(421);
  });
});

describe('the server’s own names', () => {
  it('answer as before: 127.0.0.1, localhost and [::1] on its port', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`]) {
      const response = await raw('GET', '/v1/api/me', {
        host,
        authorization: `Bearer ${server.user('OWNER').cliToken}`,
      });
      expect(response.status, host).toBe(200);
    }
  });

  it('sign in from the server’s own page; an Origin of another site is refused even with the right Host', async () => {
    const ok = await raw(
      'POST',
      '/dashboard/sign-in',
      fromPage(`localhost:${port}`),
      form({ email: 'owner@example.com', next: '/dashboard' }),
    );
    expect(ok.status).toBe(303);
    expect(ok.headers['set-cookie']).toBeDefined();
    const forged = await raw(
      'POST',
      '/dashboard/sign-in',
      { ...fromPage(`127.0.0.1:${port}`), origin: `http://${attacker}` },
      form({ email: 'owner@example.com', next: '/dashboard' }),
    );
    expect(forged.status).toBe(403);
    expect(forged.headers['set-cookie']).toBeUndefined();
  });
});

describe('--public-url', () => {
  it('adds its host and origin to the server’s own names, and nothing else', async () => {
    const proxied = await startTestServer({ publicUrl: 'https://gds.example.com' });
    const proxiedPort = Number(new URL(proxied.url).port);
    const at = (
      host: string,
      headers: Record<string, string> = {},
      body?: string,
      method = 'GET',
      path = '/v1/api/me',
    ) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port: proxiedPort, method, path, headers: { host, ...headers } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      const auth = { authorization: `Bearer ${proxied.user('OWNER').cliToken}` };
      expect(await at('gds.example.com', auth)).toBe(200);
      expect(await at(`127.0.0.1:${proxiedPort}`, auth)).toBe(200);
      expect(await at('rebind.attacker.example', auth)).toBe(421);
      // Reachable beyond loopback, the server asks for its sign-in secret too (test/server/sign-in-secret.test.ts).
      const secret = proxied.signIn?.secret ?? '';
      const signIn = form({ email: 'owner@example.com', next: '/dashboard', secret });
      const post = (origin: string) =>
        at(
          'gds.example.com',
          { origin, 'sec-fetch-site': 'same-origin', 'content-type': 'application/x-www-form-urlencoded' },
          signIn,
          'POST',
          '/dashboard/sign-in',
        );
      expect(await post('https://gds.example.com')).toBe(303);
      expect(await post('https://rebind.attacker.example')).toBe(403);
    } finally {
      await proxied.close();
    }
  });
});

describe('/device', () => {
  it('carries the dashboard’s security headers', async () => {
    const response = await raw('GET', '/device', { host: `127.0.0.1:${port}` });
    expect(response.status).toBe(200);
    expect(response.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    expect(response.headers['content-security-policy']).toMatch(/script-src 'none'/);
    expect(response.headers['x-frame-options']).toBe('DENY');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('carries them under a percent-encoded path too (the router decodes /%64evice to /device; a frame must not show it)', async () => {
    for (const path of ['/%64evice', '/%64evice?user_code=BCDF-GHJK', '/d%65vice']) {
      const response = await raw('GET', path, { host: `127.0.0.1:${port}` });
      expect(response.status, path).toBe(200);
      expect(response.body, path).toContain('action="/device"');
      expect(response.headers['x-frame-options'], path).toBe('DENY');
      expect(response.headers['content-security-policy'], path).toMatch(/frame-ancestors 'none'/);
      expect(response.headers['x-content-type-options'], path).toBe('nosniff');
    }
    const unreadable = await raw(
      'POST',
      '/%64evice',
      { host: `127.0.0.1:${port}`, 'content-type': 'application/xml' },
      '<approve/>',
    );
    expect(unreadable.status).toBe(400);
    expect(unreadable.headers['content-type']).toMatch(/^text\/html/);
    expect(unreadable.headers['x-frame-options']).toBe('DENY');
  });

  it('refuses a cross-site approval (403, the code stays pending) and takes a same-origin one', async () => {
    const userCode = await newDeviceCode();
    const forged: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'https://evil.example' },
      { origin: 'null' },
    ];
    for (const headers of forged) {
      const response = await raw(
        'POST',
        '/device',
        { host: `127.0.0.1:${port}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        form({ user_code: userCode, email: 'owner@example.com', action: 'approve' }),
      );
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(response.headers['x-frame-options']).toBe('DENY');
    }
    expect(await deviceStatus(userCode)).toBe('pending');
    const approved = await raw(
      'POST',
      '/device',
      fromPage(`127.0.0.1:${port}`),
      form({ user_code: userCode, email: 'owner@example.com', action: 'approve' }),
    );
    expect(approved.status).toBe(200);
    expect(await deviceStatus(userCode)).toBe('approved');
  });
});
