// The data plane's reads beside the spec's list: one record by the id a listing gives it (Mode B from the
// service's storage, Mode A from the warehouse object), and the table's columns for a client that writes
// rows (`gds records import`). Read scope; rate-limit headers on each answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let crm: string;
let customers: string;
let token: string;
let writeOnly: string;

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  customers = server.table('customers').id;
  const issued = await server.issueToken('OWNER', {
    name: 'reads',
    env: 'dev',
    scopes: [
      { tableId: crm, permissions: ['read'] },
      { tableId: customers, permissions: ['read'] },
    ],
  });
  token = issued.tokens.accessToken;
  writeOnly = (
    await server.issueToken('OWNER', {
      name: 'w',
      env: 'dev',
      scopes: [{ tableId: crm, permissions: ['write'] }],
    })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

const get = (path: string, bearer = token) => server.request('GET', path, { token: bearer });

describe('GET /api/tables/{tableId}/records/{recordId}', () => {
  it('answers every record a listing gives, Mode B and Mode A alike, with the rate headers', async () => {
    for (const tableId of [crm, customers]) {
      const page = await get(`/api/tables/${tableId}/records?limit=100`);
      expect(page.body.records.length).toBeGreaterThan(0);
      for (const record of page.body.records) {
        const one = await get(`/api/tables/${tableId}/records/${encodeURIComponent(record.id)}`);
        expect(one.status).toBe(200);
        expect(one.body).toEqual(record);
        expect(one.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      }
    }
  });

  it('404 for an id the table does not have; 403 without read', async () => {
    expect((await get(`/api/tables/${crm}/records/rec_nothing`)).status).toBe(404);
    expect((await get(`/api/tables/${customers}/records/nothing`)).status).toBe(404);
    expect((await get(`/api/tables/${customers}/records/row:(0,999)`)).status).toBe(404);
    const page = await get(`/api/tables/${crm}/records?limit=1`);
    expect((await get(`/api/tables/${crm}/records/${page.body.records[0].id}`, writeOnly)).status).toBe(403);
  });
});

describe('GET /api/tables/{tableId}/columns', () => {
  it('gives the declared columns in order, their types and which are required', async () => {
    const answer = await get(`/api/tables/${crm}/columns`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      tableId: crm,
      name: 'crm_contacts',
      mode: 'MODE_B',
      columns: [
        { name: 'email', type: 'text', required: true },
        { name: 'full_name', type: 'text', required: true },
        { name: 'company', type: 'text', required: false },
        { name: 'phone', type: 'text', required: false },
        { name: 'score', type: 'integer', required: false },
      ],
    });
    const warehouse = await get(`/api/tables/${customers}/columns`);
    expect(warehouse.body.mode).toBe('MODE_A');
    expect(warehouse.body.columns.length).toBeGreaterThan(0);
  });

  it('needs read on the table (403) and a DATA-API token (401)', async () => {
    expect((await get(`/api/tables/${crm}/columns`, writeOnly)).status).toBe(403);
    expect((await get(`/api/tables/${crm}/columns`, server.user('OWNER').accessToken)).status).toBe(401);
  });
});
