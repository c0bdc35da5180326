// The per-address failed-authentication limit behind a reverse proxy. Off by default
// (the spec's default is a direct connection), X-Forwarded-For is ignored: a client cannot choose its own
// bucket by sending one. With `--trust-proxy` naming the proxy, the client address is the one the proxy
// forwards, so one client's failures no longer lock out everyone else behind the same proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { parseServerArgs } from '../../src/server/options.js';

let direct: TestServer;
let proxied: TestServer;
let hops: TestServer;

beforeAll(async () => {
  [direct, proxied, hops] = await Promise.all([
    startTestServer({ failedAuthLimit: 3 }),
    // The test's requests come from 127.0.0.1: that is the proxy here.
    startTestServer({ failedAuthLimit: 3, trustProxy: ['127.0.0.1'] }),
    startTestServer({ failedAuthLimit: 3, trustProxy: 1 }),
  ]);
});

afterAll(async () => {
  await Promise.all([direct?.close(), proxied?.close(), hops?.close()]);
});

const bogus = 'cli_bogus_proxy_xxxxxxxxxxxxxxxxxxxx';
const from = (server: TestServer, client: string, token = bogus) =>
  server.request('GET', '/api/me', { token, headers: { 'x-forwarded-for': client } });

async function exhaust(server: TestServer, client: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 4; i += 1) statuses.push((await from(server, client)).status);
  return statuses;
}

describe('--trust-proxy', () => {
  it('off (the default): X-Forwarded-For is ignored, every client behind one address shares its limit', async () => {
    expect(await exhaust(direct, '203.0.113.1')).toEqual([401, 401, 401, 429]);
    // Another forwarded address is the same connection's address: still limited, even with a good token.
    expect((await from(direct, '203.0.113.2', direct.user('OWNER').cliToken)).status).toBe(429);
  });

  it('naming the proxy: each forwarded client has its own limit', async () => {
    expect(await exhaust(proxied, '203.0.113.1')).toEqual([401, 401, 401, 429]);
    expect((await from(proxied, '203.0.113.2', proxied.user('OWNER').cliToken)).status).toBe(200);
    expect((await from(proxied, '203.0.113.2')).status).toBe(401);
    // The address nearest the trusted proxy counts: a client cannot escape by prepending addresses.
    expect((await from(proxied, '198.51.100.7, 203.0.113.1')).status).toBe(429);
  });

  it('a hop count trusts that many proxies', async () => {
    expect(await exhaust(hops, '203.0.113.9')).toEqual([401, 401, 401, 429]);
    expect((await from(hops, '203.0.113.10', hops.user('OWNER').cliToken)).status).toBe(200);
  });

  it('npm run server refuses a --trust-proxy value that names no address', () => {
    // Refused as every bad option is (exit 2, the usage on stderr: test/server/main.test.ts).
    expect(() => parseServerArgs(['--port', '0', '--trust-proxy', 'everyone'], {})).toThrow(
      '--trust-proxy takes proxy addresses or CIDR ranges',
    );
  });
});
