// The recertification queue pages by key like the table list: every request once, in
// the unpaged list's order, the total on the first page, the caller's environments only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
const owner = () => server.user('OWNER').cliToken;
// The seeded steward's scope is dev and staging: production's requests are not theirs to see.
const steward = () => server.user('STEWARD').cliToken;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  // Per active table: an OPEN request of each cause and three DISMISSED ones; pairs share a created_at, so
  // that the id breaks ties inside a page boundary.
  await server.sql(
    `INSERT INTO gds.recertification_requests
       (id, workspace_id, table_id, cause, status, details, created_at, last_seen_at, signal_count)
     SELECT 'rcr_t' || lpad(row_number() OVER (ORDER BY t.id, c.cause, s.n)::text, 5, '0'),
            t.workspace_id, t.id, c.cause, CASE WHEN s.n = 0 THEN 'OPEN' ELSE 'DISMISSED' END, '{}'::jsonb,
            timestamptz '2026-01-01' + ((row_number() OVER (ORDER BY t.id, c.cause, s.n)) / 2) * interval '1 ms',
            timestamptz '2026-01-01', 1
       FROM gds.tables t
       CROSS JOIN (VALUES ('drift'), ('schema_change'), ('ingest'), ('manual')) AS c(cause)
       CROSS JOIN generate_series(0, 3) AS s(n)
      WHERE t.active`,
  );
});

afterAll(async () => {
  await server?.close();
});

const get = (query: string, token = owner()) =>
  server.request('GET', `/api/recertification-requests${query}`, { token });

/** Every request of the list, a page of `limit` at a time; and the first page's total. */
async function walk(query: string, limit: number, token = owner()) {
  const first = await get(`?${query}${query ? '&' : ''}limit=${limit}`, token);
  expect(first.status).toBe(200);
  const ids: string[] = first.body.requests.map((r: { id: string }) => r.id);
  let cursor: string | null = first.body.nextCursor;
  while (cursor !== null) {
    const page = await get(
      `?${query}${query ? '&' : ''}limit=${limit}&cursor=${encodeURIComponent(cursor)}`,
      token,
    );
    expect(page.status).toBe(200);
    expect(page.body.requests.length).toBeLessThanOrEqual(limit);
    expect(page.body.total).toBeUndefined();
    ids.push(...page.body.requests.map((r: { id: string }) => r.id));
    cursor = page.body.nextCursor;
  }
  return { ids, total: first.body.total as number };
}

const unpaged = async (query: string, token = owner()) => {
  const response = await get(query ? `?${query}` : '', token);
  expect(response.status).toBe(200);
  expect(response.body.nextCursor).toBeUndefined();
  return response.body.requests.map((r: { id: string }) => r.id) as string[];
};

describe('GET /api/recertification-requests by page', () => {
  it('gives every open request once, in the unpaged order, and the total on the first page', async () => {
    const all = await unpaged('');
    expect(all.length).toBeGreaterThan(10);
    const paged = await walk('', 7);
    expect(paged.ids).toEqual(all);
    expect(paged.total).toBe(all.length);
  });

  it('pages --all (dismissed ones too) and one table alike', async () => {
    const everything = await unpaged('all=true');
    expect(everything.length).toBeGreaterThan((await unpaged('')).length);
    expect((await walk('all=true', 13)).ids).toEqual(everything);
    const tableId = server.table('orders').id;
    expect((await walk(`all=true&tableId=${tableId}`, 5)).ids).toEqual(
      await unpaged(`all=true&tableId=${tableId}`),
    );
  });

  it("leaves out the tables outside the caller's environments, on every page", async () => {
    const stewardList = await unpaged('', steward());
    const ownerList = await unpaged('');
    expect(stewardList.length).toBeGreaterThan(0);
    expect(stewardList.length).toBeLessThan(ownerList.length);
    const paged = await walk('', 4, steward());
    expect(paged.ids).toEqual(stewardList);
    expect(paged.total).toBe(stewardList.length);
  });

  it('answers 400 naming the parameter for a cursor it did not give or a limit out of range', async () => {
    for (const query of [
      '?cursor=abc',
      '?limit=0',
      '?limit=1001',
      `?cursor=${Buffer.from('{"createdAt":"1","id":"x"}').toString('base64url')}`,
    ]) {
      const response = await get(query);
      expect(response.status, query).toBe(400);
      expect(response.body.error.code).toBe('invalid_query');
    }
  });
});
