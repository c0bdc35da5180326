// msw for the client tests: unexpected requests fail the call and the test, every handler must be
// used, and every request that went out is recorded (method, URL, headers) for assertions.
import { setupServer } from 'msw/node';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { RequestHandler } from 'msw';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';

export const BASE = 'https://api.test/stage';

export interface SeenRequest {
  method: string;
  url: URL;
  headers: Headers;
}

export function useMockApi() {
  const server = setupServer();
  const seen: SeenRequest[] = [];
  const unhandled: string[] = [];

  beforeAll(() => {
    server.listen({ onUnhandledFrame: 'error' });
    server.events.on('request:start', ({ request }) => {
      seen.push({ method: request.method, url: new URL(request.url), headers: request.headers });
    });
    server.events.on('request:unhandled', ({ request }) => {
      unhandled.push(`${request.method} ${request.url}`);
    });
  });

  afterEach(() => {
    const unused = server
      .listHandlers()
      .filter((h): h is RequestHandler => 'isUsed' in h && !h.isUsed)
      .map((h) => h.info.header);
    server.resetHandlers();
    seen.length = 0;
    const strays = unhandled.splice(0);
    expect(strays, 'requests no handler expected').toEqual([]);
    expect(unused, 'handlers never used').toEqual([]);
  });

  afterAll(() => server.close());

  return {
    /** Handlers for one test; each must be hit before the test ends. */
    use: (...handlers: RequestHandler[]) => server.use(...handlers),
    /** Requests sent so far in this test, in order. */
    seen,
  };
}

/**
 * A real client over the mock API with a static token and no waiting; each test's clients are closed after it.
 * Call at the top of a test file, beside useMockApi.
 */
export function useMockClient(token: string): () => ApiClient {
  const clients: ApiClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });
  return () => {
    const client = createApiClient({
      baseUrl: BASE,
      auth: staticToken(token),
      sleep: async () => {},
      logger: () => {},
    });
    clients.push(client);
    return client;
  };
}
