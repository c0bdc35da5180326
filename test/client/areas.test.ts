// Every area method sends the spec's method, path, query and body, and returns the contract's answer.
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntry, TableRecord } from '../../src/contract/types.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import { BASE, useMockApi } from './mock-api.js';

const api = useMockApi();
const SESSION = 'cli_5e55i0n70k3n0000aaaa';
const at = (path: string) => `${BASE}${path}`;

let client: ApiClient;
afterEach(async () => client?.close());
function newClient(): ApiClient {
  client = createApiClient({
    baseUrl: BASE,
    auth: staticToken(SESSION),
    sleep: async () => {},
    logger: () => {},
  });
  return client;
}

/** A resolver answering `answer` (with `status`) that keeps the JSON body of each request in `bodies`. */
function answering(answer: unknown, status = 200) {
  const bodies: unknown[] = [];
  const resolver = async ({ request }: { request: Request }) => {
    bodies.push(await request.json());
    return HttpResponse.json(answer as object, { status });
  };
  return { bodies, resolver };
}

const bundle = {
  accessToken: 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ0b2sifQ.c2ln',
  refreshToken: 'tok_1.s3cr3t',
  expiresAt: '2026-11-22T15:00:00.000Z',
  refreshExpiresAt: '2026-12-22T14:00:00.000Z',
};

describe('integration tokens', () => {
  it('issues a token with the session token and returns the credentials', async () => {
    const issued = {
      id: 'tok_1',
      name: 'nightly',
      clientToken: 'tf_abcdef0123456789',
      audience: 'DATA-API',
      env: 'dev',
      scopes: ['tables:orders:read'],
      tokens: bundle,
    };
    const stub = answering(issued, 201);
    api.use(http.post(at('/api/integration/tokens'), stub.resolver));
    const request = {
      name: 'nightly',
      env: 'dev',
      scopes: [{ tableId: 't1', permissions: ['read' as const] }],
    };
    await expect(newClient().tokens.issue(request)).resolves.toEqual(issued);
    expect(stub.bodies).toEqual([request]);
    expect(api.seen[0]?.headers.get('authorization')).toBe(`Bearer ${SESSION}`);
  });

  it('refreshes with the refresh token in the body and no Authorization header', async () => {
    const stub = answering({ tokens: bundle });
    api.use(http.post(at('/api/integration/refresh'), stub.resolver));
    await expect(newClient().tokens.refresh('tok_1.0ld53cr3t')).resolves.toEqual({ tokens: bundle });
    expect(stub.bodies).toEqual([{ refreshToken: 'tok_1.0ld53cr3t' }]);
    expect(api.seen[0]?.headers.has('authorization')).toBe(false);
  });

  it('never retries a refresh that lost its connection (the token may be spent)', async () => {
    api.use(http.post(at('/api/integration/refresh'), () => HttpResponse.error()));
    await expect(newClient().tokens.refresh('tok_1.s3cr3t')).rejects.toMatchObject({ name: 'NetworkError' });
    expect(api.seen).toHaveLength(1);
  });
});

describe('records', () => {
  it('lists one page with page, limit and search', async () => {
    const page = { records: [{ id: 'r1', name: 'a' }], page: 2, limit: 10, nextCursor: 'c2' };
    api.use(http.get(at('/api/tables/t%2F1/records'), () => HttpResponse.json(page)));
    await expect(newClient().records.list('t/1', { page: 2, limit: 10, search: 'a b' })).resolves.toEqual(
      page,
    );
    expect(api.seen[0]?.url.search).toBe('?page=2&limit=10&search=a+b');
  });

  it('creates, patches and deletes a record', async () => {
    const created = answering({ id: 'r9', name: 'n', qty: 1 }, 201);
    const patched = answering({ id: 'r9', name: 'n', qty: 2 });
    api.use(
      http.post(at('/api/tables/t1/records'), created.resolver),
      http.patch(at('/api/tables/t1/records/r9'), patched.resolver),
      http.delete(at('/api/tables/t1/records/r9'), () => new HttpResponse(null, { status: 204 })),
    );
    const c = newClient();
    await expect(c.records.create('t1', { name: 'n', qty: 1 })).resolves.toEqual({
      id: 'r9',
      name: 'n',
      qty: 1,
    });
    await expect(c.records.patch('t1', 'r9', { qty: 2 })).resolves.toEqual({ id: 'r9', name: 'n', qty: 2 });
    await expect(c.records.delete('t1', 'r9')).resolves.toBeUndefined();
    expect(created.bodies).toEqual([{ name: 'n', qty: 1 }]);
    expect(patched.bodies).toEqual([{ qty: 2 }]);
    expect(api.seen.map((r) => r.method)).toEqual(['POST', 'PATCH', 'DELETE']);
  });

  it('reports a missing record on delete as a 404 ApiError', async () => {
    api.use(
      http.delete(at('/api/tables/t1/records/gone'), () =>
        HttpResponse.json(
          { error: { code: 'record_not_found', message: 'Record gone not found' } },
          { status: 404 },
        ),
      ),
    );
    await expect(newClient().records.delete('t1', 'gone')).rejects.toMatchObject({
      name: 'ApiError',
      status: 404,
      code: 'record_not_found',
    });
  });

  it('bulk-updates with the records envelope', async () => {
    const result = {
      created: 1,
      updated: 1,
      records: [
        { id: 'r1', qty: 3 },
        { id: 'r2', qty: 4 },
      ],
    };
    const stub = answering(result);
    api.use(http.post(at('/api/tables/t1/bulk-update'), stub.resolver));
    const items = [{ id: 'r1', data: { qty: 3 } }, { data: { qty: 4 } }];
    await expect(newClient().records.bulkUpdate('t1', items)).resolves.toEqual(result);
    expect(stub.bodies).toEqual([{ records: items }]);
  });

  it('imports rows in upsert mode on a key column', async () => {
    const stub = answering({ inserted: 1, updated: 1 });
    api.use(http.post(at('/api/tables/t1/import'), stub.resolver));
    const rows = [
      { sku: 'a', qty: 1 },
      { sku: 'b', qty: 2 },
    ];
    await expect(newClient().records.import('t1', rows, 'sku')).resolves.toEqual({ inserted: 1, updated: 1 });
    expect(api.seen[0]?.url.search).toBe('?mode=upsert&key=sku');
    expect(stub.bodies).toEqual([{ rows }]);
  });
});

/** A table of `count` records served by cursor, as the reference server does (`page` is not looked at). */
function serveRecords(count: number) {
  const rows: TableRecord[] = Array.from({ length: count }, (_, i) => ({ id: `r${i + 1}` }));
  return http.get(at('/api/tables/t1/records'), ({ request }) => {
    const url = new URL(request.url);
    const cursor = url.searchParams.get('cursor');
    const start = cursor === null ? 0 : Number(cursor.slice('after-'.length));
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 50), 100);
    const records = rows.slice(start, start + limit);
    const nextCursor = start + limit < count ? `after-${start + limit}` : null;
    return HttpResponse.json({
      records,
      limit,
      nextCursor,
      ...(cursor === null ? { page: 1, total: count } : {}),
    });
  });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('record iteration', () => {
  const pagesAsked = () =>
    api.seen.map((r) => `${r.url.searchParams.get('cursor') ?? 'first'}/${r.url.searchParams.get('limit')}`);

  it('walks every page exactly once by cursor, ending where the service gives no next cursor', async () => {
    api.use(serveRecords(250));
    const ids = (await collect(newClient().records.iterate('t1'))).map((r) => r.id);
    expect(ids).toEqual(Array.from({ length: 250 }, (_, i) => `r${i + 1}`));
    expect(pagesAsked()).toEqual(['first/100', 'after-100/100', 'after-200/100']);
  });

  it('asks for no empty page after a full last page', async () => {
    api.use(serveRecords(200));
    expect(await collect(newClient().records.iterate('t1'))).toHaveLength(200);
    expect(pagesAsked()).toEqual(['first/100', 'after-100/100']);
  });

  it('passes search and a smaller page size on every page, and never a page number', async () => {
    api.use(serveRecords(5));
    expect(await collect(newClient().records.iterate('t1', { limit: 2, search: 'x' }))).toHaveLength(5);
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?limit=2&search=x',
      '?limit=2&search=x&cursor=after-2',
      '?limit=2&search=x&cursor=after-4',
    ]);
  });

  it('asks for nothing more when the consumer stops early', async () => {
    api.use(serveRecords(1000));
    const first: TableRecord[] = [];
    for await (const record of newClient().records.iterate('t1')) {
      first.push(record);
      if (first.length === 150) break;
    }
    expect(pagesAsked()).toEqual(['first/100', 'after-100/100']);
  });
});

/** An audit log of `count` entries, newest first, served with opaque cursors. */
function serveAudit(count: number) {
  const entries: AuditEntry[] = Array.from({ length: count }, (_, i) => ({
    id: `a${count - i}`,
    userId: 'u1',
    tableId: 't1',
    action: i % 2 === 0 ? 'RECORD_CREATED' : 'TABLE_CERTIFIED',
    resource: 'record',
    environmentLabel: 'dev',
    gateModeAtEvaluation: '',
    createdAt: new Date(Date.UTC(2026, 0, 1) - i * 1000).toISOString(),
  }));
  return http.get(at('/api/workspace/audit-log'), ({ request }) => {
    const url = new URL(request.url);
    const limit = Number(url.searchParams.get('limit') ?? 50);
    const cursor = url.searchParams.get('cursor');
    const start = cursor ? Number(Buffer.from(cursor, 'base64url').toString()) : 0;
    const next = start + limit;
    return HttpResponse.json({
      entries: entries.slice(start, next),
      nextCursor: next < entries.length ? Buffer.from(String(next)).toString('base64url') : '',
    });
  });
}

describe('audit log', () => {
  it('reads one page with its filters', async () => {
    api.use(serveAudit(3));
    const page = await newClient().auditLog.page({
      limit: 2,
      eventType: 'TABLE_CERTIFIED',
      since: '2026-01-01T00:00:00Z',
    });
    expect(page.entries).toHaveLength(2);
    expect(page.nextCursor).toEqual(expect.any(String));
    expect(api.seen[0]?.url.search).toBe('?limit=2&eventType=TABLE_CERTIFIED&since=2026-01-01T00%3A00%3A00Z');
  });

  it('follows nextCursor through every page exactly once', async () => {
    api.use(serveAudit(450));
    const ids = (await collect(newClient().auditLog.iterate({ eventType: 'RECORD_CREATED' }))).map(
      (e) => e.id,
    );
    expect(ids).toEqual(Array.from({ length: 450 }, (_, i) => `a${450 - i}`));
    const asked = api.seen.map((r) => Object.fromEntries(r.url.searchParams));
    expect(asked).toEqual([
      { limit: '200', eventType: 'RECORD_CREATED' },
      { limit: '200', eventType: 'RECORD_CREATED', cursor: Buffer.from('200').toString('base64url') },
      { limit: '200', eventType: 'RECORD_CREATED', cursor: Buffer.from('400').toString('base64url') },
    ]);
  });

  it('refuses to loop when the service hands back the same cursor', async () => {
    api.use(
      http.get(at('/api/workspace/audit-log'), () => HttpResponse.json({ entries: [], nextCursor: 'same' })),
    );
    await expect(collect(newClient().auditLog.iterate())).rejects.toThrow(
      'cursor "same" of /api/workspace/audit-log twice',
    );
    expect(api.seen).toHaveLength(2);
  });

  it('stops walking when aborted', async () => {
    api.use(serveAudit(1000));
    const controller = new AbortController();
    const walk = async () => {
      for await (const _entry of newClient().auditLog.iterate({ limit: 100, signal: controller.signal })) {
        controller.abort();
      }
    };
    await expect(walk()).rejects.toMatchObject({ name: 'AbortError' });
    expect(api.seen).toHaveLength(1);
  });
});

describe('management plane', () => {
  it('lists members', async () => {
    const members = [{ userId: 'u1', email: 'owner@example.com', role: 'OWNER', envScope: ['dev'] }];
    api.use(http.get(at('/api/workspace/members'), () => HttpResponse.json({ members })));
    await expect(newClient().members.list()).resolves.toEqual({ members });
  });

  it('certifies a table with an optional note, and with an empty body by default', async () => {
    const contract = {
      id: 'c1',
      status: 'CERTIFIED',
      certifiedAt: '2026-11-22T14:00:00.000Z',
      grain: 'one row per order',
      grainType: null,
      grainKeyColumns: ['order_id'],
    };
    const stub = answering({ contract });
    api.use(http.post(at('/api/tables/t1/semantic-contract/certify'), stub.resolver));
    const c = newClient();
    await expect(c.contracts.certify('t1', { note: 'ok by me' })).resolves.toEqual({ contract });
    await expect(c.contracts.certify('t1')).resolves.toEqual({ contract });
    expect(stub.bodies).toEqual([{ note: 'ok by me' }, {}]);
  });

  it.each([
    [undefined, false],
    ['g1', true],
  ])(
    'registers a definition (replaceId %s: replaced %s), accepting the 202 the server sends',
    async (replaceId, replaced) => {
      const result = {
        governanceId: 'g1',
        trackingUrl: 'http://127.0.0.1:8787/tables/g1',
        job: { id: 'j1', type: 'gate-baseline-auto', status: 'QUEUED' },
      };
      const stub = answering(result, 202);
      api.use(http.post(at('/api/workspace/definitions'), stub.resolver));
      const request = {
        filename: 'orders.sql',
        content: 'select 1',
        mimeType: 'sql' as const,
        connectorId: 'k1',
        ...(replaceId === undefined ? {} : { replaceId }),
      };
      await expect(newClient().definitions.register(request)).resolves.toEqual({ ...result, replaced });
      expect(stub.bodies).toEqual([request]);
    },
  );

  it('sends the recertification signal', async () => {
    const answer = {
      environmentLabel: 'dev',
      submitted: 2,
      governed: 1,
      outcomes: [
        { table: 'orders', outcome: 'recert_filed', driftDetected: false },
        { table: 'misc', outcome: 'not_governed', driftDetected: false },
      ],
    };
    const stub = answering(answer);
    api.use(http.post(at('/api/workspace/recertify'), stub.resolver));
    const request = { tables: ['orders', { name: 'misc', schema: 'public' }], environmentLabel: 'dev' };
    await expect(newClient().recertification.signal(request)).resolves.toEqual(answer);
    expect(stub.bodies).toEqual([request]);
  });
});

describe('gate submissions with an Idempotency-Key', () => {
  const path = at('/api/tables/t_42/gate-submissions');
  const proof = { id: 'prf_1', tableId: 't_42', passed: true };
  /** Answers each attempt in turn: an error status, else the proof as a replay; keeps each attempt's key. */
  function attempts(...statuses: Array<number | 'replay'>) {
    const keys: Array<string | null> = [];
    api.use(
      http.post(path, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'));
        const status = statuses[keys.length - 1];
        if (status === undefined) throw new Error(`attempt ${keys.length} was not expected`);
        if (status === 'replay')
          return HttpResponse.json(proof, { headers: { 'idempotent-replayed': 'true' } });
        return HttpResponse.json(
          { error: { code: 'busy', message: 'later' } },
          { status, headers: status === 429 ? { 'retry-after': '1' } : {} },
        );
      }),
    );
    return keys;
  }

  it('a replay is an earlier request’s (replayed) unless an attempt that may have been taken was sent again', async () => {
    // First attempt, or after a 429 that stored nothing: an earlier request's. After a 502 (then a 429): the
    // attempt the service took may be this call's own.
    for (const [before, replayed] of [
      [[], true],
      [[429], true],
      [[502], false],
      [[502, 429], false],
    ] as const) {
      const keys = attempts(...before, 'replay');
      const answer = await newClient().gates.submit(
        't_42',
        { ifNotCertified: false },
        { idempotencyKey: 'ci-1-t_42' },
      );
      expect(answer, String(before)).toEqual({ proof, replayed });
      expect(keys).toEqual([...before.map(() => 'ci-1-t_42'), 'ci-1-t_42']);
      await client.close();
    }
  });
});
