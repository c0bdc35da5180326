// GET /api/tables?name=a&name=b: the tables holding any of several names (case-insensitive, exact), on PGlite
// and PostgreSQL, within the caller's environments; how `gds plan` finds the holders of its models' names
// without reading the whole workspace. One name behaves as it always did; over 500, or an empty one, is a 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

type Row = { id: string; name: string; environmentLabel: string };

describe.each(ENGINES)('GET /api/tables with several names on $engine', ({ postgres, skip }) => {
  let server: TestServer;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer(postgres ? { database: 'postgres' } : {});
  });

  afterAll(async () => {
    await server?.close();
  });

  const list = (names: string[], role: 'OWNER' | 'MEMBER' = 'OWNER', extra = '') =>
    server.request(
      'GET',
      `/api/tables?${names.map((n) => `name=${encodeURIComponent(n)}`).join('&')}${extra}`,
      { token: server.user(role).cliToken },
    );
  const namesOf = (body: { tables: Row[] }) => body.tables.map((t) => t.name).sort();

  it('lists the tables holding any of the names, in any case, oldest first', needs(skip), async () => {
    const all = (await server.request('GET', '/api/tables', { token: server.user('OWNER').cliToken })).body
      .tables as Row[];
    const response = await list(['CUSTOMERS', 'Customers_Production', 'no_such_table', 'orders']);
    expect(response.status).toBe(200);
    expect(response.body.tables.map((t: Row) => t.id)).toEqual(
      all.filter((t) => ['customers', 'customers_production', 'orders'].includes(t.name)).map((t) => t.id),
    );
    expect(namesOf(response.body)).toEqual(['customers', 'customers_production', 'orders']);
  });

  it('pages through the names as through any filter, the total counting them', needs(skip), async () => {
    const first = await list(['customers', 'orders', 'crm_contacts'], 'OWNER', '&limit=2');
    expect([first.status, first.body.tables.length, first.body.total]).toEqual([200, 2, 3]);
    const next = await list(
      ['customers', 'orders', 'crm_contacts'],
      'OWNER',
      `&limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    expect([next.body.tables.length, next.body.nextCursor]).toEqual([1, null]);
  });

  it('leaves out a name held in an environment the caller may not see', needs(skip), async () => {
    // MEMBER acts in dev alone; customers_production is a production table.
    const response = await list(['customers', 'customers_production'], 'MEMBER');
    expect(response.status).toBe(200);
    expect(namesOf(response.body)).toEqual(['customers']);
  });

  it('one name behaves as before', needs(skip), async () => {
    const response = await list(['Orders']);
    expect([response.status, namesOf(response.body)]).toEqual([200, ['orders']]);
    const empty = await list(['']);
    expect([empty.status, empty.body.error.message]).toEqual([400, 'name must be given once, with a value.']);
  });

  it('refuses over 500 names, and an empty one, naming the parameter', needs(skip), async () => {
    const many = Array.from({ length: 501 }, (_, i) => `t${i}`);
    const tooMany = await list(many);
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'name' } });
    expect(tooMany.body.error.message).toMatch(/at most 500 times; got 501/);
    expect((await list(many.slice(0, 500))).status).toBe(200);
    const empty = await list(['customers', '']);
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'invalid_query', details: { parameter: 'name' } });
  });
});
