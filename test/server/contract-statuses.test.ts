// The server and src/contract/openapi.yaml agree on every route and every status code. Each route
// Fastify registers is an operation of the document and back; then every route is called the ways
// the shared machinery answers (no credential, a malformed JSON body, a body that is not JSON) and
// its answers must be statuses the document lists for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../src/server/contract.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
});

afterAll(async () => {
  await server?.close();
});

const contract = loadContract();
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** `METHOD /path/{param}` of every operation in the document, with its documented statuses. */
function documentedOperations(): Map<string, string[]> {
  const operations = new Map<string, string[]>();
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const responses = (operation as { responses?: Record<string, unknown> }).responses ?? {};
      operations.set(`${method.toUpperCase()} ${path}`, Object.keys(responses));
    }
  }
  return operations;
}

const keyOf = (route: { method: string; url: string }) =>
  `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`;

/** A concrete URL for a route: path parameters filled with an id that exists, so the route is reached. */
function urlOf(url: string): string {
  return url
    .replace(':tableId', server.table('crm_contacts').id)
    .replace(':recordId', 'rec_missing')
    .replace(':jobId', 'job_missing')
    .replace(':requestId', 'rcr_missing')
    .replace(':key', 'gate_mode')
    .replace(':version', '1');
}

async function send(method: string, url: string, body?: string, contentType?: string): Promise<number> {
  const response = await fetch(`${server.url}${urlOf(url)}`, {
    method,
    headers: contentType ? { 'content-type': contentType } : {},
    ...(body === undefined ? {} : { body }),
  });
  await response.arrayBuffer();
  return response.status;
}

describe('openapi.yaml and the server', () => {
  it('document exactly the routes Fastify registers', () => {
    const registered = new Set(server.routes.map(keyOf));
    const documented = new Set(documentedOperations().keys());
    expect([...registered].filter((r) => !documented.has(r)).sort()).toEqual([]);
    expect([...documented].filter((d) => !registered.has(d)).sort()).toEqual([]);
  });

  it('list every status a route answers without a credential, to a malformed body and to a body that is not JSON', async () => {
    const documented = documentedOperations();
    const undocumented: string[] = [];
    for (const route of server.routes) {
      const key = keyOf(route);
      const statuses = documented.get(key) ?? [];
      const probes: Array<[string, () => Promise<number>]> = [
        ['no credential', () => send(route.method, route.url)],
      ];
      if (['POST', 'PUT', 'PATCH'].includes(route.method)) {
        probes.push(
          ['a malformed JSON body', () => send(route.method, route.url, '{"oops', 'application/json')],
          ['a body that is not JSON', () => send(route.method, route.url, '<a/>', 'application/xml')],
        );
      }
      for (const [what, probe] of probes) {
        const status = await probe();
        if (!statuses.includes(String(status))) undocumented.push(`${key} answers ${status} to ${what}`);
      }
    }
    expect(undocumented).toEqual([]);
    // The bodies of these answers are checked too: afterAll's close() fails on any that breaks the document.
  });
});
