// Authenticate, then authorize, then validate, on every route. Each operation of
// src/contract/openapi.yaml that takes a credential is called with a body and a query that are wrong in
// every way (a malformed body, unknown fields, a NUL, bad query values) by callers that must not get in:
// none, a forged or tampered JWT, a `tf_` client token (401, never the 400 that would describe the schema);
// and, on a table of the production environment, by callers confined to dev (403, never 400 or 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../src/server/contract.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let productionTable: string;
const callers: Record<string, string | undefined> = {};
const outsiders: Record<string, string> = {};

const contract = loadContract();
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

interface Operation {
  method: string;
  path: string;
  security: unknown;
  /** Served at the origin (its own `servers`: /graphql, /mcp), not under the REST base URL. */
  atOrigin: boolean;
}

function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, unknown>)) {
      if (!METHODS.includes(method)) continue;
      const security = (operation as { security?: unknown }).security;
      // Public operations (discovery, OAuth, refresh, the pages) take no credential.
      if (Array.isArray(security) && security.length === 0) continue;
      found.push({
        method: method.toUpperCase(),
        path,
        security,
        atOrigin: Array.isArray((item as { servers?: unknown }).servers),
      });
    }
  }
  return found;
}

const BAD_QUERY = '?limit=-1&page=zero&cursor=%00&since=yesterday&state=NOPE&bogus=1';
const BAD_BODY = { bogus: '\u0000', tables: 'x', value: 7, runResults: 1, name: 5, env: [], scopes: 'all' };

function urlOf(path: string, tableId: string): string {
  return (
    path
      .replace('{tableId}', tableId)
      .replace('{recordId}', 'rec_missing')
      .replace('{jobId}', 'job_missing')
      .replace('{requestId}', 'rcr_missing')
      .replace('{key}', 'no_such_key')
      .replace('{version}', 'v0')
      .replace(/\{\w+\}/g, 'x') + BAD_QUERY
  );
}

function tamper(jwt: string): string {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  claims.scope = 'workspace:read:audit workspace:write:certify workspace:write:definition';
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  const production = server.ready.tables.find((t) => t.environmentLabel === 'production');
  if (!production) throw new Error('the seed has no production table');
  productionTable = production.id;
  const mgmt = await server.issueToken('OWNER', {
    name: 'all',
    env: '*',
    scopes: ['workspace:read:audit', 'workspace:write:definition', 'workspace:write:recertify'] as never,
  });
  callers['no credential'] = undefined;
  callers['tampered JWT'] = tamper(mgmt.tokens.accessToken);
  callers['tf_ client token'] = mgmt.clientToken;
  callers['garbage bearer'] = 'not-a-token';
  callers['unknown cli_ token'] = 'cli_unknown0000000000000000';
  outsiders['MEMBER confined to dev'] = server.user('MEMBER').cliToken;
  outsiders['MANAGEMENT token of dev'] = (
    await server.issueToken('OWNER', {
      name: 'dev-only',
      env: 'dev',
      scopes: [
        'workspace:read:audit',
        'workspace:write:certify',
        'workspace:write:definition',
        'workspace:write:recertify',
      ] as never,
    })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

async function call(op: Operation, token: string | undefined, tableId: string) {
  const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
  return server.request(op.method, (op.atOrigin ? server.origin : '') + urlOf(op.path, tableId), {
    ...(token === undefined ? {} : { token }),
    ...(hasBody ? { body: BAD_BODY } : {}),
  });
}

describe('every operation that takes a credential', () => {
  it('answers 401 to callers without a valid credential, whatever is wrong with the request', async () => {
    const wrong: string[] = [];
    for (const op of operations()) {
      for (const [who, token] of Object.entries(callers)) {
        const response = await call(op, token, server.table('crm_contacts').id);
        if (response.status !== 401)
          wrong.push(`${op.method} ${op.path} as ${who}: ${response.status} ${response.body?.error?.code}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('answers 403 (401 for the wrong kind of caller), never 400, 404 or 500, to callers outside the table’s environment', async () => {
    const wrong: string[] = [];
    for (const op of operations().filter((o) => o.path.includes('{tableId}'))) {
      for (const [who, token] of Object.entries(outsiders)) {
        const response = await call(op, token, productionTable);
        // A MANAGEMENT token is 401 where only people are taken (wrong audience), and a member's session
        // where only tokens are: both are refusals before validation, as is 403.
        if (![401, 403, 404].includes(response.status) || response.status === 404)
          wrong.push(`${op.method} ${op.path} as ${who}: ${response.status} ${response.body?.error?.code}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
