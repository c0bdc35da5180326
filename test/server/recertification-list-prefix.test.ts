// GET /api/recertification-requests?prefix=: the requests whose id starts with what was typed (in any case),
// ordered by id, a page at a time: how TAB completes `gds recertification dismiss` in a workspace of
// thousands of open requests without reading them all. On PGlite and PostgreSQL, within the caller's
// workspace and environments (the list's scope), the list's other filters applying as without it.
import { beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { needs } from '../helpers/skip.js';
import { copyTable } from '../helpers/table-copies.js';

type Request = { id: string; tableId: string; environmentLabel: string; status: string };
type Role = 'OWNER' | 'MEMBER';

const COPIES = 150;
const byId = (a: Request, b: Request) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

describe.each(ENGINES)('GET /api/recertification-requests?prefix= on $engine', (engine) => {
  const { skip } = engine;
  const server = useEngineServer(engine, { workspaces: 2 });
  let all: Request[];

  beforeAll(async () => {
    if (skip !== undefined) return;
    // pre_1…pre_150, every other one in production, which MEMBER may not see; each an OPEN request
    // rcr_pre_<n>, and a DISMISSED one rcr_pre_<n>_old, which only `all=true` lists.
    await copyTable(server(), server().table('customers').id, COPIES, 'pre', {
      environment_label: `CASE WHEN g % 2 = 0 THEN 'production' ELSE environment_label END`,
    });
    await copyTable(server(), server().workspace(1).table('customers').id, 3, 'oth');
    await server().sql(
      `INSERT INTO gds.recertification_requests
         (id, workspace_id, table_id, cause, status, details, created_at, last_seen_at, signal_count)
       SELECT 'rcr_' || substr(t.id, 5) || s.suffix, t.workspace_id, t.id, 'manual', s.status, '{}'::jsonb,
              t.created_at, t.created_at, 1
         FROM gds.tables t
        CROSS JOIN (VALUES ('', 'OPEN'), ('_old', 'DISMISSED')) AS s(suffix, status)
        WHERE t.id ~ '^tbl_pre_[0-9]+$'`,
    );
    all = (await list('?all=true')).body.requests as Request[];
  });

  const list = (query: string, role: Role = 'OWNER') =>
    server().request('GET', `/api/recertification-requests${query}`, { token: server().user(role).cliToken });
  const withPrefix = (prefix: string, extra = '', role: Role = 'OWNER') =>
    list(`?prefix=${encodeURIComponent(prefix)}${extra}`, role);
  const open = (prefix: string) =>
    all.filter((r) => r.status === 'OPEN' && r.id.startsWith(prefix)).sort(byId);

  async function walk(prefix: string, limit: number, extra = '', role: Role = 'OWNER') {
    const first = await withPrefix(prefix, `&limit=${limit}${extra}`, role);
    expect(first.status).toBe(200);
    const requests: Request[] = [...first.body.requests];
    let cursor: string | null = first.body.nextCursor;
    while (cursor !== null) {
      const next = await withPrefix(
        prefix,
        `&limit=${limit}${extra}&cursor=${encodeURIComponent(cursor)}`,
        role,
      );
      expect(next.status).toBe(200);
      expect(next.body.requests.length).toBeLessThanOrEqual(limit);
      expect(next.body).not.toHaveProperty('total');
      requests.push(...next.body.requests);
      cursor = next.body.nextCursor;
    }
    return { total: first.body.total as number, requests };
  }

  it(
    'answers the open requests whose id starts with the prefix in any case, ordered by id',
    needs(skip),
    async () => {
      const expected = open('rcr_pre_1');
      expect(expected).toHaveLength(62); // rcr_pre_1, _10…_19, _100…_150
      const response = await withPrefix('RCR_PRE_1', '&limit=100');
      expect(response.status).toBe(200);
      expect(response.body.requests.map((r: Request) => r.id)).toEqual(expected.map((r) => r.id));
      expect(response.body.nextCursor).toBeNull();
      expect(response.body.total).toBe(62);
      // A request as the list carries it: its table's name and its latest signals.
      expect(response.body.requests[0]).toMatchObject({ tableName: 'pre_1', cause: 'manual', signals: [] });
      // Without limit, every one of them in one answer, as the list without a prefix.
      const whole = await withPrefix('rcr_pre_1');
      expect(whole.body.requests.map((r: Request) => r.id)).toEqual(expected.map((r) => r.id));
      expect(whole.body).not.toHaveProperty('nextCursor');
    },
  );

  it('pages by cursor through every match once, in order, the total counting them', needs(skip), async () => {
    const { total, requests } = await walk('rcr_', 40);
    expect(total).toBe(COPIES);
    expect(requests.map((r) => r.id)).toEqual(open('rcr_').map((r) => r.id));
    // With all=true the dismissed ones too, each in its place by id.
    const everything = await walk('rcr_pre_14', 4, '&all=true');
    const expected = all.filter((r) => r.id.startsWith('rcr_pre_14')).sort(byId);
    expect(expected).toHaveLength(22);
    expect(everything.requests.map((r) => r.id)).toEqual(expected.map((r) => r.id));
    expect(everything.total).toBe(22);
  });

  it('leaves the total out with total=false, the pages the same', needs(skip), async () => {
    const counted = await withPrefix('rcr_', '&limit=40');
    const uncounted = await withPrefix('rcr_', '&limit=40&total=false');
    expect(counted.body.total).toBe(COPIES);
    expect(uncounted.status).toBe(200);
    expect(uncounted.body).not.toHaveProperty('total');
    expect(uncounted.body.requests).toEqual(counted.body.requests);
    expect(uncounted.body.nextCursor).toBe(counted.body.nextCursor);
    const refused = await withPrefix('rcr_', '&limit=40&total=maybe');
    expect(refused).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_query', details: { parameter: 'total' } } },
    });
  });

  it('takes %, _ and \\ in a prefix as themselves', needs(skip), async () => {
    for (const prefix of ['%', '_', 'rcr%', 'rcr_pre\\', `rcr'; DROP TABLE gds.tables; --`]) {
      const response = await withPrefix(prefix, '&limit=10');
      expect(response.status, prefix).toBe(200);
      expect(response.body.requests, prefix).toEqual([]);
    }
  });

  it('answers only what the caller may see: its workspace, its environments', needs(skip), async () => {
    // MEMBER acts in dev alone: the odd copies' requests, the total counting only those.
    const member = await walk('rcr_pre_1', 10, '', 'MEMBER');
    const dev = open('rcr_pre_1').filter((r) => r.environmentLabel === 'dev');
    expect(dev.length).toBeGreaterThan(0);
    expect(dev.length).toBeLessThan(open('rcr_pre_1').length);
    expect(member.requests.map((r) => r.id)).toEqual(dev.map((r) => r.id));
    expect(member.total).toBe(dev.length);
    // The other workspace's requests (rcr_pre_xtbl_oth_1…3) are never answered here, nor this one's there.
    await server().sql(
      `INSERT INTO gds.recertification_requests
         (id, workspace_id, table_id, cause, status, details, created_at, last_seen_at, signal_count)
       SELECT 'rcr_pre_x' || id, workspace_id, id, 'manual', 'OPEN', '{}'::jsonb, now(), now(), 1
         FROM gds.tables WHERE id LIKE 'tbl\\_oth\\_%'`,
    );
    expect((await withPrefix('rcr_pre_x', '&limit=100')).body.requests).toEqual([]);
    const other = await server().request('GET', '/api/recertification-requests?prefix=rcr_pre&limit=100', {
      token: server().workspace(1).user('OWNER').cliToken,
    });
    expect((other.body.requests as Request[]).map((r) => r.tableId)).toEqual([
      'tbl_oth_1',
      'tbl_oth_2',
      'tbl_oth_3',
    ]);
  });

  it('filters by table, and leaves a deleted table out', needs(skip), async () => {
    await server().sql(`UPDATE gds.tables SET active = false WHERE id = 'tbl_pre_77'`);
    const ids = async (query: string) =>
      ((await withPrefix('rcr_pre_7', query)).body.requests as Request[]).map((r) => r.id);
    try {
      expect(await ids('&tableId=tbl_pre_7&all=true')).toEqual(['rcr_pre_7', 'rcr_pre_7_old']);
      // rcr_pre_7, rcr_pre_70…79 but 77, whose table is deleted.
      expect(await ids('&limit=100')).toEqual(
        open('rcr_pre_7')
          .map((r) => r.id)
          .filter((id) => id !== 'rcr_pre_77'),
      );
    } finally {
      await server().sql(`UPDATE gds.tables SET active = true WHERE id = 'tbl_pre_77'`);
    }
  });

  it('refuses an empty prefix, a cursor of the other list, and one made up', needs(skip), async () => {
    const byAge = (await list('?limit=1')).body.nextCursor as string;
    const byPrefix = (await withPrefix('rcr', '&limit=1')).body.nextCursor as string;
    const nul = Buffer.from(JSON.stringify({ matched: 'rcr\u0000', id: 'rcr\u0000' })).toString('base64url');
    const refusals: Array<[query: string, parameter: string]> = [
      ['?prefix=', 'prefix'],
      [`?prefix=rcr&limit=1&cursor=${encodeURIComponent(byAge)}`, 'cursor'],
      [`?limit=1&cursor=${encodeURIComponent(byPrefix)}`, 'cursor'],
      [`?prefix=rcr&limit=1&cursor=${nul}`, 'cursor'],
    ];
    for (const [query, parameter] of refusals) {
      const response = await list(query);
      expect({ status: response.status, error: response.body.error }, query).toMatchObject({
        status: 400,
        error: { code: 'invalid_query', details: { parameter } },
      });
    }
  });
});
