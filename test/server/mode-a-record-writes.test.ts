// PATCH and DELETE of one record of a Mode A table, on both engines (§4.3, §7.1): a record id the warehouse
// object does not hold is 404 `record_not_found`, as the spec says for a missing record; a record that is
// there is 400 `read_only_table` (docs/spec-deviations.md), and the warehouse is never written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('one record of a Mode A table on $engine', (engine) => {
  let server: TestServer;
  let customers: string;
  let token: string;

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    server = await startTestServer(engine.postgres ? { database: 'postgres' } : {});
    customers = server.table('customers').id;
    token = (
      await server.issueToken('OWNER', {
        name: 'mode-a-writes',
        env: server.table('customers').environmentLabel,
        scopes: [{ tableId: customers, permissions: ['read', 'write'] }],
      })
    ).tokens.accessToken;
  });
  afterAll(async () => {
    await server?.close();
  });

  const call = (method: string, recordId: string, body?: unknown) =>
    server.request(method, `/api/tables/${customers}/records/${encodeURIComponent(recordId)}`, {
      token,
      ...(body === undefined ? {} : { body }),
    });
  const warehouseRows = async () =>
    (await server.request('GET', `/api/tables/${customers}/records?limit=100`, { token })).body.records;

  it(
    'answers 404 record_not_found to DELETE and PATCH of an id the warehouse object lacks',
    needs(engine.skip),
    async () => {
      const before = await warehouseRows();
      for (const recordId of ['no-such-record', 'row:(0,999)', 'row:(bad)']) {
        for (const [method, body] of [
          ['DELETE', undefined],
          ['PATCH', { email: 'changed@example.com' }],
        ] as const) {
          const response = await call(method, recordId, body);
          expect(response.status, `${method} ${recordId}`).toBe(404);
          expect(response.body.error.code).toBe('record_not_found');
          expect(response.body.error.details).toMatchObject({ tableId: customers, recordId });
        }
      }
      expect(await warehouseRows()).toEqual(before);
    },
  );

  it(
    'answers 400 read_only_table to DELETE and PATCH of a record that is there, and writes nothing',
    needs(engine.skip),
    async () => {
      const before = await warehouseRows();
      expect(before.find((r: { id: string }) => r.id === 'c01')).toBeDefined();
      for (const [method, body] of [
        ['DELETE', undefined],
        ['PATCH', { email: 'changed@example.com' }],
      ] as const) {
        const response = await call(method, 'c01', body);
        expect(response.status, method).toBe(400);
        expect(response.body.error.code).toBe('read_only_table');
      }
      expect(await warehouseRows()).toEqual(before);
      const audit = await server.sql(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND resource = 'record'`,
        [customers],
      );
      expect(audit[0].n).toBe(0);
    },
  );

  it(
    'still answers 403 before anything else to a token without write on the table',
    needs(engine.skip),
    async () => {
      const reader = (
        await server.issueToken('OWNER', {
          name: 'mode-a-reader',
          env: server.table('customers').environmentLabel,
          scopes: [{ tableId: customers, permissions: ['read'] }],
        })
      ).tokens.accessToken;
      for (const recordId of ['c01', 'no-such-record']) {
        const response = await server.request('DELETE', `/api/tables/${customers}/records/${recordId}`, {
          token: reader,
        });
        expect(response.status, recordId).toBe(403);
      }
    },
  );

  it(
    'answers 404 to DELETE and PATCH once the warehouse object is gone: it holds no record',
    needs(engine.skip),
    async () => {
      const [{ source }] = await server.sql('SELECT source FROM gds.tables WHERE id = $1', [customers]);
      const [schema, name] = String(source).split('.');
      await server.sql(`ALTER TABLE "${schema}"."${name}" RENAME TO "${name}_moved"`);
      try {
        for (const [method, body] of [
          ['DELETE', undefined],
          ['PATCH', { email: 'changed@example.com' }],
        ] as const) {
          const response = await call(method, 'c01', body);
          expect(response.status, method).toBe(404);
          expect(response.body.error.code).toBe('record_not_found');
        }
        const read = await server.request('GET', `/api/tables/${customers}/records/c01`, { token });
        expect(read.status).toBe(409);
      } finally {
        await server.sql(`ALTER TABLE "${schema}"."${name}_moved" RENAME TO "${name}"`);
      }
    },
  );
});
