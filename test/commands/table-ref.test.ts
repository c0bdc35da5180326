// Table names resolved to ids (src/services/table-ref.ts) with a real client over msw: an id sends nothing,
// a name costs one request per process however often it is resolved, and the errors say what to do.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { isTableId, resolveTableId, resolveTableIds } from '../../src/services/table-ref.js';
import { BASE, useMockApi, useMockClient } from '../client/mock-api.js';

const api = useMockApi();
const newClient = useMockClient('cli_tableRefTest0123456');

const row = (id: string, name: string, environmentLabel: string) => ({
  id,
  name,
  mode: 'MODE_A',
  state: 'QUARANTINED',
  gate: 'ADVISORY',
  environmentLabel,
  source: `analytics_${environmentLabel}.${name}`,
  connectorId: `con_${environmentLabel}`,
});

describe('resolveTableId', () => {
  it('an id is used as it is, with no request', async () => {
    expect(isTableId('tbl_1f3a9c0d5e7b2a48')).toBe(true);
    expect(isTableId('stg_orders')).toBe(false);
    expect(await resolveTableId(newClient(), 'tbl_1f3a9c0d5e7b2a48')).toBe('tbl_1f3a9c0d5e7b2a48');
    expect(api.seen).toEqual([]);
  });

  it('a name: one GET /api/tables?name= however often it is resolved', async () => {
    api.use(
      http.get(`${BASE}/api/tables`, ({ request }) =>
        HttpResponse.json({
          tables:
            new URL(request.url).searchParams.get('name') === 'stg_orders'
              ? [row('tbl_1', 'stg_orders', 'dev')]
              : [],
        }),
      ),
    );
    const c = newClient();
    expect(await resolveTableId(c, 'stg_orders')).toBe('tbl_1');
    expect(await resolveTableId(c, 'STG_ORDERS')).toBe('tbl_1');
    expect(api.seen.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual([
      'GET /stage/api/tables?name=stg_orders',
    ]);
  });

  it('several: exit 2 listing each id with its environment; env picks; a wrong env is exit 5', async () => {
    api.use(
      http.get(`${BASE}/api/tables`, () =>
        HttpResponse.json({ tables: [row('tbl_1', 'orders', 'dev'), row('tbl_2', 'orders', 'production')] }),
      ),
    );
    const c = newClient();
    const error = await resolveTableId(c, 'orders').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 2, code: 'ambiguous_table_name' });
    expect((error as CliError).message).toContain('tbl_1  dev');
    expect((error as CliError).message).toContain('tbl_2  production');
    expect((error as CliError).suggestion).toContain('--env');
    expect(await resolveTableId(c, 'orders', { env: 'production' })).toBe('tbl_2');
    await expect(resolveTableId(c, 'orders', { env: 'staging' })).rejects.toMatchObject({
      exitCode: 5,
      code: 'table_not_found',
    });
  });

  it('an id of another shape (t_42) that no table is named: one status request, and the id is used', async () => {
    api.use(
      http.get(`${BASE}/api/tables`, () => HttpResponse.json({ tables: [] })),
      http.get(`${BASE}/api/tables/:id/status`, ({ params }) =>
        params.id === 't_42'
          ? HttpResponse.json({ tableId: 't_42', state: 'QUARANTINED' })
          : HttpResponse.json({ error: 'table_not_found', message: 'no such table' }, { status: 404 }),
      ),
    );
    const c = newClient();
    expect(await resolveTableId(c, 't_42')).toBe('t_42');
    expect(api.seen.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`)).toEqual([
      'GET /stage/api/tables?name=t_42',
      'GET /stage/api/tables/t_42/status',
    ]);
  });

  it('neither a name nor an id: exit 5 table_not_found after the status request says 404', async () => {
    api.use(
      http.get(`${BASE}/api/tables`, () => HttpResponse.json({ tables: [] })),
      http.get(`${BASE}/api/tables/:id/status`, () =>
        HttpResponse.json({ error: 'table_not_found', message: 'no such table' }, { status: 404 }),
      ),
    );
    await expect(resolveTableId(newClient(), 'nope')).rejects.toMatchObject({
      exitCode: 5,
      code: 'table_not_found',
    });
  });
});

describe('resolveTableIds', () => {
  const held = [
    row('tbl_1', 'orders', 'dev'),
    row('tbl_2', 'orders', 'production'),
    row('tbl_3', 'Customers', 'production'),
  ];
  const byNames = () =>
    http.get(`${BASE}/api/tables`, ({ request }) => {
      const names = new URL(request.url).searchParams.getAll('name').map((n) => n.toLowerCase());
      return HttpResponse.json({
        tables: held.filter((t) => names.includes(t.name.toLowerCase())),
        nextCursor: null,
      });
    });
  const sent = () => api.seen.map((r) => `${r.method} ${r.url.pathname}${r.url.search}`);

  it('the names in one request, ids none, each as resolveTableId resolves it (--env picks)', async () => {
    api.use(byNames());
    const ids = await resolveTableIds(newClient(), ['orders', 'tbl_9', 'customers', 'ORDERS'], {
      env: 'production',
    });
    expect(ids).toEqual(['tbl_2', 'tbl_9', 'tbl_3', 'tbl_2']);
    expect(sent()).toEqual(['GET /stage/api/tables?name=orders&name=customers&name=ORDERS&limit=1000']);
  });

  it('several tables of a name: exit 2 as for one reference', async () => {
    api.use(byNames());
    await expect(resolveTableIds(newClient(), ['customers', 'orders'])).rejects.toMatchObject({
      exitCode: 2,
      code: 'ambiguous_table_name',
    });
  });

  it('a name no table holds is asked alone, as resolveTableId asks it: exit 5', async () => {
    api.use(
      byNames(),
      http.get(`${BASE}/api/tables/:id/status`, () =>
        HttpResponse.json({ error: 'table_not_found', message: 'no such table' }, { status: 404 }),
      ),
    );
    await expect(resolveTableIds(newClient(), ['customers', 'nope'])).rejects.toMatchObject({
      exitCode: 5,
      code: 'table_not_found',
    });
    expect(sent().slice(0, 3)).toEqual([
      'GET /stage/api/tables?name=customers&name=nope&limit=1000',
      'GET /stage/api/tables?name=nope',
      'GET /stage/api/tables/nope/status',
    ]);
  });
});
