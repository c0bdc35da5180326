// The server and src/contract/openapi.yaml agree on every route and every status code. Each route
// Fastify registers is an operation of the document and back; every route is called the ways the
// shared machinery answers (no credential, a malformed JSON body, a body that is not JSON or over the
// size limit) and its answers must be statuses the document lists for it; and every route is driven
// down each of its success paths (a registration and a replacement, a dry run and a detached job, …):
// the success statuses it answers must be exactly those the document lists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as httpRequest } from 'node:http';
import { BODY_LIMIT_BYTES } from '../../src/server/app.js';
import { loadContract } from '../../src/server/contract.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
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
  const response = await fetch(`${server.origin}${urlOf(url)}`, {
    method,
    redirect: 'manual',
    headers: contentType ? { 'content-type': contentType } : {},
    ...(body === undefined ? {} : { body }),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * A JSON body announced one byte over the server's limit: the server answers from the Content-Length
 * alone, so only its first byte is sent.
 */
function sendOversized(method: string, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.origin}${urlOf(url)}`, {
      method,
      headers: { 'content-type': 'application/json', 'content-length': String(BODY_LIMIT_BYTES + 1) },
    });
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
      request.destroy();
    });
    request.on('error', reject);
    request.write('{');
  });
}

describe('openapi.yaml and the server', () => {
  it('document exactly the routes Fastify registers', () => {
    const registered = new Set(server.routes.map(keyOf));
    const documented = new Set(documentedOperations().keys());
    expect([...registered].filter((r) => !documented.has(r)).sort()).toEqual([]);
    expect([...documented].filter((d) => !registered.has(d)).sort()).toEqual([]);
  });

  it('list every status a route answers without a credential, and to a malformed, non-JSON or oversized body', async () => {
    const documented = documentedOperations();
    const undocumented: string[] = [];
    for (const route of server.routes) {
      const key = keyOf(route);
      const statuses = documented.get(key) ?? [];
      const probes: Array<[string, () => Promise<number>]> = [
        ['no credential', () => send(route.method, route.path)],
      ];
      if (['POST', 'PUT', 'PATCH'].includes(route.method)) {
        probes.push(
          ['a malformed JSON body', () => send(route.method, route.path, '{"oops', 'application/json')],
          ['a body that is not JSON', () => send(route.method, route.path, '<a/>', 'application/xml')],
          ['a body over the size limit', () => sendOversized(route.method, route.path)],
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

/** One success path of a route: the call, and what the next steps need from its answer. */
interface Step {
  route: string;
  call: () => Promise<TestResponse>;
}

/**
 * A call as a browser or the OAuth client makes it: an optional form body, redirects not followed (a
 * 302/303 is the answer), and the body parsed only when it is JSON (not the HTML pages).
 */
async function raw(
  path: string,
  options: { form?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<TestResponse> {
  const response = await fetch(`${server.origin}${path}`, {
    method: options.form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      ...options.headers,
      ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(options.form ? { body: new URLSearchParams(options.form).toString() } : {}),
  });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').startsWith('application/json');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
}

describe('success statuses', () => {
  it('are exactly those the document lists, for every registered route', async () => {
    const session = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER') => server.user(role).accessToken;
    const cli = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER') => server.user(role).cliToken;
    const get = (path: string, token = cli('ADMIN')) => server.request('GET', path, { token });
    const post = (path: string, body: unknown, token = session('ADMIN'), method = 'POST') =>
      server.request(method, path, { token, body });
    const crm = server.table('crm_contacts').id;
    const customers = server.table('customers').id;
    const orders = server.table('orders').id;
    const connector = (name: string) => server.ready.connectors.find((c) => c.name === name)?.id ?? '';
    const management = async (scopes: string[]) =>
      (await server.issueToken('ADMIN', { name: `m-${scopes[0]}`, env: '*', scopes: scopes as never })).tokens
        .accessToken;
    const definer = await management(['workspace:write:definition']);
    const signaller = await management(['workspace:write:recertify']);
    const state: Record<string, string> = {};
    const keep = (key: string, value: unknown) => {
      state[key] = String(value);
    };
    /**
     * A new definition (202), the same one replacing it (`replaceId`: 200, nothing changed), then a changed
     * one replacing it (202): every success path of the route.
     */
    const registerThenReplace = (path: string, token: string, body: Record<string, unknown>): Step[] => [
      {
        route: `POST ${path}`,
        call: async () => {
          const r = await post(path, body, token);
          keep(path, r.body?.governanceId);
          return r;
        },
      },
      { route: `POST ${path}`, call: () => post(path, { ...body, replaceId: state[path] }, token) },
      {
        route: `POST ${path}`,
        call: () =>
          post(
            path,
            {
              ...body,
              content: `${String(body.content)}decision_context: changed\n`,
              replaceId: state[path],
            },
            token,
          ),
      },
    ];
    const yaml = (table: string, source: string) =>
      `table: ${table}\nsource: ${source}\ncolumns:\n  - name: id\n  - name: name\n`;

    const steps: Step[] = [
      { route: 'GET /.well-known/jwks.json', call: () => raw('/.well-known/jwks.json') },
      {
        route: 'GET /.well-known/openid-configuration',
        call: () => get('/.well-known/openid-configuration'),
      },
      {
        route: 'POST /api/integration/tokens',
        call: async () => {
          const r = await post('/api/integration/tokens', {
            name: 'rows',
            env: '*',
            scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
          });
          keep('refresh', r.body?.tokens?.refreshToken);
          return r;
        },
      },
      {
        route: 'POST /api/integration/short-lived-tokens',
        call: () =>
          post(
            '/api/integration/short-lived-tokens',
            { env: 'dev', scopes: ['workspace:write:recertify'] },
            cli('ADMIN'),
          ),
      },
      {
        route: 'POST /api/cli-tokens',
        call: () => post('/api/cli-tokens', { name: 'contract-statuses' }),
      },
      {
        route: 'POST /api/integration/refresh',
        call: async () => {
          const r = await server.request('POST', '/api/integration/refresh', {
            body: { refreshToken: state.refresh },
          });
          keep('data', r.body?.tokens?.accessToken);
          return r;
        },
      },
      {
        route: 'GET /api/tables/{tableId}/records',
        call: () => get(`/api/tables/${crm}/records`, state.data),
      },
      {
        route: 'POST /graphql',
        call: () =>
          server.request('POST', `${server.origin}/graphql`, {
            token: state.data,
            body: { query: '{ tables { id } }' },
          }),
      },
      ...[
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
      ].map((message) => ({
        route: 'POST /mcp',
        call: async () => {
          const response = await fetch(`${server.origin}/mcp`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${state.data}`,
              accept: 'application/json, text/event-stream',
              'content-type': 'application/json',
            },
            body: JSON.stringify(message),
          });
          const text = await response.text();
          return {
            status: response.status,
            headers: response.headers,
            body: text ? JSON.parse(text) : undefined,
          };
        },
      })),
      {
        route: 'POST /api/tables/{tableId}/records',
        call: async () => {
          const r = await post(
            `/api/tables/${crm}/records`,
            { email: 'p@example.com', full_name: 'P' },
            state.data,
          );
          keep('record', r.body?.id);
          return r;
        },
      },
      {
        route: 'GET /api/tables/{tableId}/records/{recordId}',
        call: () => get(`/api/tables/${crm}/records/${state.record}`, state.data),
      },
      {
        route: 'GET /api/tables/{tableId}/columns',
        call: () => get(`/api/tables/${crm}/columns`, state.data),
      },
      {
        route: 'PATCH /api/tables/{tableId}/records/{recordId}',
        call: () =>
          post(`/api/tables/${crm}/records/${state.record}`, { full_name: 'Q' }, state.data, 'PATCH'),
      },
      {
        route: 'DELETE /api/tables/{tableId}/records/{recordId}',
        call: () =>
          server.request('DELETE', `/api/tables/${crm}/records/${state.record}`, { token: state.data }),
      },
      {
        route: 'POST /api/tables/{tableId}/bulk-update',
        call: () =>
          post(
            `/api/tables/${crm}/bulk-update`,
            { records: [{ data: { email: 'b@example.com', full_name: 'B' } }] },
            state.data,
          ),
      },
      {
        route: 'POST /api/tables/{tableId}/import',
        call: () =>
          post(
            `/api/tables/${crm}/import?mode=upsert&key=email`,
            { rows: [{ email: 'i@example.com', full_name: 'I' }] },
            state.data,
          ),
      },
      { route: 'GET /api/workspace/audit-log', call: () => get('/api/workspace/audit-log') },
      { route: 'GET /api/workspace/members', call: () => get('/api/workspace/members') },
      { route: 'GET /api/me', call: () => get('/api/me') },
      { route: 'GET /api/config', call: () => get('/api/config') },
      {
        route: 'PUT /api/config/{key}',
        call: () => post('/api/config/gate_mode', { value: 'ENFORCING' }, session('OWNER'), 'PUT'),
      },
      { route: 'GET /api/config/{key}/history', call: () => get('/api/config/gate_mode/history') },
      { route: 'GET /api/tables', call: () => get('/api/tables') },
      { route: 'GET /api/held-tables', call: () => get('/api/held-tables?environment=dev') },
      {
        route: 'POST /api/artifacts/batch',
        call: () =>
          post('/api/artifacts/batch', {
            items: [{ tableId: orders, intent: { request: { meaning: 'batch' } } }],
          }),
      },
      { route: 'GET /api/tables/{tableId}/status', call: () => get(`/api/tables/${customers}/status`) },
      { route: 'GET /api/tables/{tableId}/ddl', call: () => get(`/api/tables/${customers}/ddl`) },
      { route: 'GET /api/connectors', call: () => get('/api/connectors') },
      {
        route: 'GET /api/connectors/{connectorId}/objects',
        call: () => get(`/api/connectors/${server.ready.connectors[0]?.id ?? ''}/objects`),
      },
      { route: 'GET /api/tables/{tableId}/versions', call: () => get(`/api/tables/${customers}/versions`) },
      {
        route: 'PATCH /api/tables/{tableId}/semantic-contract',
        call: () =>
          post(
            `/api/tables/${customers}/semantic-contract`,
            { grain: 'one row per customer' },
            session('STEWARD'),
            'PATCH',
          ),
      },
      {
        route: 'POST /api/tables/{tableId}/versions/restore',
        call: () =>
          post(`/api/tables/${customers}/versions/restore`, { to: 1, reason: 'back' }, session('STEWARD')),
      },
      {
        route: 'PUT /api/tables/{tableId}/gate1',
        call: () =>
          post(
            `/api/tables/${orders}/gate1`,
            {
              content:
                'customPredicates:\n  - name: shipped\n    sql: status IS NOT NULL\n    severity: SOFT_FAIL\n',
            },
            session('ADMIN'),
            'PUT',
          ),
      },
      { route: 'GET /api/tables/{tableId}/gate1', call: () => get(`/api/tables/${orders}/gate1`) },
      {
        route: 'GET /api/tables/{tableId}/gate1/versions',
        call: () => get(`/api/tables/${orders}/gate1/versions`),
      },
      {
        route: 'GET /api/tables/{tableId}/gate1/versions/{version}',
        call: () => get(`/api/tables/${orders}/gate1/versions/1`),
      },
      {
        route: 'POST /api/tables/{tableId}/gate1/suggestions',
        call: () => post(`/api/tables/${orders}/gate1/suggestions`, {}),
      },
      {
        route: 'POST /api/tables/{tableId}/gate-runs',
        call: () => post(`/api/tables/${orders}/gate-runs`, {}),
      },
      {
        route: 'POST /api/tables/{tableId}/gate-runs',
        call: async () => {
          const r = await post(`/api/tables/${orders}/gate-runs`, { gate: 2 });
          keep('job', r.body?.job?.id);
          return r;
        },
      },
      { route: 'GET /api/gate-jobs/{jobId}', call: () => get(`/api/gate-jobs/${state.job}`) },
      {
        route: 'GET /api/gate-jobs/{jobId}/result',
        call: async () => {
          await server.jobs.runPending();
          return get(`/api/gate-jobs/${state.job}/result`);
        },
      },
      {
        route: 'POST /api/gate-jobs/{jobId}/cancel',
        call: async () => {
          const queued = await post(`/api/tables/${orders}/gate-runs`, { gate: 2 });
          return post(`/api/gate-jobs/${queued.body?.job?.id}/cancel`, {});
        },
      },
      {
        route: 'POST /api/tables/{tableId}/gate-submissions',
        call: () => post(`/api/tables/${orders}/gate-submissions`, {}, session('STEWARD')),
      },
      {
        // ifStale of the table just submitted: waiting for review on a fresh proof, left as it is (200).
        route: 'POST /api/tables/{tableId}/gate-submissions',
        call: () => post(`/api/tables/${orders}/gate-submissions?ifStale=true`, {}, session('STEWARD')),
      },
      {
        route: 'POST /api/tables/{tableId}/semantic-contract/certify',
        call: () => post(`/api/tables/${orders}/semantic-contract/certify`, {}, session('STEWARD')),
      },
      {
        route: 'POST /api/tables/{tableId}/reject',
        call: async () => {
          await post(`/api/tables/${crm}/gate-submissions`, {}, session('STEWARD'));
          return post(`/api/tables/${crm}/reject`, { reason: 'not yet' }, session('STEWARD'));
        },
      },
      {
        route: 'GET /api/tables/{tableId}/bundle',
        call: async () => {
          const r = await get(`/api/tables/${orders}/bundle`, cli('STEWARD'));
          keep('bundle', JSON.stringify(r.body));
          return r;
        },
      },
      {
        route: 'POST /api/bundles',
        call: () =>
          post(
            '/api/bundles',
            { ...JSON.parse(state.bundle ?? '{}'), connectorId: connector('warehouse-staging') },
            session('STEWARD'),
          ),
      },
      {
        route: 'POST /api/bundles',
        call: () =>
          post(
            '/api/bundles',
            { ...JSON.parse(state.bundle ?? '{}'), connectorId: connector('warehouse-staging') },
            session('STEWARD'),
          ),
      },
      {
        route: 'POST /api/tables/{tableId}/promotions',
        call: () => post(`/api/tables/${customers}/promotions`, { to: 'production' }, session('OWNER')),
      },
      {
        route: 'POST /api/tables/{tableId}/promotions',
        call: () => post(`/api/tables/${orders}/promotions`, { to: 'production' }, session('OWNER')),
      },
      {
        route: 'GET /api/tables/{tableId}/semantic-contract',
        call: () => get(`/api/tables/${customers}/semantic-contract`),
      },
      { route: 'GET /api/tables/{tableId}/definition', call: () => get(`/api/tables/${orders}/definition`) },
      { route: 'GET /api/tables/{tableId}/gate-jobs', call: () => get(`/api/tables/${orders}/gate-jobs`) },
      ...registerThenReplace('/api/workspace/definitions', definer, {
        filename: 'p.yml',
        content: yaml('products', 'analytics_dev.products'),
        mimeType: 'yaml',
        connectorId: connector('warehouse-dev'),
      }),
      ...registerThenReplace('/api/artifacts', cli('ADMIN'), {
        filename: 's.yml',
        content: yaml('stages', 'analytics_dev.stg_pipedrive__stages'),
      }),
      {
        route: 'POST /api/artifacts/dry-run',
        call: () =>
          post(
            '/api/artifacts/dry-run',
            {
              filename: 's.yml',
              content: yaml('stages', 'analytics_dev.stg_pipedrive__stages'),
              replaceId: state['/api/artifacts'],
            },
            cli('ADMIN'),
          ),
      },
      {
        route: 'PUT /api/tables/{tableId}/project',
        call: () =>
          post(
            `/api/tables/${state['/api/artifacts']}/project`,
            { project: 'shop@con_dev', previous: null },
            cli('ADMIN'),
            'PUT',
          ),
      },
      {
        route: 'DELETE /api/tables/{tableId}',
        call: () =>
          server.request('DELETE', `/api/tables/${state['/api/artifacts']}`, { token: cli('ADMIN') }),
      },
      {
        route: 'POST /api/workspace/recertify',
        call: () =>
          post('/api/workspace/recertify', { tables: ['customers'], environmentLabel: 'dev' }, signaller),
      },
      {
        route: 'GET /api/recertification-requests',
        call: async () => {
          const r = await get('/api/recertification-requests');
          keep('request', r.body?.requests?.[0]?.id);
          return r;
        },
      },
      {
        route: 'GET /api/recertification-requests/{requestId}/signals',
        call: () => get(`/api/recertification-requests/${state.request}/signals`),
      },
      {
        route: 'GET /api/recertification-signals',
        call: () => get(`/api/recertification-signals?requestId=${state.request}`),
      },
      {
        route: 'GET /dashboard/recertification-requests/{requestId}',
        call: () =>
          raw(`/dashboard/recertification-requests/${state.request}`, {
            headers: { authorization: `Bearer ${cli('MEMBER')}` },
          }),
      },
      {
        route: 'GET /dashboard/recertification-requests/{requestId}',
        call: () =>
          raw(`/dashboard/recertification-requests/${state.request}`, { headers: { accept: 'text/html' } }),
      },
      {
        route: 'GET /api/notifications',
        call: () => get('/api/notifications?limit=10'),
      },
      {
        route: 'POST /api/recertification-requests/{requestId}/dismiss',
        call: () => post(`/api/recertification-requests/${state.request}/dismiss`, {}, session('STEWARD')),
      },
      {
        route: 'POST /oauth/device/code',
        call: async () => {
          const r = await raw('/oauth/device/code', { form: { client_id: 'gds-cli' } });
          keep('userCode', r.body?.user_code);
          keep('deviceCode', r.body?.device_code);
          return r;
        },
      },
      { route: 'GET /device', call: () => raw('/device') },
      {
        route: 'POST /device',
        call: () =>
          raw('/device', {
            form: { user_code: state.userCode ?? '', email: 'member@example.com', action: 'approve' },
          }),
      },
      {
        route: 'POST /oauth/token',
        call: () =>
          raw('/oauth/token', {
            form: {
              client_id: 'gds-cli',
              grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
              device_code: state.deviceCode ?? '',
            },
          }),
      },
      // The dashboard (a page for a person, or a redirect to sign in for a browser without one).
      {
        route: 'GET /dashboard',
        call: () => raw('/dashboard', { headers: { authorization: `Bearer ${cli('MEMBER')}` } }),
      },
      { route: 'GET /dashboard', call: () => raw('/dashboard', { headers: { accept: 'text/html' } }) },
      {
        route: 'GET /dashboard/tables/{tableId}',
        call: () =>
          raw(`/dashboard/tables/${customers}`, { headers: { authorization: `Bearer ${cli('MEMBER')}` } }),
      },
      {
        route: 'GET /dashboard/tables/{tableId}',
        call: () => raw(`/dashboard/tables/${customers}`, { headers: { accept: 'text/html' } }),
      },
      { route: 'GET /dashboard/sign-in', call: () => raw('/dashboard/sign-in') },
      {
        route: 'POST /dashboard/sign-in',
        call: () =>
          raw('/dashboard/sign-in', {
            form: { email: 'member@example.com', next: '/dashboard' },
            headers: { origin: server.origin },
          }),
      },
      { route: 'POST /dashboard/sign-out', call: () => raw('/dashboard/sign-out', { form: {} }) },
      {
        route: 'GET /dashboard/tokens',
        call: () => raw('/dashboard/tokens', { headers: { authorization: `Bearer ${cli('MEMBER')}` } }),
      },
      {
        route: 'GET /dashboard/tokens',
        call: () => raw('/dashboard/tokens', { headers: { accept: 'text/html' } }),
      },
      {
        route: 'POST /dashboard/tokens/revoke',
        call: async () => {
          const owner = server.user('OWNER');
          const issued = await server.issueToken('OWNER', {
            name: 'dashboard-revoke',
            env: '*',
            scopes: ['workspace:read:audit'],
          });
          const signedIn = await raw('/dashboard/sign-in', {
            form: { email: owner.email },
            headers: { origin: server.origin },
          });
          const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
          const page = await raw('/dashboard/tokens', { headers: { cookie } });
          const csrf = /name="csrf" value="([^"]+)"/.exec(String(page.body))?.[1] ?? '';
          return raw('/dashboard/tokens/revoke', {
            form: { token: issued.id, csrf },
            headers: { cookie, origin: server.origin },
          });
        },
      },
      // Revocation last: it ends the credentials it names.
      { route: 'GET /api/integration/tokens', call: () => get('/api/integration/tokens') },
      {
        route: 'POST /api/integration/tokens/revoke',
        call: async () => {
          const tokens = (await get('/api/integration/tokens')).body.tokens as Array<{ id: string }>;
          return post('/api/integration/tokens/revoke', { token: tokens[0]?.id });
        },
      },
      { route: 'GET /api/cli-tokens', call: () => get('/api/cli-tokens') },
      {
        route: 'POST /api/cli-tokens/{tokenId}/revoke',
        call: async () => {
          const member = server.user('MEMBER').userId;
          const tokens = (await get(`/api/cli-tokens?userId=${member}`)).body.tokens as Array<{ id: string }>;
          return post(`/api/cli-tokens/${tokens[0]?.id}/revoke`, {});
        },
      },
      { route: 'POST /api/auth/revoke', call: () => post('/api/auth/revoke', {}, session('STEWARD')) },
    ];

    // Success is any answer below 400 (a redirect is a page's success path too). A step whose route this
    // server does not register is skipped: the route check above already fails on such a difference.
    const registered = new Set(server.routes.map(keyOf));
    const answered = new Map<string, Set<string>>();
    const failed: string[] = [];
    for (const step of steps.filter((s) => registered.has(s.route))) {
      const response = await step.call();
      if (response.status >= 400) {
        failed.push(`${step.route}: ${response.status} ${JSON.stringify(response.body).slice(0, 300)}`);
        continue;
      }
      const statuses = answered.get(step.route) ?? new Set<string>();
      statuses.add(String(response.status));
      answered.set(step.route, statuses);
    }
    expect(failed).toEqual([]);
    const documented = documentedOperations();
    const mismatches: string[] = [];
    for (const route of registered) {
      const listed = (documented.get(route) ?? []).filter((s) => /^[23]/.test(s)).sort();
      const seen = [...(answered.get(route) ?? [])].sort();
      // GET /mcp has no success: the stateless MCP server opens no stream (405).
      if (seen.length === 0 && listed.length > 0) mismatches.push(`${route}: no success path here; add one`);
      else if (listed.join() !== seen.join())
        mismatches.push(`${route}: answers ${seen.join()}, documents ${listed.join()}`);
    }
    expect(mismatches).toEqual([]);
  });
});
