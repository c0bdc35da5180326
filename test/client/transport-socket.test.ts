// The transport against real sockets on 127.0.0.1 (no msw in this file): keep-alive reuse, resets,
// refused connections and timeouts as undici really reports them.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError } from '../../src/client/errors.js';
import { createTransport } from '../../src/client/transport.js';
import type { Transport, TransportOptions } from '../../src/client/transport.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server: Server = createServer(handler);
  const stats = { connections: 0, requests: [] as string[] };
  server.on('connection', () => (stats.connections += 1));
  server.on('request', (req: IncomingMessage) => stats.requests.push(`${req.method} ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats };
}

function transportFor(baseUrl: string, overrides: Partial<TransportOptions> = {}): Transport {
  const transport = createTransport({
    baseUrl,
    auth: { getToken: async () => 'cli_0123456789abcdef' },
    sleep: async () => {},
    logger: () => {},
    ...overrides,
  });
  cleanups.push(() => transport.close());
  return transport;
}

describe('transport over real sockets', () => {
  it('reuses keep-alive connections instead of opening one per request', async () => {
    const { baseUrl, stats } = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const transport = transportFor(baseUrl);
    for (let i = 0; i < 10; i += 1) await transport.request({ method: 'GET', path: `/api/x?i=${i}` });
    expect(stats.requests).toHaveLength(10);
    // undici may open a second socket while the first is being returned to the pool.
    expect(stats.connections).toBeLessThanOrEqual(2);
  });

  it('retries a GET whose connection is reset, and never a POST', async () => {
    let resetsLeft = 1;
    const { baseUrl, stats } = await serve((req, res) => {
      if (resetsLeft > 0 || req.method === 'POST') {
        resetsLeft -= 1;
        req.socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const transport = transportFor(baseUrl);
    await expect(transport.request({ method: 'GET', path: '/api/get' })).resolves.toMatchObject({
      data: { ok: true },
    });
    expect(stats.requests).toEqual(['GET /api/get', 'GET /api/get']);

    const err = await transport.request({ method: 'POST', path: '/api/post', body: {} }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.failure).toBe('connection');
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(err.code);
    expect(stats.requests.filter((r) => r.startsWith('POST'))).toHaveLength(1);
  });

  it('reports a refused connection as a NetworkError', async () => {
    const { baseUrl } = await serve(() => {});
    await cleanups.pop()?.();
    const transport = transportFor(baseUrl, { retry: { maxRetries: 0 } });
    const err = await transport.request({ method: 'GET', path: '/api/x' }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'connection', code: 'ECONNREFUSED' });
    expect(err.message).toBe(
      `GET ${baseUrl}/api/x failed: connection refused; is the service running at that address? (ECONNREFUSED)`,
    );
  });

  it('reports a server that never answers as a timeout, after retrying the GET', async () => {
    const { baseUrl, stats } = await serve(() => {});
    const transport = transportFor(baseUrl, { timeouts: { headersMs: 150 }, retry: { maxRetries: 1 } });
    const err = await transport.request({ method: 'GET', path: '/api/hang' }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'timeout', code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(err.message).toContain('failed: the service did not answer in time');
    expect(stats.requests).toEqual(['GET /api/hang', 'GET /api/hang']);
  });
});
