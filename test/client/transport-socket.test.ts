// The transport against real sockets on 127.0.0.1 (no msw in this file): keep-alive reuse, resets,
// refused connections and timeouts as node:http really reports them.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { NetworkError } from '../../src/client/errors.js';
import { contractsApi } from '../../src/client/areas/contracts.js';
import { gatesApi } from '../../src/client/areas/gates.js';
import { recertificationApi } from '../../src/client/areas/recertification.js';
import { createTransport, LONG_WORK_TIMEOUT_MS, uncheckedPath } from '../../src/client/transport.js';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../../src/server/defaults.js';
import type { Transport, TransportOptions } from '../../src/client/transport.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server: Server = createServer(handler);
  const stats = { connections: 0, requests: [] as string[] };
  let connectionClosed = () => {};
  const closed = new Promise<void>((resolve) => (connectionClosed = resolve));
  server.on('connection', (socket) => {
    stats.connections += 1;
    socket.once('close', () => connectionClosed());
  });
  server.on('request', (req: IncomingMessage) => stats.requests.push(`${req.method} ${req.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats, closed };
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
  it('reads a body whose characters are cut between the packets that carry it', async () => {
    const text = JSON.stringify({ name: 'café ☕ 😀'.repeat(20_000) });
    const bytes = Buffer.from(text);
    const { baseUrl } = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      // Written in pieces of 7 bytes at first, so that every kind of character is cut somewhere.
      for (let at = 0; at < 700; at += 7) res.write(bytes.subarray(at, at + 7));
      res.end(bytes.subarray(700));
    });
    const answer = await transportFor(baseUrl).send({ method: 'GET', path: uncheckedPath('/api/x') });
    expect(answer).toEqual(JSON.parse(text));
  });

  it('reuses keep-alive connections instead of opening one per request', async () => {
    const { baseUrl, stats } = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const transport = transportFor(baseUrl);
    for (let i = 0; i < 10; i += 1)
      await transport.request({ method: 'GET', path: uncheckedPath(`/api/x?i=${i}`) });
    expect(stats.requests).toHaveLength(10);
    // The Agent may open a second socket while the first is being returned to the pool.
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
    await expect(
      transport.request({ method: 'GET', path: uncheckedPath('/api/get') }),
    ).resolves.toMatchObject({
      data: { ok: true },
    });
    expect(stats.requests).toEqual(['GET /api/get', 'GET /api/get']);

    const err = await transport
      .request({ method: 'POST', path: uncheckedPath('/api/post'), body: {} })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.failure).toBe('connection');
    expect(err.code).toBe('ECONNRESET');
    expect(stats.requests.filter((r) => r.startsWith('POST'))).toHaveLength(1);
  });

  it('closes a kept-alive connection left idle, so the next request (a POST too) opens a new one', async () => {
    const { baseUrl, stats, closed } = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    const transport = transportFor(baseUrl, { timeouts: { idleMs: 100 } });
    await transport.request({ method: 'GET', path: uncheckedPath('/api/first') });
    await expect(Promise.race([closed.then(() => 'closed'), sleep(5000).then(() => 'open')])).resolves.toBe(
      'closed',
    );
    await expect(
      transport.request({ method: 'POST', path: uncheckedPath('/api/second'), body: {} }),
    ).resolves.toMatchObject({
      status: 200,
    });
    expect(stats.connections).toBe(2);
  });

  it('waits for an answer slower than the idle limit: only an idle connection is closed', async () => {
    const { baseUrl } = await serve((_req, res) => {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      }, 400);
    });
    const transport = transportFor(baseUrl, { timeouts: { idleMs: 100 } });
    await transport.request({ method: 'GET', path: uncheckedPath('/api/warm') }); // the next request reuses the socket
    await expect(
      transport.request({ method: 'POST', path: uncheckedPath('/api/slow'), body: {} }),
    ).resolves.toMatchObject({
      data: { ok: true },
    });
  });

  it('reports a refused connection as a NetworkError', async () => {
    const { baseUrl } = await serve(() => {});
    await cleanups.pop()?.();
    const transport = transportFor(baseUrl, { retry: { maxRetries: 0 } });
    const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'connection', code: 'ECONNREFUSED' });
    expect(err.message).toBe(
      `GET ${baseUrl}/api/x failed: connection refused; is the service running at that address? (ECONNREFUSED)`,
    );
  });

  it('reports a server that never answers as a timeout, after retrying the GET', async () => {
    const { baseUrl, stats } = await serve(() => {});
    const transport = transportFor(baseUrl, { timeouts: { headersMs: 150 }, retry: { maxRetries: 1 } });
    const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/hang') }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'timeout', code: 'HEADERS_TIMEOUT' });
    expect(err.message).toContain('failed: the service did not answer in time');
    expect(stats.requests).toEqual(['GET /api/hang', 'GET /api/hang']);
  });
});

describe('long server work', () => {
  it('waits past the headers timeout for a request that says its work is long (a gate run)', async () => {
    const { baseUrl } = await serve((_req, res) => {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end('{"proof":true}');
      }, 400);
    });
    const transport = transportFor(baseUrl, { timeouts: { headersMs: 150 }, retry: { maxRetries: 0 } });
    const quick = await transport
      .request({ method: 'POST', path: uncheckedPath('/api/run'), body: {} })
      .catch((e) => e);
    expect(quick).toMatchObject({ failure: 'timeout', code: 'HEADERS_TIMEOUT' });
    await expect(
      transport.request({
        method: 'POST',
        path: uncheckedPath('/api/run'),
        body: {},
        headersTimeoutMs: 2_000,
      }),
    ).resolves.toMatchObject({ data: { proof: true } });
  });

  it('gives gate runs, submissions, certify and recertification signals the long wait', async () => {
    const seen: Array<number | undefined> = [];
    const transport = {
      request: async (req: { headersTimeoutMs?: number }) => {
        seen.push(req.headersTimeoutMs);
        return { status: 200, data: {}, headers: { get: () => null }, requestId: undefined };
      },
      send: async (req: { headersTimeoutMs?: number }) => {
        seen.push(req.headersTimeoutMs);
        return {};
      },
    } as unknown as Transport;
    await gatesApi(transport).run('t1', { gate: 1 } as never);
    await gatesApi(transport).submit('t1', {} as never);
    await contractsApi(transport).certify('t1');
    await recertificationApi(transport).signal({ tables: ['orders'] });
    expect(seen).toEqual([
      LONG_WORK_TIMEOUT_MS,
      LONG_WORK_TIMEOUT_MS,
      LONG_WORK_TIMEOUT_MS,
      LONG_WORK_TIMEOUT_MS,
    ]);
    expect(LONG_WORK_TIMEOUT_MS).toBeGreaterThan(DEFAULT_QUERY_TIMEOUT_MS * 2);
  });
});

describe('body timeout', () => {
  it('reports an answer that stops arriving as a timeout, after retrying the GET', async () => {
    const { baseUrl, stats } = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.write('{"rows":[');
    });
    const transport = transportFor(baseUrl, { timeouts: { bodyMs: 150 }, retry: { maxRetries: 1 } });
    const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/stall') }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'timeout', code: 'BODY_TIMEOUT' });
    expect(err.message).toContain('failed: the answer stopped arriving (BODY_TIMEOUT)');
    expect(stats.requests).toEqual(['GET /api/stall', 'GET /api/stall']);
  });
});

describe('redirects', () => {
  /** A server that records every request it gets, with its body and authorization header. */
  async function recorder() {
    const seen: Array<{ line: string; body: string; authorization: string | undefined }> = [];
    const server = await serve((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ line: `${req.method} ${req.url}`, body, authorization: req.headers.authorization });
        res.setHeader('content-type', 'application/json');
        res.end('{"elsewhere":true}');
      });
    });
    return { ...server, seen };
  }

  /** A server answering every request with `status` and `Location: location(request url)`. */
  async function redirecting(status: number, location: (url: string) => string) {
    return serve((req, res) => {
      req.resume();
      res.statusCode = status;
      res.setHeader('location', location(req.url ?? '/'));
      res.end();
    });
  }

  it('never sends a POST body to another origin, and names the Location', async () => {
    const other = await recorder();
    const target = `${other.baseUrl.replace('127.0.0.1', 'localhost')}/api/integration/refresh`;
    const { baseUrl, stats } = await redirecting(307, () => target);
    const transport = transportFor(baseUrl);
    const err = await transport
      .request({
        method: 'POST',
        path: uncheckedPath('/api/integration/refresh'),
        body: { refreshToken: 'rt_0011.secret' },
        authenticated: false,
      })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'ApiError', status: 307, code: 'redirect_refused' });
    expect(err.message).toContain(target);
    expect(other.seen).toEqual([]);
    expect(stats.requests).toEqual(['POST /api/integration/refresh']);
  });

  it('does not follow a redirect of a POST even to the same origin', async () => {
    const { baseUrl, stats } = await redirecting(308, () => '/api/elsewhere');
    const err = await transportFor(baseUrl)
      .request({ method: 'POST', path: uncheckedPath('/api/x'), body: { a: 1 } })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 308, code: 'redirect_refused' });
    expect(err.message).toContain('/api/elsewhere');
    expect(stats.requests).toEqual(['POST /api/x']);
  });

  it('refuses a GET redirected to another origin, with its token never sent there', async () => {
    const other = await recorder();
    const { baseUrl } = await redirecting(302, (url) => `${other.baseUrl}${url}`);
    const err = await transportFor(baseUrl)
      .request({ method: 'GET', path: uncheckedPath('/api/me') })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 302, code: 'redirect_refused' });
    expect(err.message).toContain(`${other.baseUrl}/api/me`);
    expect(other.seen).toEqual([]);
  });

  it('follows a same-origin redirect of a GET, with its token', async () => {
    const seen: string[] = [];
    const { baseUrl } = await serve((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      if (req.url === '/api/old') {
        res.statusCode = 301;
        res.setHeader('location', '/api/new');
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"moved":true}');
    });
    const answer = await transportFor(baseUrl).request({ method: 'GET', path: uncheckedPath('/api/old') });
    expect(answer.data).toEqual({ moved: true });
    expect(seen).toEqual([
      'GET /api/old Bearer cli_0123456789abcdef',
      'GET /api/new Bearer cli_0123456789abcdef',
    ]);
  });

  it('gives up on a redirect loop after a bounded number of hops', async () => {
    const { baseUrl, stats } = await redirecting(302, (url) => url);
    const err = await transportFor(baseUrl)
      .request({ method: 'GET', path: uncheckedPath('/api/loop') })
      .catch((e) => e);
    expect(err).toMatchObject({ status: 302, code: 'redirect_refused' });
    expect(stats.requests).toEqual(Array(6).fill('GET /api/loop'));
  });
});
