// The table list (`gds list`, `gds quarantine list`) pages by cursor: every table of the caller's
// environments once, oldest first, in pages of `limit`, the total on the first page; without limit or cursor
// the whole list in one answer, as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

type Row = { id: string; environmentLabel: string; state: string };

const list = (query: string, role: 'OWNER' | 'MEMBER' = 'OWNER') =>
  server.request('GET', `/api/tables${query}`, { token: server.user(role).cliToken });

async function walk(query: string, role: 'OWNER' | 'MEMBER' = 'OWNER') {
  const first = await list(`?${query}`, role);
  expect(first.status).toBe(200);
  const pages: Row[][] = [first.body.tables];
  let cursor: string | null = first.body.nextCursor;
  while (cursor !== null) {
    const next = await list(`?${query}&cursor=${encodeURIComponent(cursor)}`, role);
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
