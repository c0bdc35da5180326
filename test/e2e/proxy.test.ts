// HTTPS_PROXY / HTTP_PROXY / NO_PROXY (and lower-case) are honoured by the transport. A
// loopback proxy records every CONNECT and tunnels it to an https service (a certificate trusted through
// NODE_EXTRA_CA_CERTS): gds goes through it, NO_PROXY goes around it, and a proxy that is not there is a
// network error (exit 9), never a silent direct connection. The https service goes by a name that is not
// loopback (service.gds.test, mapped to 127.0.0.1 by the proxy): a loopback base never goes through a proxy,
// so a plain-http base (allowed only for loopback) never sends its bearer token to a proxy in clear text.
// gds runs in the test process (runInProcess), once as a real process.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyEnvironment } from '../../src/client/transport.js';
import { connectProxy, serviceHost } from './connect-proxy.js';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

const fixtures = fileURLToPath(new URL('./fixtures/tls/', import.meta.url));
const certificate = join(fixtures, 'proxied-cert.pem');
const token = 'cli_proxy0123456789secret';
const table = {
  id: 'tbl_1',
  name: 'orders',
  mode: 'MODE_A',
  state: 'CERTIFIED',
  gate: 'ENFORCING',
  environmentLabel: 'dev',
};

const service = createServer(
  { key: readFileSync(join(fixtures, 'proxied-key.pem')), cert: readFileSync(certificate) },
  (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ tables: [table] }));
  },
);
const { proxy, connects, credentials } = connectProxy();
let base = '';
let proxyUrl = '';

beforeAll(async () => {
  await Promise.all([
    new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve)),
    new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve)),
    ensureBuilt(),
  ]);
  base = `https://${serviceHost}:${(service.address() as AddressInfo).port}`;
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(() => {
  service.close();
  proxy.close();
});

const env = (extra: Record<string, string>) => ({
  SERVICE_TOKEN: token,
  SERVICE_API_URL: base,
  NODE_EXTRA_CA_CERTS: certificate,
  GDS_CONFIG_DIR: '/nonexistent/gds',
  ...extra,
});

describe('proxies', () => {
  it.each([
    ['HTTPS_PROXY', runCli],
    ['https_proxy', runInProcess],
  ])(
    '%s: the call goes through the proxy (CONNECT host:port)',
    // Once a real process, as a user runs gds behind a proxy: node reads NODE_EXTRA_CA_CERTS as it starts.
    async (name, run) => {
      connects.length = 0;
      const r = await run(['list', '--json'], { env: env({ [name]: proxyUrl }) });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ id: 'tbl_1' });
      expect(connects).toEqual([`CONNECT ${new URL(base).host}`]);
    },
  );

  it('NO_PROXY naming the host: gds goes around the proxy, which hears nothing', async () => {
    // service.gds.test resolves only through the proxy: going around it is a network error (exit 9).
    connects.length = 0;
    const r = await runInProcess(['list', '--json', '--max-retry-after', '0'], {
      env: env({ HTTPS_PROXY: proxyUrl, NO_PROXY: serviceHost }),
    });
    expect(r.code).toBe(9);
    expect(r.stderr).toContain(serviceHost);
    expect(connects).toEqual([]);
  });

  it.each([
    ['127.0.0.1', 'the proxy'],
    ['localhost', 'the proxy'],
    ['127.0.0.2', 'a proxy URL gds cannot read'],
  ])(
    'HTTP_PROXY and a plain-http loopback base (%s), HTTP_PROXY %s: straight to the service, the proxy never sees the token',
    async (host, proxied) => {
      connects.length = 0;
      const authorizations: (string | undefined)[] = [];
      const plain = createHttpServer((req, res) => {
        authorizations.push(req.headers.authorization);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ tables: [table] }));
      });
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      const listening = host === '127.0.0.2' ? '127.0.0.2' : '127.0.0.1';
      if (listening !== '127.0.0.1') {
        await new Promise((resolve) => plain.close(resolve));
        await new Promise<void>((resolve) => plain.listen(0, listening, resolve));
      }
      try {
        const port = (plain.address() as AddressInfo).port;
        const r = await runInProcess(['list', '--json'], {
          env: env({
            SERVICE_API_URL: `http://${host}:${port}`,
            HTTP_PROXY: proxied === 'the proxy' ? proxyUrl : 'http://ci:p4ss#w0rd@proxy.corp:3128',
            HTTPS_PROXY: proxyUrl,
          }),
        });
        expect(r.code, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ id: 'tbl_1' });
        expect(connects).toEqual([]);
        expect(authorizations).toEqual([`Bearer ${token}`]);
      } finally {
        await new Promise((resolve) => plain.close(resolve));
      }
    },
  );

  it('a proxy that is not there: exit 9, no direct connection behind its back', async () => {
    const closed = createHttpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await runInProcess(['list', '--json', '--max-retry-after', '0'], {
      env: env({ HTTPS_PROXY: `http://127.0.0.1:${port}` }),
    });
    expect(r.code).toBe(9);
    expect(r.stdout).toBe('');
  });

  it.each([
    ['HTTPS_PROXY', 'http://ci:p4ss#w0rd@proxy.corp:3128', /percent-encode/],
    ['https_proxy', 'http://ci:p4ss/w0rd@proxy.corp:3128', /percent-encode/],
    ['HTTPS_PROXY', 'http://ci:p4ss?w0rd@proxy.corp:3128', /percent-encode/],
    ['HTTPS_PROXY', 'http://ci#p4ssw0rd@proxy.corp:3128', /percent-encode/],
    ['HTTPS_PROXY', 'socks5://ci:p4ssw0rd@proxy.corp:1080', /only through an http:\/\/ or https:\/\/ proxy/],
    ['HTTPS_PROXY', 'proxy.corp:3128', /only through an http:\/\/ or https:\/\/ proxy/],
    ['HTTPS_PROXY', 'http://ci:p4ssw0rd@proxy.corp:3128\n', /line break/],
  ])('%s=%s: exit 2 naming the variable, its credentials masked, nothing sent', async (name, value, why) => {
    connects.length = 0;
    for (const args of [['list'], ['auth', 'login', '--base', base, '--no-browser']]) {
      const r = await runInProcess([...args, '--json'], { env: env({ [name]: value }) });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const { error } = JSON.parse(r.stderr) as {
        error: { code: string; message: string; suggestion: string };
      };
      expect(error.code).toBe('invalid_proxy');
      expect(error.message).toMatch(new RegExp(`^${name} `));
      expect(`${error.message} ${error.suggestion}`).toMatch(why);
      expect(r.stderr).not.toMatch(/p4ss|w0rd/);
    }
    expect(connects).toEqual([]);
  });

  it('a password percent-encoded (%23 for #) reaches the proxy as it is', async () => {
    connects.length = 0;
    credentials.length = 0;
    const r = await runInProcess(['list', '--json'], {
      env: env({ HTTPS_PROXY: proxyUrl.replace('//', '//ci:p4ss%23w0rd%2F@') }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(credentials).toEqual(['ci:p4ss#w0rd/']);
  });

  it('reads the upper-case names first, then the lower-case ones; nothing without a proxy', () => {
    const loopback = 'localhost,127.0.0.0-127.255.255.255,::1';
    expect(proxyEnvironment({ https_proxy: 'http://p:1', no_proxy: 'a' })).toEqual({
      HTTPS_PROXY: 'http://p:1',
      NO_PROXY: `a,${loopback}`,
    });
    expect(proxyEnvironment({ HTTP_PROXY: 'http://u:1', http_proxy: 'http://l:1' })).toEqual({
      HTTP_PROXY: 'http://u:1',
      NO_PROXY: loopback,
    });
    expect(proxyEnvironment({ NO_PROXY: 'a' })).toBeUndefined();
  });
});
