// The table list (`gds list`, `gds quarantine list`) pages by cursor: every table of the caller's
// environments once, oldest first, in pages of `limit`, the total on the first page; without limit or cursor
// the whole list in one answer, as before. With order=newest (an extension) the same list newest first, its
// cursor good for that order only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

type Row = { id: string; environmentLabel: string; state: string };

const list = (query: string, role: 'OWNER' | 'MEMBER' = 'OWNER', on = server) =>
  on.request('GET', `/api/tables${query}`, { token: on.user(role).cliToken });

async function walk(query: string, role: 'OWNER' | 'MEMBER' = 'OWNER', on = server) {
  const first = await list(`?${query}`, role, on);
  expect(first.status).toBe(200);
  const pages: Row[][] = [first.body.tables];
  let cursor: string | null = first.body.nextCursor;
  while (cursor !== null) {
    const next = await list(`?${query}&cursor=${encodeURIComponent(cursor)}`, role, on);
    expect(next.status).toBe(200);
    expect(next.body).not.toHaveProperty('total');
    pages.push(next.body.tables);
    cursor = next.body.nextCursor;
  }
  return { total: first.body.total as number, pages };
}

describe('GET /api/tables', () => {
  it('pages by cursor through the same tables, in the same order, as the whole list', async () => {
    const whole = (await list('')).body;
    expect(whole).not.toHaveProperty('nextCursor');
    const ids = whole.tables.map((t: Row) => t.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    const { total, pages } = await walk('limit=2');
    expect(total).toBe(ids.length);
    expect(pages.every((p) => p.length <= 2)).toBe(true);
    expect(pages.flat().map((t) => t.id)).toEqual(ids);
  });

  it('pages within a state filter and the caller’s environments, the total counting only those', async () => {
    const quarantined = (await list('?state=QUARANTINED')).body.tables.map((t: Row) => t.id);
    const paged = await walk('state=QUARANTINED&limit=1');
    expect(paged.pages.flat().map((t) => t.id)).toEqual(quarantined);
    expect(paged.total).toBe(quarantined.length);
    // MEMBER acts in dev only: its pages and total hold dev tables alone.
    const member = await walk('limit=1', 'MEMBER');
    expect(member.pages.flat().every((t) => t.environmentLabel === 'dev')).toBe(true);
    expect(member.total).toBe(member.pages.flat().length);
    const all = (await list('')).body.tables as Row[];
    expect(member.total).toBe(all.filter((t) => t.environmentLabel === 'dev').length);
    expect(member.total).toBeLessThan(all.length);
  });

  it('finds a table by its name in any case, and nothing by a name of quotes, backslashes and SQL', async () => {
    const [first] = (await list('')).body.tables as Array<Row & { name: string }>;
    const byName = await list(`?name=${encodeURIComponent(first?.name.toUpperCase() ?? '')}`);
    expect(byName.body.tables.map((t: Row) => t.id)).toEqual([first?.id]);
    for (const name of [`it's`, `a\\'b`, `'; DROP TABLE gds.tables; --`, `naïve 😀`]) {
      const odd = await list(`?name=${encodeURIComponent(name)}`);
      expect([odd.status, odd.body.tables]).toEqual([200, []]);
    }
    expect((await list('')).body.tables.length).toBeGreaterThanOrEqual(3);
  });

  it('says the whole list is one page when it fits', async () => {
    const response = await list('?limit=1000');
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.total).toBe(response.body.tables.length);
  });

  it('leaves the total out of the first page with total=false, the same tables in it', async () => {
    const counted = await list('?limit=2');
    const uncounted = await list('?limit=2&total=false');
    expect(uncounted.status).toBe(200);
    expect(uncounted.body).not.toHaveProperty('total');
    expect(uncounted.body.tables).toEqual(counted.body.tables);
    expect(uncounted.body.nextCursor).toBe(counted.body.nextCursor);
    expect((await list('?limit=2&total=true')).body.total).toBe(counted.body.total);
  });

  it.each([
    ['?limit=0'],
    ['?limit=2&total=no'],
    ['?limit=1001'],
    ['?cursor=nope'],
    [`?cursor=${Buffer.from('{"id":1}').toString('base64url')}`],
    // Date.parse takes these, PostgreSQL's ::timestamptz does not (once a 500).
    [`?cursor=${Buffer.from('{"createdAt":"1","id":"x"}').toString('base64url')}`],
    [`?cursor=${Buffer.from('{"createdAt":"2024-02-30T00:00:00.000000Z","id":"x"}').toString('base64url')}`],
  ])('answers 400 for %s', async (query) => {
    const response = await list(query);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_query');
  });
});

describe('GET /api/tables?order=newest', () => {
  it('lists the same tables newest first, whole and by cursor, and pages oldest first as before', async () => {
    const oldest = (await list('')).body.tables.map((t: Row) => t.id);
    const newest = await list('?order=newest');
    expect(newest.status).toBe(200);
    expect(newest.body).not.toHaveProperty('nextCursor');
    expect(newest.body.tables.map((t: Row) => t.id)).toEqual([...oldest].reverse());
    expect((await list('?order=oldest')).body).toEqual((await list('')).body);
    const paged = await walk('order=newest&limit=2');
    expect(paged.total).toBe(oldest.length);
    expect(paged.pages.every((p) => p.length <= 2)).toBe(true);
    expect(paged.pages.flat().map((t) => t.id)).toEqual([...oldest].reverse());
    expect((await walk('order=oldest&limit=2')).pages.flat().map((t) => t.id)).toEqual(oldest);
  });

  it('keeps a state filter and the caller’s environments newest first', async () => {
    const quarantined = (await list('?state=QUARANTINED')).body.tables.map((t: Row) => t.id);
    const paged = await walk('state=QUARANTINED&order=newest&limit=1');
    expect(paged.pages.flat().map((t) => t.id)).toEqual([...quarantined].reverse());
    const member = (await list('', 'MEMBER')).body.tables as Row[];
    const memberNewest = await walk('order=newest&limit=1', 'MEMBER');
    expect(memberNewest.pages.flat().map((t) => t.id)).toEqual(member.map((t) => t.id).reverse());
    expect(memberNewest.pages.flat().every((t) => t.environmentLabel === 'dev')).toBe(true);
    const anonymous = await server.request('GET', '/api/tables?order=newest&limit=1');
    expect(anonymous.status).toBe(401);
  });

  it('refuses a cursor of one order given with the other, and an order it does not know', async () => {
    const oldestCursor = (await list('?limit=1')).body.nextCursor as string;
    const newestCursor = (await list('?order=newest&limit=1')).body.nextCursor as string;
    for (const query of [
      `?order=newest&cursor=${encodeURIComponent(oldestCursor)}`,
      `?cursor=${encodeURIComponent(newestCursor)}`,
      `?order=oldest&cursor=${encodeURIComponent(newestCursor)}`,
    ]) {
      const response = await list(query);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'cursor' } });
      expect(response.body.error.message).toMatch(/order/);
    }
    for (const query of ['?order=latest', '?order=newest&prefix=a']) {
      const response = await list(query);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'order' } });
    }
  });
});

describe('GET /api/tables?order=newest on PostgreSQL', () => {
  let pg: TestServer | undefined;
  beforeAll(async () => {
    if (noPostgres === undefined) pg = await startTestServer({ database: 'postgres' });
  });
  afterAll(async () => {
    await pg?.close();
  });

  it('pages the same tables newest first by cursor, the reverse of the list', needs(noPostgres), async () => {
    const on = pg as TestServer;
    const oldest = (await list('', 'OWNER', on)).body.tables.map((t: Row) => t.id);
    expect(oldest.length).toBeGreaterThanOrEqual(3);
    const paged = await walk('order=newest&limit=2', 'OWNER', on);
    expect(paged.pages.flat().map((t) => t.id)).toEqual([...oldest].reverse());
    const member = (await list('', 'MEMBER', on)).body.tables.map((t: Row) => t.id);
    const memberPaged = await walk('order=newest&limit=1', 'MEMBER', on);
    expect(memberPaged.pages.flat().map((t) => t.id)).toEqual([...member].reverse());
  });
});
