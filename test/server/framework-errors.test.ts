// Requests refused before any route runs, by Node's HTTP parser (headers or URL over its limit, not HTTP)
// or by Fastify's router (a path segment too long, a path that does not decode), answer in the contract's
// error body `{"error":{"code","message"}}` as every other refusal does, never in Fastify's own shape.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
/** The process warnings while the server starts (a deprecated Fastify option would print one on stderr). */
const warnings: string[] = [];
const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
beforeAll(async () => {
  process.on('warning', onWarning);
  server = await startTestServer();
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
});
afterAll(async () => {
  await server?.close();
});

it('the server starts without a framework warning on stderr', () => {
  expect(warnings.filter((w) => w.startsWith('FastifyWarning'))).toEqual([]);
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Sends `request` as raw bytes on a new connection and reads the answer until the server closes it. */
function rawRequest(request: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) => (chunks.length > 0 ? undefined : reject(error)));
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const at = line.indexOf(':');
          return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()];
        }),
      );
      const body = rest.join('\r\n\r\n');
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // left as text: the assertions below say what was expected
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: parsed });
    });
  });
}

const host = () => new URL(server.url).host;
/** A GET of a REST path (`/api/…`), under the REST base URL's stage segment as every REST path is. */
const get = (path: string, extra = '') =>
  rawRequest(
    `GET ${new URL(server.url).pathname.replace(/\/$/, '')}${path} HTTP/1.1\r\nHost: ${host()}\r\n${extra}Connection: close\r\n\r\n`,
  );

/** The contract's Error body with this code, and nothing of Fastify's own shape. */
function expectErrorBody(answer: RawAnswer, status: number, code: string): string {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(answer.body as object)).toEqual(['error']);
  expect((answer.body as { error: unknown }).error).toMatchObject({ code, message: expect.any(String) });
  return (answer.body as { error: { message: string } }).error.message;
}

describe("Node's and Fastify's own refusals carry the contract's error body", () => {
  it('431 headers_too_large: a header past the limit', async () => {
    const answer = await get('/api/me', `Cookie: ${'a'.repeat(20_000)}\r\n`);
    expect(expectErrorBody(answer, 431, 'headers_too_large')).toContain('bytes');
  });

  it('431 headers_too_large: a URL past the limit (the request line counts with the headers)', async () => {
    const answer = await get(`/api/tables?name=${'x'.repeat(20_000)}`);
    expectErrorBody(answer, 431, 'headers_too_large');
  });

  it('404 route_not_found echoing the path: nosniff, so no browser reads the JSON as HTML', async () => {
    const answer = await get('/api/nope%3Cscript%3Ex');
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('414 uri_too_long: a path id longer than the router takes, with a request id', async () => {
    const answer = await get(`/api/tables/${'t'.repeat(300)}`);
    expect(expectErrorBody(answer, 414, 'uri_too_long')).toContain('100 characters');
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('400 invalid_url: a path that does not percent-decode', async () => {
    expectErrorBody(await get('/api/tables/%E0%A4%A'), 400, 'invalid_url');
  });

  it('400 invalid_request: bytes that are not HTTP', async () => {
    expectErrorBody(await rawRequest('NOT HTTP AT ALL\r\n\r\n'), 400, 'invalid_request');
  });

  it('a request within the limits is answered by its route as before', async () => {
    const answer = await get(
      '/api/tables/nope/status',
      `Authorization: Bearer ${server.user('OWNER').cliToken}\r\n`,
    );
    expectErrorBody(answer, 404, 'table_not_found');
  });
});
