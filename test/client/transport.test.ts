import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, NetworkError } from '../../src/client/errors.js';
import { createTransport, uncheckedPath } from '../../src/client/transport.js';
import type { AuthProvider, TransportOptions } from '../../src/client/transport.js';
import { BASE, useMockApi } from './mock-api.js';

const api = useMockApi();
const TOKEN = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEifQ.c2lnbmF0dXJlLW9uZQ';
const FRESH = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTIifQ.c2lnbmF0dXJlLXR3bw';
const URL_OF = (path: string) => `${BASE}${path}`;

/** Answers the given responses in order, one per request; a request beyond them fails the test. */
function inOrder(...responses: Array<() => Response>) {
  let next = 0;
  return () => {
    const make = responses[next++];
    if (!make) throw new Error(`request ${next} was not expected`);
    return make();
  };
}

const errorBody =
  (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
  () =>
    HttpResponse.json({ error: { code, message, details: { hint: code } } }, { status, headers });

function setup(overrides: Partial<TransportOptions> = {}) {
  const sleeps: number[] = [];
  const lines: string[] = [];
  const transport = createTransport({
    baseUrl: BASE,
    version: '1.2.3',
    auth: { getToken: async () => TOKEN },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    logger: (line) => lines.push(line),
    ...overrides,
  });
  return { transport, sleeps, lines };
}

let open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.map((t) => t.close()));
  open = [];
});
function track<T extends { transport: { close(): Promise<void> } }>(t: T): T {
  open.push(t.transport);
  return t;
}

describe('requests', () => {
  it('sends bearer auth, JSON and the gds user agent, and reads the request id', async () => {
    api.use(
      http.post(URL_OF('/api/tables/t%201/records'), async ({ request }) =>
        HttpResponse.json(
          { id: 'r1', echo: await request.json() },
          { status: 201, headers: { 'x-request-id': 'req-7' } },
        ),
      ),
    );
    const { transport } = track(setup());
    const res = await transport.request({
      method: 'POST',
      path: uncheckedPath('/api/tables/t%201/records'),
      body: { name: 'a' },
    });
    expect(res).toMatchObject({ status: 201, data: { id: 'r1', echo: { name: 'a' } }, requestId: 'req-7' });
    const [sent] = api.seen;
    expect(sent?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(sent?.headers.get('user-agent')).toBe('gds/1.2.3');
    expect(sent?.headers.get('content-type')).toBe('application/json');
    expect(sent?.headers.get('accept')).toBe('application/json');
  });

  it('puts defined query values in the URL and leaves undefined ones out', async () => {
    api.use(http.get(URL_OF('/api/workspace/audit-log'), () => HttpResponse.json({ entries: [] })));
    const { transport } = track(setup());
    await transport.request({
      method: 'GET',
      path: uncheckedPath('/api/workspace/audit-log'),
      query: { limit: 5, cursor: undefined, eventType: 'TABLE_CERTIFIED' },
    });
    expect(api.seen[0]?.url.search).toBe('?limit=5&eventType=TABLE_CERTIFIED');
  });

  it('gives undefined data for an empty 204 answer', async () => {
    api.use(http.delete(URL_OF('/api/x'), () => new HttpResponse(null, { status: 204 })));
    const { transport } = track(setup());
    await expect(
      transport.request({ method: 'DELETE', path: uncheckedPath('/api/x') }),
    ).resolves.toMatchObject({
      status: 204,
      data: undefined,
    });
  });

  it('sends no Authorization header on an unauthenticated request', async () => {
    api.use(http.post(URL_OF('/api/integration/refresh'), () => HttpResponse.json({ ok: true })));
    const { transport } = track(setup());
    await transport.request({
      method: 'POST',
      path: uncheckedPath('/api/integration/refresh'),
      body: {},
      authenticated: false,
    });
    expect(api.seen[0]?.headers.has('authorization')).toBe(false);
  });
});

describe('lifecycle', () => {
  it('closes cleanly when no request was ever sent', async () => {
    await expect(createTransport({ baseUrl: BASE }).close()).resolves.toBeUndefined();
  });
});

describe('base URL', () => {
  it('refuses a user name or password in it, without printing them', () => {
    let message = '';
    try {
      createTransport({ baseUrl: 'https://robot:s3cret@gds.example.com/stage' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/"https:\/\/gds\.example\.com\/stage" carries a user name or password/);
    expect(message).not.toContain('s3cret');
  });

  it.each(['127.0.0.1:8787', 'ftp://host/x', 'http://host/api?x=1', ''])(
    'refuses %j with what to do',
    (baseUrl) => {
      expect(() => createTransport({ baseUrl })).toThrow(/is not an http\(s\) address; pass --base/);
    },
  );

  it('shows a refused URL without its query or fragment, which may hold a secret', () => {
    for (const baseUrl of ['https://gds.example/v1?access_token=s3cret', 'https://gds.example/v1#s3cret']) {
      expect(() => createTransport({ baseUrl })).toThrow(/"https:\/\/gds\.example\/v1[?#]…" is not/);
    }
  });

  it.each(['http://gds.example.com', 'http://10.0.0.1:8787/stage', 'http://127.0.0.1.example.com'])(
    'refuses plain http to %s, a host that is not loopback',
    (baseUrl) => {
      expect(() => createTransport({ baseUrl })).toThrow(
        expect.objectContaining({ code: 'insecure_url', message: expect.stringMatching(/must use https/) }),
      );
    },
  );

  it.each(['http://127.0.0.1:8787', 'http://localhost/stage', 'http://[::1]:9'])(
    'allows plain http to the loopback address %s',
    (baseUrl) => {
      expect(() => createTransport({ baseUrl })).not.toThrow();
    },
  );

  it('keeps the stage segment and drops a trailing slash', async () => {
    api.use(http.get(URL_OF('/api/x'), () => HttpResponse.json({})));
    const { transport } = track(setup({ baseUrl: `${BASE}/` }));
    await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
    expect(api.seen[0]?.url.pathname).toBe('/stage/api/x');
  });
});

describe('error mapping', () => {
  it('builds an ApiError from the error body and the request id', async () => {
    api.use(
      http.get(URL_OF('/api/tables/t1/records'), () =>
        HttpResponse.json(
          { error: { code: 'table_not_found', message: 'Table t1 not found', details: { tableId: 't1' } } },
          { status: 404, headers: { 'x-request-id': 'req-404' } },
        ),
      ),
    );
    const { transport } = track(setup());
    const err = await transport
      .request({ method: 'GET', path: uncheckedPath('/api/tables/t1/records') })
      .catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 404,
      code: 'table_not_found',
      message: 'Table t1 not found',
      details: { tableId: 't1' },
      requestId: 'req-404',
      method: 'GET',
      url: URL_OF('/api/tables/t1/records'),
    });
  });

  it('names the status when the error body is not JSON', async () => {
    api.use(http.post(URL_OF('/api/x'), () => new HttpResponse('<html>oops</html>', { status: 500 })));
    const { transport } = track(setup());
    const err = await transport
      .request({ method: 'POST', path: uncheckedPath('/api/x'), body: {} })
      .catch((e) => e);
    expect(err).toMatchObject({
      status: 500,
      code: 'http_500',
      message: 'The service answered 500 Internal Server Error',
      requestId: undefined,
    });
  });

  it('refuses a success answer whose body is not JSON', async () => {
    api.use(http.get(URL_OF('/api/x'), () => new HttpResponse('not json', { status: 200 })));
    const { transport } = track(setup());
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).rejects.toMatchObject({
      name: 'ApiError',
      status: 200,
      code: 'invalid_response',
    });
  });
});

describe('a body read as it arrives (reader)', () => {
  const reader = (pieces: string[]) => () => ({
    write: (chunk: Buffer) => void pieces.push(chunk.toString()),
    end: () => JSON.parse(pieces.join('')) as unknown,
  });

  it("hands a success answer's text to the reader and answers what the reader read", async () => {
    api.use(http.get(URL_OF('/api/x'), () => HttpResponse.json({ tables: [{ id: 't1' }] })));
    const { transport } = track(setup());
    const pieces: string[] = [];
    const res = await transport.request({
      method: 'GET',
      path: uncheckedPath('/api/x'),
      reader: reader(pieces),
    });
    expect(res.data).toEqual({ tables: [{ id: 't1' }] });
    expect(pieces.join('')).toBe('{"tables":[{"id":"t1"}]}');
  });

  it('refuses a success answer the reader refuses as not JSON, and leaves an error answer to the error', async () => {
    api.use(
      http.get(URL_OF('/api/x'), () => new HttpResponse('{"tables":[', { status: 200 })),
      http.get(URL_OF('/api/y'), errorBody(404, 'table_not_found', 'No such table')),
    );
    const { transport } = track(setup());
    const pieces: string[] = [];
    await expect(
      transport.request({ method: 'GET', path: uncheckedPath('/api/x'), reader: reader(pieces) }),
    ).rejects.toMatchObject({ name: 'ApiError', status: 200, code: 'invalid_response' });
    pieces.length = 0;
    await expect(
      transport.request({ method: 'GET', path: uncheckedPath('/api/y'), reader: reader(pieces) }),
    ).rejects.toMatchObject({ status: 404, code: 'table_not_found', message: 'No such table' });
    expect(pieces).toEqual([]);
  });
});

describe('retries', () => {
  it('waits out Retry-After on a 429, then succeeds, whatever the method', async () => {
    api.use(
      http.post(
        URL_OF('/api/tables/t1/import'),
        inOrder(errorBody(429, 'rate_limited', 'Too many requests', { 'retry-after': '7' }), () =>
          HttpResponse.json({ inserted: 1 }),
        ),
      ),
    );
    const { transport, sleeps } = track(setup());
    const res = await transport.request({
      method: 'POST',
      path: uncheckedPath('/api/tables/t1/import'),
      body: { rows: [] },
    });
    expect(res.data).toEqual({ inserted: 1 });
    expect(sleeps).toEqual([7000]);
    expect(api.seen).toHaveLength(2);
  });

  it('waits out Retry-After on a 503 (the embedded server busy with gate runs) for a POST, then succeeds', async () => {
    api.use(
      http.post(
        URL_OF('/api/tables/t1/gate-runs'),
        inOrder(errorBody(503, 'server_busy', 'busy', { 'retry-after': '12' }), () =>
          HttpResponse.json({ passed: true }),
        ),
      ),
    );
    const { transport, sleeps } = track(setup());
    const res = await transport.request({
      method: 'POST',
      path: uncheckedPath('/api/tables/t1/gate-runs'),
      body: {},
    });
    expect(res.data).toEqual({ passed: true });
    expect(sleeps).toEqual([12_000]);
    expect(api.seen).toHaveLength(2);
  });

  it('reads Retry-After given as an HTTP date', async () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    api.use(
      http.get(
        URL_OF('/api/x'),
        inOrder(errorBody(429, 'rate_limited', 'slow down', { 'retry-after': inTenSeconds }), () =>
          HttpResponse.json({}),
        ),
      ),
    );
    const { transport, sleeps } = track(setup());
    await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(8000);
    expect(sleeps[0]).toBeLessThanOrEqual(11000);
  });

  it('fails at once with the 429 when Retry-After is longer than the configured maximum', async () => {
    api.use(
      http.get(URL_OF('/api/x'), errorBody(429, 'rate_limited', 'slow down', { 'retry-after': '120' })),
    );
    const { transport, sleeps } = track(setup({ retry: { maxRetryAfterSeconds: 30 } }));
    const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') }).catch((e) => e);
    expect(err).toMatchObject({
      name: 'ApiError',
      status: 429,
      code: 'rate_limited',
      retryAfterSeconds: 120,
    });
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it('gives up on a 429 after three retries', async () => {
    api.use(http.post(URL_OF('/api/x'), errorBody(429, 'rate_limited', 'slow down', { 'retry-after': '1' })));
    const { transport, sleeps } = track(setup());
    await expect(
      transport.request({ method: 'POST', path: uncheckedPath('/api/x'), body: {} }),
    ).rejects.toMatchObject({
      status: 429,
      retryAfterSeconds: 1,
    });
    expect(sleeps).toEqual([1000, 1000, 1000]);
    expect(api.seen).toHaveLength(4);
  });

  it('retries a GET after a reset connection, with exponential backoff and jitter', async () => {
    api.use(
      http.get(
        URL_OF('/api/x'),
        inOrder(
          () => HttpResponse.error(),
          () => HttpResponse.error(),
          () => HttpResponse.json({ ok: true }),
        ),
      ),
    );
    const { transport, sleeps } = track(setup({ random: () => 1 }));
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).resolves.toMatchObject({
      data: { ok: true },
    });
    expect(sleeps).toEqual([250, 500]);
    expect(api.seen).toHaveLength(3);
  });

  it('throws a NetworkError when the connection keeps failing on a GET', async () => {
    api.use(http.get(URL_OF('/api/x'), () => HttpResponse.error()));
    const { transport, sleeps } = track(setup({ random: () => 0 }));
    const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') }).catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ failure: 'connection', method: 'GET', url: URL_OF('/api/x') });
    expect(sleeps).toEqual([125, 250, 500]);
    expect(api.seen).toHaveLength(4);
  });

  it('never retries a POST after a reset connection', async () => {
    api.use(http.post(URL_OF('/api/tables/t1/records'), () => HttpResponse.error()));
    const { transport, sleeps } = track(setup());
    const err = await transport
      .request({ method: 'POST', path: uncheckedPath('/api/tables/t1/records'), body: {} })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it('retries a POST carrying an Idempotency-Key after a reset connection, with the same key', async () => {
    const keys: Array<string | null> = [];
    const answers = inOrder(
      () => HttpResponse.error(),
      () => HttpResponse.json({ ok: true }),
    );
    api.use(
      http.post(URL_OF('/api/workspace/recertify'), ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return answers();
      }),
    );
    const { transport, sleeps } = track(setup());
    const res = await transport.request({
      method: 'POST',
      path: uncheckedPath('/api/workspace/recertify'),
      body: {},
      idempotencyKey: 'k-1',
    });
    expect(res.data).toEqual({ ok: true });
    expect(sleeps).toHaveLength(1);
    expect(keys).toEqual(['k-1', 'k-1']);
  });

  it('never retries a POST whose Idempotency-Key came as a header of its own (gds api -H): most routes ignore it', async () => {
    const keys: Array<string | null> = [];
    api.use(
      http.post(URL_OF('/api/tables/t1/records'), ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        return HttpResponse.error();
      }),
    );
    const { transport, sleeps } = track(setup());
    const err = await transport
      .request({
        method: 'POST',
        path: uncheckedPath('/api/tables/t1/records'),
        body: {},
        headers: { 'Idempotency-Key': 'k-1' },
      })
      .catch((e) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(sleeps).toEqual([]);
    expect(keys).toEqual(['k-1']);
  });

  it.each(['POST', 'PATCH'] as const)('never retries a %s answered 503', async (method) => {
    const handler = method === 'POST' ? http.post : http.patch;
    api.use(handler(URL_OF('/api/x'), errorBody(503, 'unavailable', 'down for maintenance')));
    const { transport, sleeps } = track(setup());
    await expect(
      transport.request({ method, path: uncheckedPath('/api/x'), body: {} }),
    ).rejects.toMatchObject({
      status: 503,
      code: 'unavailable',
    });
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it.each([502, 503, 504])(
    'retries a GET answered %i at most three times, then throws the ApiError',
    async (status) => {
      api.use(http.get(URL_OF('/api/x'), errorBody(status, 'upstream', `upstream said ${status}`)));
      const { transport, sleeps } = track(setup());
      const err = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') }).catch((e) => e);
      expect(err).toMatchObject({
        name: 'ApiError',
        status,
        code: 'upstream',
        message: `upstream said ${status}`,
      });
      expect(sleeps).toHaveLength(3);
      expect(api.seen).toHaveLength(4);
    },
  );

  it.each(['PUT', 'DELETE'] as const)('retries an idempotent %s answered 503', async (method) => {
    const handler = method === 'PUT' ? http.put : http.delete;
    api.use(
      handler(
        URL_OF('/api/x'),
        inOrder(errorBody(503, 'unavailable', 'later'), () => HttpResponse.json({})),
      ),
    );
    const { transport } = track(setup());
    await expect(transport.request({ method, path: uncheckedPath('/api/x') })).resolves.toMatchObject({
      status: 200,
    });
    expect(api.seen).toHaveLength(2);
  });

  it('does not retry other errors such as a 500 or a 409 on a GET', async () => {
    api.use(http.get(URL_OF('/api/x'), errorBody(500, 'internal', 'bug')));
    const { transport, sleeps } = track(setup());
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).rejects.toMatchObject({
      status: 500,
    });
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(1);
  });

  it('asks for the token again before a retry', async () => {
    const tokens = [TOKEN, FRESH];
    api.use(
      http.get(
        URL_OF('/api/x'),
        inOrder(errorBody(503, 'unavailable', 'later'), () => HttpResponse.json({})),
      ),
    );
    const { transport } = track(setup({ auth: { getToken: async () => tokens.shift() ?? 'exhausted' } }));
    await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
    expect(api.seen.map((r) => r.headers.get('authorization'))).toEqual([
      `Bearer ${TOKEN}`,
      `Bearer ${FRESH}`,
    ]);
  });
});

describe('refresh on 401', () => {
  const unauthorized = errorBody(401, 'unauthorized', 'Unauthorized');

  it('refreshes once and sends the request again with the new token', async () => {
    api.use(
      http.post(
        URL_OF('/api/x'),
        inOrder(unauthorized, () => HttpResponse.json({ done: true })),
      ),
    );
    const onUnauthorized = vi.fn(async () => FRESH);
    const { transport } = track(setup({ auth: { getToken: async () => TOKEN, onUnauthorized } }));
    const res = await transport.request({ method: 'POST', path: uncheckedPath('/api/x'), body: { a: 1 } });
    expect(res.data).toEqual({ done: true });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(api.seen.map((r) => r.headers.get('authorization'))).toEqual([
      `Bearer ${TOKEN}`,
      `Bearer ${FRESH}`,
    ]);
  });

  it('treats a second 401 as final', async () => {
    api.use(http.get(URL_OF('/api/x'), unauthorized));
    const onUnauthorized = vi.fn(async () => FRESH);
    const { transport, sleeps } = track(setup({ auth: { getToken: async () => TOKEN, onUnauthorized } }));
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).rejects.toMatchObject({
      status: 401,
      code: 'unauthorized',
    });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(sleeps).toEqual([]);
    expect(api.seen).toHaveLength(2);
  });

  it('throws the 401 when the hook has no new token', async () => {
    api.use(http.get(URL_OF('/api/x'), unauthorized));
    const onUnauthorized = vi.fn(async () => undefined);
    const { transport } = track(setup({ auth: { getToken: async () => TOKEN, onUnauthorized } }));
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).rejects.toMatchObject({
      status: 401,
    });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(api.seen).toHaveLength(1);
  });

  it('lets a failing refresh surface as it is', async () => {
    api.use(http.get(URL_OF('/api/x'), unauthorized));
    const auth: AuthProvider = {
      getToken: async () => TOKEN,
      onUnauthorized: async () => {
        throw new Error('refresh token revoked; run gds auth login');
      },
    };
    const { transport } = track(setup({ auth }));
    await expect(transport.request({ method: 'GET', path: uncheckedPath('/api/x') })).rejects.toThrow(
      'refresh token revoked; run gds auth login',
    );
    expect(api.seen).toHaveLength(1);
  });

  it('shares one refresh between concurrent requests that get a 401', async () => {
    api.use(
      http.get(URL_OF('/api/x/:n'), ({ request }) =>
        request.headers.get('authorization') === `Bearer ${FRESH}` ? HttpResponse.json({}) : unauthorized(),
      ),
    );
    let release: (token: string) => void = () => {};
    const onUnauthorized = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));
    const { transport } = track(setup({ auth: { getToken: async () => TOKEN, onUnauthorized } }));
    const calls = [1, 2, 3].map((n) =>
      transport.request({ method: 'GET', path: uncheckedPath(`/api/x/${n}`) }),
    );
    await vi.waitFor(() => expect(onUnauthorized).toHaveBeenCalled());
    await vi.waitFor(() => expect(api.seen).toHaveLength(3));
    release(FRESH);
    await Promise.all(calls);
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(api.seen).toHaveLength(6);
  });
  it('reuses a finished refresh for a later 401 on the same stale token', async () => {
    api.use(
      http.get(URL_OF('/api/x'), ({ request }) =>
        request.headers.get('authorization') === `Bearer ${FRESH}` ? HttpResponse.json({}) : unauthorized(),
      ),
    );
    const onUnauthorized = vi.fn(async () => FRESH);
    const { transport } = track(setup({ auth: { getToken: async () => TOKEN, onUnauthorized } }));
    await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
    await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    expect(api.seen.map((r) => r.headers.get('authorization'))).toEqual([
      `Bearer ${TOKEN}`,
      `Bearer ${FRESH}`,
      `Bearer ${TOKEN}`,
      `Bearer ${FRESH}`,
    ]);
  });
});

describe('secrets', () => {
  it('never puts the token in an error message or a debug line, even when the service echoes it', async () => {
    api.use(
      http.get(URL_OF('/api/x'), ({ request }) =>
        HttpResponse.json(
          { error: { code: 'invalid_token', message: `bad token ${request.headers.get('authorization')}` } },
          { status: 401 },
        ),
      ),
      http.get(URL_OF('/api/y'), () => HttpResponse.error()),
    );
    const { transport, lines } = track(setup());
    const apiErr = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') }).catch((e) => e);
    const netErr = await transport.request({ method: 'GET', path: uncheckedPath('/api/y') }).catch((e) => e);
    expect(apiErr.message).toBe('bad token Bearer ****');
    for (const text of [apiErr.message, String(apiErr), netErr.message, String(netErr), ...lines]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(TOKEN.slice(20));
    }
    expect(lines.some((l) => l.includes('(token eyJ…****)'))).toBe(true);
  });

  /** GET /api/x answered with this x-request-id under GDS_DEBUG=1: the request id read, and stderr. */
  async function debugRun(requestId: string): Promise<{ requestId: string | undefined; stderr: string }> {
    api.use(
      http.get(URL_OF('/api/x'), () => HttpResponse.json({}, { headers: { 'x-request-id': requestId } })),
    );
    vi.stubEnv('GDS_DEBUG', '1');
    const writes: string[] = [];
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      writes.push(String(chunk));
      return true;
    });
    try {
      const { transport } = track(setup({ logger: undefined }));
      const res = await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
      return { requestId: res.requestId, stderr: writes.join('') };
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
  }

  it('logs to stderr under GDS_DEBUG=1, with the token masked', async () => {
    const writes = [(await debugRun('abc')).stderr];
    expect(writes.join('')).toContain(`gds: ← 200 GET ${URL_OF('/api/x')}`);
    expect(writes.join('')).toContain('request-id=abc');
    expect(writes.join('')).not.toContain(TOKEN);
  });

  it('strips control characters a server put in its request id before they reach stderr', async () => {
    // An HTTP header cannot carry ESC, but it can carry C1 bytes: CSI (0x9b) and OSC (0x9d) act alone.
    const hostileId = 'abc\u009b2J\u009d0;owned\u009cdef\u009b31m';
    const { requestId, stderr } = await debugRun(hostileId);
    expect(requestId).toBe(hostileId);
    expect(stderr).toContain('request-id=abcdef\n');
    expect(stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });

  it('is silent without GDS_DEBUG', async () => {
    api.use(http.get(URL_OF('/api/x'), () => HttpResponse.json({})));
    const spy = vi.spyOn(process.stderr, 'write');
    try {
      const { transport } = track(setup({ logger: undefined }));
      await transport.request({ method: 'GET', path: uncheckedPath('/api/x') });
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});

describe('abort', () => {
  it('stops during a backoff wait and sends nothing more', async () => {
    api.use(http.get(URL_OF('/api/x'), errorBody(503, 'unavailable', 'later')));
    const controller = new AbortController();
    const { transport } = track(
      setup({
        sleep: async () => {
          controller.abort();
          controller.signal.throwIfAborted();
        },
      }),
    );
    const err = await transport
      .request({ method: 'GET', path: uncheckedPath('/api/x'), signal: controller.signal })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(api.seen).toHaveLength(1);
  });

  it('sends nothing when already aborted', async () => {
    const { transport } = track(setup());
    const err = await transport
      .request({ method: 'GET', path: uncheckedPath('/api/x'), signal: AbortSignal.abort() })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(api.seen).toHaveLength(0);
  });

  it('cancels a request in flight', async () => {
    const controller = new AbortController();
    api.use(
      http.get(URL_OF('/api/slow'), async () => {
        controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return HttpResponse.json({ late: true });
      }),
    );
    const { transport } = track(setup());
    const err = await transport
      .request({ method: 'GET', path: uncheckedPath('/api/slow'), signal: controller.signal })
      .catch((e) => e);
    expect(err).toMatchObject({ name: 'AbortError' });
    expect(api.seen).toHaveLength(1);
  });
});
