// §7.1 on the table endpoints that take a body: a caller they refuse hears that refusal whatever body it
// sent, in the spec's order: authentication and audience (401), the table outside the token's grant or its
// permission (403), an unknown table (404); only then a body that is not JSON (400) or over the request
// limit (413).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import { ENGINES } from '../helpers/engines.js';
import { rawAnswer } from '../helpers/raw-answer.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const NOT_JSON = '{"email": [';
const OVERSIZED = JSON.stringify({ pad: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES + 1024) });

describe.each(ENGINES)('a table endpoint and a caller it refuses on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let crm = '';
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({
      jobs: 'manual',
      ...(postgres ? { database: 'postgres' as const } : {}),
    });
    crm = server.table('crm_contacts').id;
    const issue = async (scopes: unknown) =>
      (await server.issueToken('OWNER', { name: 'refused', env: '*', scopes: scopes as never })).tokens
        .accessToken;
    tokens.writer = await issue([{ tableId: crm, permissions: ['read', 'write'] }]);
    tokens.reader = await issue([{ tableId: crm, permissions: ['read'] }]);
    tokens.elsewhere = await issue([{ tableId: server.table('orders').id, permissions: ['read', 'write'] }]);
    tokens.management = await issue(['workspace:write:definition']);
  });
  afterAll(async () => {
    await server?.close();
  });

  const send = (method: string, path: string, token: string, body: string) =>
    rawAnswer(server.url + path, method, token, body);

  const routesOf = (table: string) => [
    { method: 'POST', path: `/api/tables/${table}/records` },
    { method: 'PATCH', path: `/api/tables/${table}/records/rec_none` },
    { method: 'POST', path: `/api/tables/${table}/bulk-update` },
    { method: 'POST', path: `/api/tables/${table}/import?mode=upsert&key=email` },
  ];

  it('is 401, 403 or 404 before the body is read, whatever the body', needs(skip), async () => {
    for (const body of [NOT_JSON, OVERSIZED]) {
      const what = body === NOT_JSON ? 'not JSON' : 'oversized';
      for (const { method, path } of routesOf(crm)) {
        expect(await send(method, path, tokens.management ?? '', body), `MANAGEMENT ${path} ${what}`).toEqual(
          {
            status: 401,
            code: 'wrong_audience',
          },
        );
        expect(
          (await send(method, path, tokens.elsewhere ?? '', body)).status,
          `no grant ${path} ${what}`,
        ).toBe(403);
        expect(
          (await send(method, path, tokens.reader ?? '', body)).status,
          `read only ${path} ${what}`,
        ).toBe(403);
      }
      for (const { method, path } of routesOf('tbl_none')) {
        expect((await send(method, path, tokens.writer ?? '', body)).status, `${path} ${what}`).toBe(404);
      }
    }
  });

  it(
    'is 404 for a record the table does not hold, before the body is read, whatever the body',
    needs(skip),
    async () => {
      // A record of another table (`legacy_leads`'s) is outside this table's scope: missing here too.
      const [other] = await server.sql<{ id: string }>(
        'SELECT id FROM gds.records WHERE table_id = $1 ORDER BY id LIMIT 1',
        [server.table('legacy_leads').id],
      );
      const orders = server.table('orders').id;
      const missing = [
        [crm, 'rec_none', tokens.writer],
        [crm, other?.id ?? '', tokens.writer],
        // A Mode A table's record is looked for in its warehouse object.
        [orders, 'rec_none', tokens.elsewhere],
      ] as const;
      for (const [table, record, token] of missing) {
        for (const body of [NOT_JSON, OVERSIZED, '{"email": 5}', '{}']) {
          const what = `${table}/records/${record} ${body.slice(0, 12)}`;
          for (const method of ['PATCH', 'DELETE']) {
            expect(
              await send(method, `/api/tables/${table}/records/${record}`, token ?? '', body),
              `${method} ${what}`,
            ).toEqual({
              status: 404,
              code: 'record_not_found',
            });
          }
        }
      }
      const [count] = await server.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM gds.records WHERE id = $1',
        [other?.id ?? ''],
      );
      expect(count?.n).toBe(1);
    },
  );

  it('is still 400 (not JSON) and 413 (oversized) for a caller the endpoint takes', needs(skip), async () => {
    const [record] = await server.sql<{ id: string }>(
      'SELECT id FROM gds.records WHERE table_id = $1 ORDER BY id LIMIT 1',
      [crm],
    );
    const routes = [
      ...routesOf(crm).filter(({ method }) => method !== 'PATCH'),
      { method: 'PATCH', path: `/api/tables/${crm}/records/${record?.id ?? ''}` },
    ];
    for (const { method, path } of routes) {
      expect((await send(method, path, tokens.writer ?? '', NOT_JSON)).status, path).toBe(400);
      expect((await send(method, path, tokens.writer ?? '', OVERSIZED)).status, path).toBe(413);
    }
  });
});
