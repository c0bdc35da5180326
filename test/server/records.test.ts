// Data plane (§4.3): paging, search, required columns, patch/delete, bulk-update, import, Mode A
// rows read from the warehouse and never written, and the audit entries each write leaves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { pushDevDefinition } from '../helpers/push.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

let server: TestServer;
let crm: string;
let customers: string;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  customers = server.table('customers').id;
  const issued = await server.issueToken('OWNER', {
    name: 'records',
    env: 'dev',
    scopes: [
      { tableId: crm, permissions: ['read', 'write'] },
      { tableId: customers, permissions: ['read', 'write'] },
    ],
  });
  token = issued.tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

const call = (method: string, path: string, body?: unknown) =>
  server.request(method, path, { token, ...(body === undefined ? {} : { body }) });
const list = (tableId: string, query = '') => call('GET', `/api/tables/${tableId}/records${query}`);
const emails = (records: Array<{ email: string }>) => records.map((r) => r.email);

describe('listing', () => {
  it('pages 1-based with page, limit and total, visiting every record exactly once', async () => {
    const first = await list(crm, '?limit=5');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, limit: 5 });
    const total = first.body.total as number;
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(total / 5); page += 1) {
      const response = await list(crm, `?limit=5&page=${page}`);
      seen.push(...response.body.records.map((r: { id: string }) => r.id));
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect((await list(crm, `?limit=5&page=${Math.ceil(total / 5) + 1}`)).body.records).toEqual([]);
  });

  it('pages by cursor, Mode B and Mode A alike: every record once, the total on the first page only', async () => {
    for (const tableId of [crm, customers]) {
      const byPage = await list(tableId, '?limit=100');
      const first = await list(tableId, '?limit=3');
      expect(first.body.total).toBe(byPage.body.total);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const seen: string[] = first.body.records.map((r: { id: string }) => r.id);
      let cursor: string | null = first.body.nextCursor;
      while (cursor !== null) {
        const next = await list(tableId, `?limit=3&cursor=${encodeURIComponent(cursor)}`);
        expect(next.status).toBe(200);
        expect(next.body).not.toHaveProperty('total');
        expect(next.body).not.toHaveProperty('page');
        seen.push(...next.body.records.map((r: { id: string }) => r.id));
        cursor = next.body.nextCursor;
      }
      expect(seen).toEqual(byPage.body.records.map((r: { id: string }) => r.id));
      expect(byPage.body.nextCursor).toBeNull();
    }
  });

  it('keeps a cursor listing whole when a row before it is deleted (an offset would skip one)', async () => {
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) {
      const created = await call('POST', `/api/tables/${crm}/records`, {
        email: `cursor-${name}@example.com`,
        full_name: `Cursor ${name}`,
      });
      expect(created.status).toBe(201);
      ids.push(created.body.id as string);
    }
    const [one, two, three] = ids;
    try {
      let page = await list(crm, '?limit=1');
      while (page.body.records[0]?.id !== one) {
        page = await list(crm, `?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
      }
      expect((await call('DELETE', `/api/tables/${crm}/records/${one}`)).status).toBe(204);
      const after: string[] = [];
      let cursor: string | null = page.body.nextCursor;
      while (cursor !== null) {
        const next = await list(crm, `?limit=1&cursor=${encodeURIComponent(cursor)}`);
        after.push(...next.body.records.map((r: { id: string }) => r.id));
        cursor = next.body.nextCursor;
      }
      expect(after).toEqual([two, three]);
    } finally {
      for (const id of [two, three]) await call('DELETE', `/api/tables/${crm}/records/${id}`);
    }
  });

  it('searches by cursor too, and refuses a cursor it did not give', async () => {
    const first = await list(crm, '?search=example.com&limit=1');
    const second = await list(crm, `?search=example.com&limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body.records).toHaveLength(1);
    expect(second.body.records[0].id).not.toBe(first.body.records[0].id);
    for (const bad of ['not-a-cursor', Buffer.from('{"after":1}').toString('base64url')]) {
      const response = await list(crm, `?cursor=${bad}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'cursor' } });
    }
  });

  it('pages a warehouse table whose id repeats or is NULL, and a view, every row once', async () => {
    await server.sql(`CREATE TABLE analytics_dev.ragged_ids (id integer, label text)`);
    await server.sql(
      `INSERT INTO analytics_dev.ragged_ids VALUES (1, 'a'), (2, 'b'), (NULL, 'c'), (2, 'd'), (NULL, 'e'), (3, 'f'), (NULL, 'g')`,
    );
    await server.sql(`CREATE VIEW analytics_dev.ragged_view AS SELECT * FROM analytics_dev.ragged_ids`);
    const ids: string[] = [];
    for (const object of ['ragged_ids', 'ragged_view']) {
      const pushed = await pushDevDefinition(server, object, ['id', 'label']);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
      ids.push(pushed.body.governanceId as string);
    }
    const reader = await server.issueToken('OWNER', {
      name: 'ragged',
      env: 'dev',
      scopes: ids.map((tableId) => ({ tableId, permissions: ['read' as const] })),
    });
    const read = (tableId: string, query: string) =>
      server.request('GET', `/api/tables/${tableId}/records${query}`, { token: reader.tokens.accessToken });
    for (const tableId of ids) {
      const labels: string[] = [];
      let page = await read(tableId, '?limit=2');
      expect(page.body.total).toBe(7);
      labels.push(...page.body.records.map((r: { label: string }) => r.label));
      while (page.body.nextCursor !== null) {
        page = await read(tableId, `?limit=2&cursor=${encodeURIComponent(page.body.nextCursor)}`);
        expect(page.status).toBe(200);
        labels.push(...page.body.records.map((r: { label: string }) => r.label));
      }
      expect(labels.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
      const numbered: string[] = [];
      for (let n = 1; n <= 4; n++)
        numbered.push(
          ...(await read(tableId, `?limit=2&page=${n}`)).body.records.map((r: { label: string }) => r.label),
        );
      expect(numbered.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    }
  });

  it('defaults to page 1 and limit 50', async () => {
    expect((await list(crm)).body).toMatchObject({ page: 1, limit: 50 });
  });

  it.each([['?limit=101'], ['?limit=0'], ['?page=0'], ['?limit=ten'], ['?limit=1&limit=2'], ['?pageSize=5']])(
    'answers 400 for %s, naming the parameter',
    async (query) => {
      const response = await list(crm, query);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_query');
    },
  );

  it('searches text columns case-insensitively, with % and _ taken literally', async () => {
    const bell = await list(crm, '?search=BELL%20LABS');
    expect(emails(bell.body.records).sort()).toEqual(['dennis@example.com', 'ken@example.com']);
    expect(bell.body.total).toBe(2);
    expect((await list(crm, '?search=%25')).body.total).toBe(0);
    // Only text columns are searched: 88 is a score (integer), in no text column.
    expect((await list(crm, '?search=88')).body.total).toBe(0);
  });

  it('reads Mode A rows from the warehouse object, nulls and malformed values as they are', async () => {
    const response = await list(customers, '?limit=100');
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(10);
    const byId = new Map(response.body.records.map((r: { id: string }) => [r.id, r]));
    expect(byId.get('c01')).toEqual({
      id: 'c01',
      customer_id: 1001,
      email: 'ada@example.com',
      full_name: 'Ada Lovelace',
      country: 'GB',
      signup_date: '2024-01-15',
      lifetime_value: 1200.5,
    });
    expect(byId.get('c07')).toMatchObject({ email: null });
    const duplicated = response.body.records.filter((r: { customer_id: number }) => r.customer_id === 1004);
    expect(duplicated).toHaveLength(2);
    expect((await list(customers, '?search=dijkstra')).body.total).toBe(2);
  });

  it('answers 404 for an unknown or inactive table', async () => {
    for (const tableId of ['tbl_unknown', server.table('legacy_leads').id]) {
      const response = await list(tableId);
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('table_not_found');
    }
  });
});

describe('writing a Mode B table', () => {
  it('creates a record with all required columns and echoes it with its id', async () => {
    const created = await call('POST', `/api/tables/${crm}/records`, {
      email: 'linus@example.com',
      full_name: 'Linus Torvalds',
      score: 77,
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^rec_/),
      email: 'linus@example.com',
      full_name: 'Linus Torvalds',
      score: 77,
    });
    const found = await list(crm, '?search=linus');
    expect(found.body.records).toEqual([created.body]);
  });

  it.each([
    [{ email: 'x@example.com' }, { missing: ['full_name'] }, 'missing required columns: full_name'],
    [{ email: 'x@example.com', full_name: null }, { missing: ['full_name'] }, 'full_name'],
    [
      { email: 'x@example.com', full_name: 'X', shoe_size: 44 },
      { unknown: ['shoe_size'] },
      'unknown columns: shoe_size',
    ],
    [
      { email: 'x@example.com', full_name: 'X', score: 'high' },
      { invalid: [{ column: 'score', expected: 'integer' }] },
      'score',
    ],
  ])('refuses %j with 400 naming the columns', async (body, details, message) => {
    const before = (await list(crm)).body.total;
    const response = await call('POST', `/api/tables/${crm}/records`, body);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_record');
    expect(response.body.error.details).toMatchObject(details);
    expect(response.body.error.message).toContain(message);
    expect((await list(crm)).body.total).toBe(before);
  });

  it('patches only the given columns, and refuses to null a required one', async () => {
    const created = await call('POST', `/api/tables/${crm}/records`, {
      email: 'p@example.com',
      full_name: 'Pat',
    });
    const patched = await call('PATCH', `/api/tables/${crm}/records/${created.body.id}`, {
      phone: '+1 555 0100',
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...created.body, phone: '+1 555 0100' });
    const refused = await call('PATCH', `/api/tables/${crm}/records/${created.body.id}`, { email: null });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.missing).toEqual(['email']);
    const missing = await call('PATCH', `/api/tables/${crm}/records/rec_nope`, { phone: '1' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('record_not_found');
  });

  it('deletes a record (204), then answers 404 for it', async () => {
    const created = await call('POST', `/api/tables/${crm}/records`, {
      email: 'd@example.com',
      full_name: 'Del',
    });
    const path = `/api/tables/${crm}/records/${created.body.id}`;
    expect((await call('DELETE', path)).status).toBe(204);
    const again = await call('DELETE', path);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('record_not_found');
    expect((await list(crm, '?search=d%40example.com')).body.total).toBe(0);
  });

  it('bulk-update updates items with id and creates items without', async () => {
    const created = await call('POST', `/api/tables/${crm}/records`, {
      email: 'b1@example.com',
      full_name: 'B1',
    });
    const response = await call('POST', `/api/tables/${crm}/bulk-update`, {
      records: [
        { id: created.body.id, data: { company: 'Bulk Co' } },
        { data: { email: 'b2@example.com', full_name: 'B2' } },
      ],
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ created: 1, updated: 1 });
    expect(response.body.records[0]).toMatchObject({ id: created.body.id, company: 'Bulk Co' });
    expect((await list(crm, '?search=b2%40example.com')).body.total).toBe(1);
  });

  it('bulk-update is all or nothing: an unknown id or a bad item changes nothing', async () => {
    const before = (await list(crm)).body.total;
    const unknown = await call('POST', `/api/tables/${crm}/bulk-update`, {
      records: [
        { data: { email: 'lost@example.com', full_name: 'Lost' } },
        { id: 'rec_nope', data: { score: 1 } },
      ],
    });
    expect(unknown.status).toBe(404);
    const bad = await call('POST', `/api/tables/${crm}/bulk-update`, {
      records: [
        { data: { email: 'lost@example.com', full_name: 'Lost' } },
        { data: { email: 'half@example.com' } },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ index: 1, missing: ['full_name'] });
    expect((await list(crm)).body.total).toBe(before);
  });

  it('import upserts on the key: every matching row is updated, the others inserted', async () => {
    const response = await call('POST', `/api/tables/${crm}/import?mode=upsert&key=email`, {
      rows: [
        { email: 'grace@example.com', company: 'Yale' },
        { email: 'imported@example.com', full_name: 'Imported' },
      ],
    });
    expect(response.status).toBe(200);
    // grace@example.com is seeded twice (a duplicated key): both rows are updated.
    expect(response.body).toEqual({ inserted: 1, updated: 2 });
    const grace = await list(crm, '?search=grace%40example.com');
    expect(grace.body.records.map((r: { company: string }) => r.company)).toEqual(['Yale', 'Yale']);
  });

  it('import applies rows in order: a key repeated in one import is inserted, then updated', async () => {
    const response = await call('POST', `/api/tables/${crm}/import?mode=upsert&key=email`, {
      rows: [
        { email: 'twice@example.com', full_name: 'First' },
        { email: 'twice@example.com', company: 'Second' },
      ],
    });
    expect(response.body).toEqual({ inserted: 1, updated: 1 });
    const found = await list(crm, '?search=twice%40example.com');
    expect(found.body.records).toEqual([
      { id: expect.any(String), email: 'twice@example.com', full_name: 'First', company: 'Second' },
    ]);
  });

  it.each([
    ['?mode=replace&key=email', { rows: [{ email: 'a@example.com', full_name: 'A' }] }],
    ['?mode=upsert&key=shoe_size', { rows: [{ email: 'a@example.com', full_name: 'A' }] }],
    ['?mode=upsert', { rows: [{ email: 'a@example.com', full_name: 'A' }] }],
    ['?mode=upsert&key=email', { rows: [{ full_name: 'no key' }] }],
    ['?mode=upsert&key=email', { rows: [{ email: 'new-without-name@example.com' }] }],
    ['?mode=upsert&key=email', { rows: [] }],
  ])('import refuses %s %j with 400 and changes nothing', async (query, body) => {
    const before = (await list(crm)).body.total;
    const response = await call('POST', `/api/tables/${crm}/import${query}`, body);
    expect(response.status).toBe(400);
    expect((await list(crm)).body.total).toBe(before);
  });

  it('accepts an import body over 1 MiB, and answers 413 over 25 MiB', async () => {
    const filler = 'x'.repeat(800);
    const rows = Array.from({ length: 1500 }, (_, i) => ({
      email: `big${i}@example.com`,
      full_name: filler,
    }));
    expect(JSON.stringify({ rows }).length).toBeGreaterThan(1024 * 1024);
    const big = await call('POST', `/api/tables/${crm}/import?mode=upsert&key=email`, { rows });
    expect(big.status).toBe(200);
    expect(big.body).toEqual({ inserted: 1500, updated: 0 });
    const huge = await call('POST', `/api/tables/${crm}/records`, {
      email: 'huge@example.com',
      full_name: 'x'.repeat(26 * 1024 * 1024),
    });
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
    expect(huge.headers.get('x-ratelimit-limit')).toBe('200');
  });

  it('writes an audit entry for every write, with table, environment and gate mode', async () => {
    const created = await call('POST', `/api/tables/${crm}/records`, {
      email: 'a@example.com',
      full_name: 'Aud',
    });
    await call('PATCH', `/api/tables/${crm}/records/${created.body.id}`, { score: 3 });
    await call('DELETE', `/api/tables/${crm}/records/${created.body.id}`);
    const log = await server.request('GET', '/api/workspace/audit-log?limit=3', {
      token: server.user('OWNER').accessToken,
    });
    expect(log.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'RECORD_DELETED',
      'RECORD_UPDATED',
      'RECORD_CREATED',
    ]);
    expect(log.body.entries[0]).toMatchObject({
      tableId: crm,
      resource: 'record',
      environmentLabel: 'dev',
      gateModeAtEvaluation: 'ADVISORY',
      details: { recordId: created.body.id },
    });
  });
});

describe('writing a Mode A table', () => {
  const writes: Array<[string, string, unknown]> = [
    ['POST', '/records', { id: 'c99', email: 'new@example.com' }],
    ['PATCH', '/records/c01', { email: 'changed@example.com' }],
    ['DELETE', '/records/c01', undefined],
    ['POST', '/bulk-update', { records: [{ data: { email: 'x@example.com' } }] }],
    ['POST', '/import?mode=upsert&key=id', { rows: [{ id: 'c01', email: 'x@example.com' }] }],
  ];

  it.each(writes)(
    '%s %s is refused with a clear 400 and the warehouse is untouched',
    async (method, suffix, body) => {
      const response = await call(method, `/api/tables/${customers}${suffix}`, body);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('read_only_table');
      expect(response.body.error.message).toContain('analytics_dev.customers');
      expect(response.body.error.message).toContain('never writes');
      const rows = await list(customers, '?limit=100');
      expect(rows.body.total).toBe(10);
      expect(rows.body.records.find((r: { id: string }) => r.id === 'c01')?.email).toBe('ada@example.com');
    },
  );
});

describe('the record contract (§2.3)', () => {
  it("serves a Mode A table's governed columns and id only, never the warehouse object's other columns", async () => {
    const pushed = await pushDevDefinition(server, 'productsdim', ['product_name', 'price'], 'OWNER');
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const tableId = pushed.body.tableId as string;
    const reader = await server.issueToken('OWNER', {
      name: 'productsdim',
      env: 'dev',
      scopes: [{ tableId, permissions: ['read'] }],
    });
    const response = await server.request('GET', `/api/tables/${tableId}/records?limit=100`, {
      token: reader.tokens.accessToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.records.length).toBeGreaterThan(0);
    for (const record of response.body.records) {
      expect(Object.keys(record).sort()).toEqual(['id', 'price', 'product_name']);
    }
    const searched = await server.request('GET', `/api/tables/${tableId}/records?search=x`, {
      token: reader.tokens.accessToken,
    });
    for (const record of searched.body.records) expect(record).not.toHaveProperty('category_id');
  });
});

describe.each(ENGINES)('the page of GET records on $engine', ({ postgres, skip }) => {
  let on: TestServer;
  let reader: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    on = await startTestServer(postgres ? { database: 'postgres' } : {});
    const issued = await on.issueToken('OWNER', {
      name: 'pages',
      env: 'dev',
      scopes: ['crm_contacts', 'customers'].map((name) => ({
        tableId: on.table(name).id,
        permissions: ['read' as const],
      })),
    });
    reader = issued.tokens.accessToken;
  });

  afterAll(async () => {
    await on?.close();
  });

  // §4.3: `page` is an integer, 1-based, with no upper bound (only `limit` has one).
  it('is any integer from 1: a page past the last is an empty page, not a 400', needs(skip), async () => {
    for (const tableId of ['crm_contacts', 'customers'].map((name) => on.table(name).id)) {
      for (const page of [1_000_001, Number.MAX_SAFE_INTEGER]) {
        const response = await on.request('GET', `/api/tables/${tableId}/records?limit=100&page=${page}`, {
          token: reader,
        });
        expect(response.status, `${tableId} page ${page}`).toBe(200);
        expect(response.body).toMatchObject({ records: [], nextCursor: null, page, limit: 100 });
      }
      const beyond = await on.request(
        'GET',
        `/api/tables/${tableId}/records?page=${Number.MAX_SAFE_INTEGER + 1}`,
        {
          token: reader,
        },
      );
      expect(beyond.status).toBe(400);
      expect(beyond.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'page' } });
    }
  });
});
