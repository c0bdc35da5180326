// The service functions the network commands call, each with a real client over msw stubs (every stub
// must be used, any other request fails the test): what goes over the wire and what comes back.
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { AuditEntry, Member } from '../../src/contract/types.js';
import { callApi } from '../../src/services/api-call.js';
import { auditEntryPages, listAuditEntries } from '../../src/services/audit.js';
import { listMembers } from '../../src/services/members.js';
import { issueRequest, issueToken, refreshToken } from '../../src/services/tokens.js';
import { BASE, useMockApi } from '../client/mock-api.js';

const api = useMockApi();
const TOKEN = 'cli_servicesTestToken0001';
const at = (path: string) => `${BASE}${path}`;

let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});
function newClient(): ApiClient {
  client = createApiClient({
    baseUrl: BASE,
    auth: staticToken(TOKEN),
    sleep: async () => {},
    logger: () => {},
  });
  return client;
}

function member(email: string, role: Member['role']): Member {
  return { userId: `usr_${email}`, email, role, envScope: ['dev'] };
}

function entry(n: number): AuditEntry {
  return {
    id: `aud_${n}`,
    userId: 'usr_1',
    tableId: '',
    action: 'RECORD_CREATED',
    resource: 'record',
    environmentLabel: 'dev',
    gateModeAtEvaluation: '',
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 100 - n)).toISOString(),
  };
}

describe('listMembers', () => {
  it('returns the members owners first, then by role and e-mail', async () => {
    api.use(
      http.get(at('/api/workspace/members'), () =>
        HttpResponse.json({
          members: [
            member('zed@x.io', 'MEMBER'),
            member('bob@x.io', 'ADMIN'),
            member('amy@x.io', 'MEMBER'),
            member('own@x.io', 'OWNER'),
            member('stu@x.io', 'STEWARD'),
          ],
        }),
      ),
    );
    const members = await listMembers(newClient());
    expect(members.map((m) => m.email)).toEqual(['own@x.io', 'bob@x.io', 'stu@x.io', 'amy@x.io', 'zed@x.io']);
    expect(api.seen[0]?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
  });
});

describe('listAuditEntries', () => {
  it('one page: sends the filters and the limit, says when there is more', async () => {
    api.use(
      http.get(at('/api/workspace/audit-log'), () =>
        HttpResponse.json({ entries: [entry(1), entry(2)], nextCursor: 'c2' }),
      ),
    );
    const seen: AuditEntry[] = [];
    const result = await listAuditEntries(
      newClient(),
      { eventType: 'RECORD_CREATED', since: '2026-01-01T00:00:00.000Z', limit: 2 },
      (e) => seen.push(e),
    );
    expect(result).toEqual({ count: 2, more: true });
    expect(seen.map((e) => e.id)).toEqual(['aud_1', 'aud_2']);
    const query = Object.fromEntries(api.seen[0]?.url.searchParams ?? []);
    expect(query).toEqual({ eventType: 'RECORD_CREATED', since: '2026-01-01T00:00:00.000Z', limit: '2' });
  });

  it('the last page: more is false', async () => {
    api.use(
      http.get(at('/api/workspace/audit-log'), () => HttpResponse.json({ entries: [], nextCursor: '' })),
    );
    expect(await listAuditEntries(newClient(), {}, () => undefined)).toEqual({ count: 0, more: false });
    expect(api.seen[0]?.url.search).toBe('');
  });

  it('all: follows every cursor, hands on each entry once in order, with the filters on every page', async () => {
    const pages: Record<string, { entries: AuditEntry[]; nextCursor: string }> = {
      '': { entries: [entry(1), entry(2)], nextCursor: 'c2' },
      c2: { entries: [entry(3), entry(4)], nextCursor: 'c3' },
      c3: { entries: [entry(5)], nextCursor: '' },
    };
    api.use(
      http.get(at('/api/workspace/audit-log'), ({ request }) =>
        HttpResponse.json(pages[new URL(request.url).searchParams.get('cursor') ?? '']),
      ),
    );
    const order: string[] = [];
    const result = await listAuditEntries(newClient(), { all: true, eventType: 'X', limit: 3 }, (e) =>
      order.push(`${e.id}@${api.seen.length}`),
    );
    expect(result).toEqual({ count: 5, more: false });
    // Each entry is handed on before the next page is asked for: streaming, not collecting.
    expect(order).toEqual(['aud_1@1', 'aud_2@1', 'aud_3@2', 'aud_4@2', 'aud_5@3']);
    for (const request of api.seen) {
      expect(request.url.searchParams.get('eventType')).toBe('X');
      expect(request.url.searchParams.get('limit')).toBe('200');
    }
  });
});

describe('auditEntryPages', () => {
  it('yields each page of 200 as it arrives, before the next is asked for, with the filters', async () => {
    const page = (from: number, count: number) => Array.from({ length: count }, (_, i) => entry(from + i));
    const pages: Record<string, { entries: AuditEntry[]; nextCursor: string }> = {
      '': { entries: page(0, 200), nextCursor: 'c2' },
      c2: { entries: page(200, 200), nextCursor: 'c3' },
      c3: { entries: page(400, 5), nextCursor: '' },
    };
    api.use(
      http.get(at('/api/workspace/audit-log'), ({ request }) =>
        HttpResponse.json(pages[new URL(request.url).searchParams.get('cursor') ?? '']),
      ),
    );
    const yielded: string[] = [];
    for await (const { rows } of auditEntryPages(newClient(), { eventType: 'X' }))
      yielded.push(`${rows.length} from ${rows[0]?.id}@${api.seen.length}`);
    expect(yielded).toEqual(['200 from aud_0@1', '200 from aud_200@2', '5 from aud_400@3']);
    for (const request of api.seen) expect(request.url.searchParams.get('eventType')).toBe('X');
  });
});

describe('tokens', () => {
  const bundle = {
    accessToken: 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ0b2sifQ.c2ln',
    refreshToken: 'rt_1.s3cr3t',
    expiresAt: '2026-11-22T15:00:00.000Z',
    refreshExpiresAt: '2026-12-22T14:00:00.000Z',
  };

  it('issue: grants of one table are merged, read before write', async () => {
    const bodies: unknown[] = [];
    api.use(
      http.post(at('/api/integration/tokens'), async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json(
          {
            id: 'itk_1',
            name: 'n',
            clientToken: 'tf_x',
            audience: 'DATA-API',
            env: 'dev',
            scopes: [],
            tokens: bundle,
          },
          { status: 201 },
        );
      }),
    );
    const issued = await issueToken(newClient(), {
      name: 'n',
      env: 'dev',
      tables: [
        { tableId: 't_1', permissions: ['write'] },
        { tableId: 't_2', permissions: ['read'] },
        { tableId: 't_1', permissions: ['read'] },
      ],
    });
    expect(issued.tokens).toEqual(bundle);
    expect(bodies).toEqual([
      {
        name: 'n',
        env: 'dev',
        scopes: [
          { tableId: 't_1', permissions: ['read', 'write'] },
          { tableId: 't_2', permissions: ['read'] },
        ],
      },
    ]);
  });

  it('issue: workspace scopes are sent once each', () => {
    expect(
      issueRequest({ name: 'm', env: '*', scopes: ['workspace:read:audit', 'workspace:read:audit'] }),
    ).toEqual({ name: 'm', env: '*', scopes: ['workspace:read:audit'] });
  });

  it.each([
    [
      'both kinds',
      {
        tables: [{ tableId: 't', permissions: ['read' as const] }],
        scopes: ['workspace:read:audit' as const],
      },
    ],
    ['neither', {}],
  ])('issue with %s is a usage error before any request', async (_name, kinds) => {
    const failure = await issueToken(newClient(), { name: 'n', env: 'dev', ...kinds }).catch(
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(CliError);
    expect(failure).toMatchObject({ exitCode: 2, code: 'token_audience' });
    expect(api.seen).toEqual([]);
  });

  it('refresh: sends the trimmed refresh token and no Authorization header', async () => {
    const bodies: unknown[] = [];
    api.use(
      http.post(at('/api/integration/refresh'), async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json({ tokens: bundle });
      }),
    );
    expect(await refreshToken(newClient(), ' rt_0.old\n')).toEqual({ tokens: bundle });
    expect(bodies).toEqual([{ refreshToken: 'rt_0.old' }]);
    expect(api.seen[0]?.headers.get('authorization')).toBeNull();
  });
});

describe('callApi', () => {
  it('an error answer: the body comes back with the token masked in its details', async () => {
    api.use(
      http.get(at('/api/workspace/members'), ({ request }) =>
        HttpResponse.json(
          {
            error: { code: 'nope', message: 'No.', details: { echo: request.headers.get('authorization') } },
          },
          { status: 403 },
        ),
      ),
    );
    const result = await callApi(newClient(), BASE, { path: '/api/workspace/members' });
    expect(result).toEqual({
      status: 403,
      body: { error: { code: 'nope', message: 'No.', details: { echo: 'Bearer ****' } } },
      exitCode: 4,
      headers: expect.arrayContaining([['content-type', 'application/json']]),
    });
  });

  it('GET: fields become the query, headers are sent, the body comes back parsed', async () => {
    api.use(
      http.get(at('/api/workspace/audit-log'), () => HttpResponse.json({ entries: [], nextCursor: '' })),
    );
    const result = await callApi(newClient(), BASE, {
      path: '/api/workspace/audit-log?eventType=A',
      method: 'GET',
      fields: [
        ['limit', 5],
        ['ok', true],
      ],
      headers: [['X-Trace', 'abc']],
    });
    expect(result).toEqual({
      status: 200,
      body: { entries: [], nextCursor: '' },
      exitCode: 0,
      headers: expect.any(Array),
    });
    const sent = api.seen[0];
    expect(Object.fromEntries(sent?.url.searchParams ?? [])).toEqual({
      eventType: 'A',
      limit: '5',
      ok: 'true',
    });
    expect(sent?.headers.get('x-trace')).toBe('abc');
    expect(sent?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
  });

  it('fields without a method: a POST with a JSON body of typed values', async () => {
    const bodies: unknown[] = [];
    api.use(
      http.post(at('/api/tables/t_1/records'), async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json({ id: 'rec_1' }, { status: 201 });
      }),
    );
    const result = await callApi(newClient(), BASE, {
      path: '/api/tables/t_1/records',
      fields: [
        ['name', 'Ada'],
        ['age', 36],
        ['vip', null],
      ],
    });
    expect(result).toEqual({ status: 201, body: { id: 'rec_1' }, exitCode: 0, headers: expect.any(Array) });
    expect(bodies).toEqual([{ name: 'Ada', age: 36, vip: null }]);
  });

  it('an --input body: sent as is, and the fields go into the query', async () => {
    const bodies: unknown[] = [];
    api.use(
      http.post(at('/api/tables/t_1/import'), async ({ request }) => {
        bodies.push(await request.json());
        return HttpResponse.json({ inserted: 1, updated: 0 });
      }),
    );
    await callApi(newClient(), BASE, {
      path: '/api/tables/t_1/import',
      body: { rows: [{ email: 'a@x.io' }] },
      fields: [
        ['mode', 'upsert'],
        ['key', 'email'],
      ],
    });
    expect(bodies).toEqual([{ rows: [{ email: 'a@x.io' }] }]);
    expect(api.seen[0]?.url.search).toBe('?mode=upsert&key=email');
  });

  it('a body on a GET is a usage error before any request', async () => {
    const failure = await callApi(newClient(), BASE, { path: '/api/x', method: 'GET', body: {} }).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ exitCode: 2, code: 'body_on_get' });
    expect(api.seen).toEqual([]);
  });

  it('a 204 gives no body', async () => {
    api.use(http.delete(at('/api/tables/t_1/records/r_1'), () => new HttpResponse(null, { status: 204 })));
    const result = await callApi(newClient(), BASE, {
      path: '/api/tables/t_1/records/r_1',
      method: 'DELETE',
    });
    expect(result).toEqual({ status: 204, body: undefined, exitCode: 0, headers: expect.any(Array) });
  });

  it.each([
    [403, { code: 'missing_scope', message: 'No.', details: { requiredScope: 'workspace:read:audit' } }, 4],
    [404, { code: 'route_not_found', message: 'No endpoint.' }, 5],
    [409, { code: 'conflict', message: 'Taken.' }, 6],
    [422, { code: 'refused', message: 'Rules.' }, 7],
  ])(
    'a %i answer is a result with the error body and the exit code of its status',
    async (status, error, exitCode) => {
      api.use(http.get(at('/api/x'), () => HttpResponse.json({ error }, { status })));
      expect(await callApi(newClient(), BASE, { path: '/api/x' })).toEqual({
        status,
        body: { error },
        exitCode,
        headers: expect.arrayContaining([['content-type', 'application/json']]),
      });
    },
  );

  it('the client sets Authorization itself even when a header of that name is handed in', async () => {
    api.use(http.get(at('/api/x'), () => HttpResponse.json({})));
    await callApi(newClient(), BASE, { path: '/api/x', headers: [['Authorization', 'Bearer other']] });
    expect(api.seen[0]?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
  });

  it('a 200 whose body is not JSON is thrown (the session makes it exit 9), not printed as a success', async () => {
    api.use(http.get(at('/api/x'), () => new HttpResponse('<html>', { status: 200 })));
    const failure = await callApi(newClient(), BASE, { path: '/api/x' }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: 'ApiError', status: 200, code: 'invalid_response' });
  });

  it('api/x (no leading /) is the path /api/x of the service, as gh api takes repos/x/y', async () => {
    api.use(http.get(at('/api/x'), () => HttpResponse.json({ ok: true })));
    expect(await callApi(newClient(), BASE, { path: 'api/x' })).toMatchObject({
      status: 200,
      body: { ok: true },
    });
  });

  it.each(['https://elsewhere.example/api/x', '//elsewhere.example/api/x', 'mailto:x'])(
    'refuses %s before sending anything (the token never leaves the service host)',
    async (path) => {
      const failure = await callApi(newClient(), BASE, { path }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(CliError);
      expect(failure).toMatchObject({ exitCode: 2, code: 'invalid_path' });
      expect(api.seen).toEqual([]);
    },
  );
});
