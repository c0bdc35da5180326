// §7.2: a management endpoint answers a caller it refuses (wrong audience 401, missing scope or role 403)
// with that refusal whatever body it sent: a body that is not JSON, or one over the endpoint's size limit,
// is a 400 or 413 only for a caller the endpoint takes. certify's table comes next, still before the body:
// 404 when there is none, 403 when the caller may not write it (§7.2's order of causes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawAnswer } from '../helpers/raw-answer.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
const tokens: Record<string, string> = {};
let orders: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  orders = server.table('orders').id;
  const crm = server.table('crm_contacts').id;
  const issue = async (scopes: unknown) =>
    (await server.issueToken('OWNER', { name: 'refusals', env: '*', scopes: scopes as never })).tokens
      .accessToken;
  tokens.data = await issue([{ tableId: crm, permissions: ['read', 'write'] }]);
  tokens.audit = await issue(['workspace:read:audit']);
  tokens.definition = await issue(['workspace:write:definition']);
  tokens.recertify = await issue(['workspace:write:recertify']);
  tokens.certify = await issue(['workspace:write:certify']);
  const certifier = async (role: 'OWNER' | 'STEWARD', env: string) =>
    (await server.issueToken(role, { name: 'certifier', env, scopes: ['workspace:write:certify'] as never }))
      .tokens.accessToken;
  tokens.production = await certifier('OWNER', 'production');
  tokens.steward = await certifier('STEWARD', 'dev');
});
afterAll(async () => {
  await server?.close();
});

const post = (path: string, token: string, body: string) => rawAnswer(server.url + path, 'POST', token, body);

const NOT_JSON = '{"tables": [';
const OVERSIZED = JSON.stringify({ tables: ['orders'], evidence: { pad: 'x'.repeat(26 * 1024 * 1024) } });

describe('a refused caller with a body the endpoint cannot read', () => {
  const endpoints = () => [
    { path: '/api/workspace/recertify', allowed: tokens.recertify ?? '' },
    { path: '/api/workspace/definitions', allowed: tokens.definition ?? '' },
    { path: `/api/tables/${orders}/semantic-contract/certify`, allowed: tokens.certify ?? '' },
  ];

  it('is 401 for a DATA-API token or a session, and 403 for a MANAGEMENT token without the scope', async () => {
    for (const { path } of endpoints()) {
      for (const body of [NOT_JSON, OVERSIZED]) {
        const what = `${path} ${body === NOT_JSON ? 'not JSON' : 'oversized'}`;
        expect((await post(path, tokens.data ?? '', body)).status, `DATA-API ${what}`).toBe(401);
        expect((await post(path, tokens.audit ?? '', body)).status, `no scope ${what}`).toBe(403);
      }
    }
    for (const path of ['/api/workspace/recertify', '/api/workspace/definitions']) {
      const session = await post(path, server.user('OWNER').accessToken, NOT_JSON);
      expect(session, path).toEqual({ status: 401, code: 'wrong_audience' });
    }
    const member = await post(
      `/api/tables/${orders}/semantic-contract/certify`,
      server.user('MEMBER').accessToken,
      NOT_JSON,
    );
    expect(member).toEqual({ status: 403, code: 'role_too_low' });
    const push = await post('/api/artifacts', tokens.definition ?? '', NOT_JSON);
    expect(push.status).toBe(401);
  });

  it('certify: 404 for a table that does not exist, 403 for one the token may not write', async () => {
    const certify = (table: string) => `/api/tables/${table}/semantic-contract/certify`;
    for (const body of [NOT_JSON, OVERSIZED]) {
      const what = body === NOT_JSON ? 'not JSON' : 'oversized';
      expect(await post(certify('tbl_none'), tokens.certify ?? '', body), what).toEqual({
        status: 404,
        code: 'table_not_found',
      });
      expect(await post(certify(orders), tokens.production ?? '', body), what).toEqual({
        status: 403,
        code: 'environment_forbidden',
      });
      // Its issuer neither owns the table nor is a workspace admin.
      expect(await post(certify(orders), tokens.steward ?? '', body), what).toEqual({
        status: 403,
        code: 'table_write_forbidden',
      });
    }
  });

  it('is still 400 (not JSON) and 413 (oversized) for a caller the endpoint takes', async () => {
    for (const { path, allowed } of endpoints()) {
      expect((await post(path, allowed, NOT_JSON)).status, path).toBe(400);
      expect((await post(path, allowed, OVERSIZED)).status, path).toBe(413);
    }
  });
});
