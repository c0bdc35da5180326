// GET /api/tables?prefix=: the tables whose name (in any case) or id starts with what was typed, ordered by
// that name or id, a page at a time: how TAB completes a table in a workspace of 100,000 tables without
// reading them all. On PGlite and PostgreSQL, within the caller's workspace and environments, `%`, `_` and
// `\` taken as themselves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';
import { copyTable } from '../helpers/table-copies.js';

type Row = { id: string; name: string; environmentLabel: string; state: string };
type Role = 'OWNER' | 'MEMBER';

const COPIES = 150;
/** The answer's order: the lowercased name (or id) that matched, by code point, then the id. */
const byMatched = (key: (row: Row) => string) => (a: Row, b: Row) => {
  const [x, y] = [key(a), key(b)];
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1;
};
const lowerName = (row: Row) => row.name.toLowerCase();

describe.each(ENGINES)('GET /api/tables?prefix= on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let all: Row[];

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({ ...(postgres ? { database: 'postgres' as const } : {}), workspaces: 2 });
    const customers = server.table('customers');
    // Pre_1…Pre_150 (ids tbl_pre_…), every other one in production, which MEMBER may not see.
    await copyTable(server, customers.id, COPIES, 'pre', {
      name: `'Pre_' || g`,
      environment_label: `CASE WHEN g % 2 = 0 THEN 'production' ELSE environment_label END`,
    });
    // Names holding what LIKE would take for a pattern.
    await copyTable(server, customers.id, 5, 'meta', {
      name: `(ARRAY['a%b', 'a_b', 'axb', 'a\\b', 'A%c'])[g]`,
    });
    // The same names in the other workspace: never answered to this one.
    await copyTable(server, server.workspace(1).table('customers').id, 3, 'pre_other', {
      name: `'pre_' || g`,
    });
    all = (await list('')).body.tables as Row[];
  });

  afterAll(async () => {
    await server?.close();
  });

  const list = (query: string, role: Role = 'OWNER') =>
    server.request('GET', `/api/tables${query}`, { token: server.user(role).cliToken });
  const withPrefix = (prefix: string, extra = '', role: Role = 'OWNER') =>
    list(`?prefix=${encodeURIComponent(prefix)}${extra}`, role);

  async function walk(prefix: string, limit: number, role: Role = 'OWNER') {
    const first = await withPrefix(prefix, `&limit=${limit}`, role);
    expect(first.status).toBe(200);
    const tables: Row[] = [...first.body.tables];
    let cursor: string | null = first.body.nextCursor;
    while (cursor !== null) {
      const next = await withPrefix(prefix, `&limit=${limit}&cursor=${encodeURIComponent(cursor)}`, role);
      expect(next.status).toBe(200);
      expect(next.body.tables.length).toBeLessThanOrEqual(limit);
      tables.push(...next.body.tables);
      cursor = next.body.nextCursor;
    }
    return { total: first.body.total as number, tables };
  }

  it('answers the names starting with the prefix in any case, ordered by name', needs(skip), async () => {
    const expected = all.filter((t) => lowerName(t).startsWith('pre_1')).sort(byMatched(lowerName));
    expect(expected.length).toBe(62); // Pre_1, Pre_10…Pre_19, Pre_100…Pre_150
    const response = await withPrefix('PRE_1', '&limit=100');
    expect(response.status).toBe(200);
    expect(response.body.tables.map((t: Row) => t.name)).toEqual(expected.map((t) => t.name));
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.total).toBe(62);
    // Without limit, every one of them in one answer, as the list without a prefix.
    const whole = await withPrefix('pRe_1');
    expect(whole.body.tables.map((t: Row) => t.id)).toEqual(expected.map((t) => t.id));
    expect(whole.body).not.toHaveProperty('nextCursor');
  });

  it('pages by cursor through every match once, in order, the total counting them', needs(skip), async () => {
    const expected = all.filter((t) => lowerName(t).startsWith('pre')).sort(byMatched(lowerName));
    expect(expected.length).toBe(COPIES);
    const { total, tables } = await walk('Pre', 40);
    expect(total).toBe(COPIES);
    expect(tables.map((t) => t.id)).toEqual(expected.map((t) => t.id));
    const [firstPage, secondPage] = [
      await withPrefix('Pre', '&limit=40&total=false'),
      await walk('Pre', 149),
    ];
    expect(firstPage.body).not.toHaveProperty('total');
    expect(firstPage.body.tables).toHaveLength(40);
    expect(secondPage.tables).toHaveLength(COPIES);
  });

  it('answers the tables whose id starts with the prefix, ordered by id', needs(skip), async () => {
    const byId = all.filter((t) => t.id.startsWith('tbl_pre_14')).sort(byMatched((t) => t.id));
    expect(byId.map((t) => t.id)).toEqual([
      'tbl_pre_14',
      ...Array.from({ length: 10 }, (_, i) => `tbl_pre_14${i}`),
    ]);
    const response = await withPrefix('TBL_PRE_14', '&limit=100');
    expect(response.body.tables.map((t: Row) => t.id)).toEqual(byId.map((t) => t.id));
    // Every id starts with `tbl_`: a page of them, then the next, as for names.
    const { total, tables } = await walk('tbl_', 100);
    expect(total).toBe(all.length);
    expect(tables.map((t) => t.id)).toEqual([...all].sort(byMatched((t) => t.id)).map((t) => t.id));
  });

  it('takes %, _ and \\ in a prefix as themselves', needs(skip), async () => {
    const names = async (prefix: string) =>
      ((await withPrefix(prefix, '&limit=10')).body.tables as Row[]).map((t) => t.name);
    expect(await names('a%')).toEqual(['a%b', 'A%c']);
    expect(await names('A_')).toEqual(['a_b']);
    expect(await names('a\\')).toEqual(['a\\b']);
    expect(await names('a%b')).toEqual(['a%b']);
    expect(await names('%')).toEqual([]);
    expect(await names('_')).toEqual([]);
    expect(await names('a')).toEqual(['a%b', 'A%c', 'a\\b', 'a_b', 'axb']);
    expect(await names(`a'; DROP TABLE gds.tables; --`)).toEqual([]);
  });

  it('answers only what the caller may see: its workspace, its environments', needs(skip), async () => {
    // The other workspace holds pre_1…pre_3: OWNER here sees its own Pre_1… alone.
    const owner = await withPrefix('pre_1', '&limit=100');
    expect(owner.body.tables.every((t: Row) => t.id.startsWith('tbl_pre_') && !t.id.includes('other'))).toBe(
      true,
    );
    // MEMBER acts in dev alone: the odd copies, the total counting only those.
    const member = await walk('pre_1', 10, 'MEMBER');
    const dev = all
      .filter((t) => lowerName(t).startsWith('pre_1') && t.environmentLabel === 'dev')
      .sort(byMatched(lowerName));
    expect(dev.length).toBeGreaterThan(0);
    expect(member.tables.map((t) => t.id)).toEqual(dev.map((t) => t.id));
    expect(member.total).toBe(dev.length);
    const other = await server.request('GET', '/api/tables?prefix=pre', {
      token: server.workspace(1).user('OWNER').cliToken,
    });
    expect((other.body.tables as Row[]).map((t) => t.name).sort()).toEqual(['pre_1', 'pre_2', 'pre_3']);
  });

  it(
    'filters by state and by names as the list does, and leaves deleted tables out',
    needs(skip),
    async () => {
      await server.sql(`UPDATE gds.tables SET state = 'QUARANTINED' WHERE id = 'tbl_pre_7'`);
      await server.sql(`UPDATE gds.tables SET active = false WHERE id = 'tbl_pre_77'`);
      try {
        const quarantined = await withPrefix('pre_', '&state=QUARANTINED');
        expect(quarantined.body.tables.map((t: Row) => t.id)).toEqual(['tbl_pre_7']);
        const named = await withPrefix('pre_7', '&name=pre_70&name=PRE_71&name=orders');
        expect(named.body.tables.map((t: Row) => t.name)).toEqual(['Pre_70', 'Pre_71']);
        const sevens = (await withPrefix('pre_7', '&limit=100')).body.tables.map((t: Row) => t.id);
        expect(sevens).toContain('tbl_pre_7');
        expect(sevens).not.toContain('tbl_pre_77');
      } finally {
        await server.sql(
          `UPDATE gds.tables SET state = 'ACTIVE', active = true WHERE id IN ('tbl_pre_7', 'tbl_pre_77')`,
        );
      }
    },
  );

  it('refuses an empty prefix, a cursor of another order, and one made up', needs(skip), async () => {
    const empty = await list('?prefix=');
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'prefix' } });
    const byAge = (await list('?limit=1')).body.nextCursor as string;
    const mixed = await withPrefix('pre', `&limit=1&cursor=${encodeURIComponent(byAge)}`);
    expect(mixed.status).toBe(400);
    expect(mixed.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'cursor' } });
    const byName = (await withPrefix('pre', '&limit=1')).body.nextCursor as string;
    const back = await list(`?limit=1&cursor=${encodeURIComponent(byName)}`);
    expect(back.status).toBe(400);
    expect(back.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'cursor' } });
    // A made-up cursor holding what the database cannot hold.
    const nul = Buffer.from(JSON.stringify({ matched: 'pre\u0000', id: 'x' })).toString('base64url');
    const made = await withPrefix('pre', `&limit=1&cursor=${nul}`);
    expect(made.status).toBe(400);
    expect(made.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'cursor' } });
  });
});
