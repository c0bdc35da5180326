// The endpoints a person calls (a session JWT or `cli_` token: gates, config, reject, contract intent,
// promotions, tokens, …) answer a caller they refuse (a DATA-API or MANAGEMENT token: 401; a person below
// the route's role: 403) with that refusal whatever body it sent: a body that is not JSON, or one over the
// request limit, is a 400 or 413 only for a caller the route takes. A route of one table refuses next, still
// before the body, a table that does not exist (404) or is outside the person's environments (403): §7.2's
// order, authentication, then authorization, then the body. The §7.2 endpoints are
// management-refusals-first.test.ts's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import { rawAnswer } from '../helpers/raw-answer.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let orders: string;
let dataApi: string;
let management: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  orders = server.table('orders').id;
  const crm = server.table('crm_contacts').id;
  const issue = async (scopes: unknown) =>
    (await server.issueToken('OWNER', { name: 'refused', env: '*', scopes: scopes as never })).tokens
      .accessToken;
  dataApi = await issue([{ tableId: crm, permissions: ['read', 'write'] }]);
  management = await issue(['workspace:write:definition', 'workspace:write:recertify']);
  // The ADMIN acts in staging alone: the dev table `orders` is outside its environments.
  await server.sql(
    `UPDATE gds.memberships SET env_scope = $2 WHERE user_id = (SELECT id FROM gds.users WHERE email = $1)`,
    [server.user('ADMIN').email, JSON.stringify(['staging'])],
  );
});
afterAll(async () => {
  await server?.close();
});

const send = (method: string, path: string, token: string, body: string) =>
  rawAnswer(server.url + path, method, token, body);

const NOT_JSON = '{"content": [';
const OVERSIZED = JSON.stringify({ pad: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES + 1024) });

/**
 * Every route a person alone calls that can be sent a body, with the role below which a person is refused;
 * `unread`: the route reads no body (it still must refuse such a caller before Fastify parses one);
 * `table`: the route acts on the table its path names (`table` is that id); `missing`: the 404 code of a
 * path id that names nothing (the job, request and token ids here never name one).
 */
interface Route {
  method: string;
  path: string;
  below?: 'MEMBER';
  unread?: true;
  table?: true;
  missing?: string;
}
const TABLE_NOT_FOUND = { table: true, missing: 'table_not_found' } as const;
const routes = (table = orders): Route[] => [
  { method: 'POST', path: '/api/artifacts/batch' },
  { method: 'POST', path: '/api/artifacts/dry-run' },
  { method: 'POST', path: `/api/tables/${table}/reject`, below: 'MEMBER', ...TABLE_NOT_FOUND },
  { method: 'PUT', path: '/api/config/gateMode', below: 'MEMBER' },
  { method: 'PATCH', path: `/api/tables/${table}/semantic-contract`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: '/api/gate-jobs/job_none/cancel', missing: 'job_not_found' },
  { method: 'PUT', path: `/api/tables/${table}/gate1`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: `/api/tables/${table}/gate1/suggestions`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: `/api/tables/${table}/gate-runs`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: `/api/tables/${table}/gate-submissions`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: '/api/integration/tokens' },
  { method: 'POST', path: '/api/integration/short-lived-tokens' },
  { method: 'POST', path: `/api/tables/${table}/promotions`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: '/api/bundles' },
  {
    method: 'POST',
    path: '/api/recertification-requests/rr_none/dismiss',
    missing: 'recertification_request_not_found',
  },
  { method: 'POST', path: '/api/integration/tokens/revoke' },
  { method: 'POST', path: '/api/cli-tokens' },
  { method: 'POST', path: '/api/cli-tokens/clt_none/revoke', unread: true, missing: 'token_not_found' },
  { method: 'POST', path: '/api/auth/revoke', unread: true },
  { method: 'DELETE', path: `/api/tables/${table}`, unread: true, ...TABLE_NOT_FOUND },
  { method: 'PUT', path: `/api/tables/${table}/project`, ...TABLE_NOT_FOUND },
  { method: 'POST', path: `/api/tables/${table}/versions/restore`, below: 'MEMBER', ...TABLE_NOT_FOUND },
];

describe('a person-only route and a caller it refuses, with a body it cannot read', () => {
  it('is 401 for a DATA-API or MANAGEMENT token, not JSON or oversized', async () => {
    for (const { method, path } of routes()) {
      for (const [token, who] of [
        [dataApi, 'DATA-API'],
        [management, 'MANAGEMENT'],
      ] as const) {
        expect(await send(method, path, token, NOT_JSON), `${who} ${method} ${path} not JSON`).toEqual({
          status: 401,
          code: 'wrong_audience',
        });
      }
      const oversized = await send(method, path, dataApi, OVERSIZED);
      expect(oversized, `DATA-API ${method} ${path} oversized`).toEqual({
        status: 401,
        code: 'wrong_audience',
      });
    }
  });

  it('is 403 for a person below the route’s role', async () => {
    for (const { method, path, below } of routes()) {
      if (below === undefined) continue;
      const token = server.user(below).accessToken;
      for (const body of [NOT_JSON, OVERSIZED]) {
        expect(await send(method, path, token, body), `${below} ${method} ${path}`).toEqual({
          status: 403,
          code: 'role_too_low',
        });
      }
    }
  });

  it('is 404 for a table, job, request or token that does not exist, and 403 for a table outside the person’s environments', async () => {
    const owner = server.user('OWNER').accessToken;
    const elsewhere = server.user('ADMIN').accessToken;
    for (const body of [NOT_JSON, OVERSIZED]) {
      const what = body === NOT_JSON ? 'not JSON' : 'oversized';
      for (const { method, path, missing } of routes('tbl_none')) {
        if (missing === undefined) continue;
        expect(await send(method, path, owner, body), `${method} ${path} ${what}`).toEqual({
          status: 404,
          code: missing,
        });
      }
      for (const { method, path, table } of routes()) {
        if (table === undefined) continue;
        expect(await send(method, path, elsewhere, body), `${method} ${path} ${what}`).toEqual({
          status: 403,
          code: 'environment_forbidden',
        });
      }
    }
  });

  it('is still 400 (not JSON) and 413 (oversized) for a person the route takes', async () => {
    const owner = server.user('OWNER').accessToken;
    for (const { method, path, unread, table, missing } of routes()) {
      // A path id that names nothing is its 404 (above), whatever the body.
      if (unread || (missing !== undefined && table === undefined)) continue;
      expect((await send(method, path, owner, NOT_JSON)).status, `${method} ${path}`).toBe(400);
      expect((await send(method, path, owner, OVERSIZED)).status, `${method} ${path}`).toBe(413);
    }
  });
});
