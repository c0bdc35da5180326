// The authorization matrix: every endpoint x every kind of caller, with the spec's
// status for each cell (§4.1-§4.5, §5, §7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
const tokens: Record<string, string | undefined> = {};
let crm: string;

/** A token whose payload was edited after signing (scope widened): the signature no longer fits. */
function tamper(jwt: string): string {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  claims.scope = `${String(claims.scope)} tables:crm_contacts:write`;
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

/** The same claims, unsigned, with `alg: none`. */
function algNone(jwt: string): string {
  const [, payload] = jwt.split('.') as [string, string];
  return `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
}

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  const grant = (permissions: Array<'read' | 'write'>) => [{ tableId: crm, permissions }];
  const read = await server.issueToken('OWNER', { name: 'read', env: '*', scopes: grant(['read']) });
  const write = await server.issueToken('OWNER', { name: 'write', env: '*', scopes: grant(['write']) });
  tokens['DATA-API read'] = read.tokens.accessToken;
  tokens['DATA-API write'] = write.tokens.accessToken;
  tokens['no token'] = undefined;
  tokens['tf_ client token'] = read.clientToken;
  tokens['tampered JWT'] = tamper(read.tokens.accessToken);
  tokens['alg none JWT'] = algNone(read.tokens.accessToken);
  server.clock.advance(-61 * 60_000);
  tokens['expired JWT'] = (
    await server.issueToken('OWNER', { name: 'old', env: '*', scopes: grant(['read']) })
  ).tokens.accessToken;
  server.clock.reset();
  tokens['MANAGEMENT with scope'] = (
    await server.issueToken('OWNER', {
      name: 'mgmt',
      env: '*',
      scopes: ['workspace:read:audit', 'workspace:read:members'],
    })
  ).tokens.accessToken;
  tokens['MANAGEMENT without scope'] = (
    await server.issueToken('OWNER', { name: 'certifier', env: '*', scopes: ['workspace:write:certify'] })
  ).tokens.accessToken;
  tokens['DATA-API wrong environment'] = (
    await server.issueToken('OWNER', { name: 'staging', env: 'staging', scopes: grant(['read', 'write']) })
  ).tokens.accessToken;
  const globex = server.ready.otherWorkspace;
  const globexOwner = globex.users.find((u) => u.role === 'OWNER');
  const globexTable = globex.tables.find((t) => t.mode === 'MODE_B');
  const other = await server.request('POST', '/api/integration/tokens', {
    token: globexOwner?.accessToken,
    body: {
      name: 'globex',
      env: '*',
      scopes: [{ tableId: globexTable?.id, permissions: ['read', 'write'] }],
    },
  });
  expect(other.status).toBe(201);
  tokens['DATA-API of another workspace'] = other.body.tokens.accessToken;
  tokens['session JWT'] = server.user('OWNER').accessToken;
  tokens['static CLI token'] = server.user('OWNER').cliToken;
});

afterAll(async () => {
  await server?.close();
});

/** A new record in crm_contacts, so that PATCH and DELETE have something to act on. */
async function freshRecord(): Promise<string> {
  const created = await server.request('POST', `/api/tables/${crm}/records`, {
    token: tokens['DATA-API write'],
    body: { email: 'matrix@example.com', full_name: 'Matrix Row' },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

interface Endpoint {
  name: string;
  request(): Promise<{ method: string; path: string; body?: unknown }>;
}

const endpoints: Endpoint[] = [
  {
    name: 'GET records',
    request: async () => ({ method: 'GET', path: `/api/tables/${crm}/records?limit=2` }),
  },
  {
    name: 'POST records',
    request: async () => ({
      method: 'POST',
      path: `/api/tables/${crm}/records`,
      body: { email: 'new@example.com', full_name: 'New Row' },
    }),
  },
  {
    name: 'PATCH record',
    request: async () => ({
      method: 'PATCH',
      path: `/api/tables/${crm}/records/${await freshRecord()}`,
      body: { score: 1 },
    }),
  },
  {
    name: 'DELETE record',
    request: async () => ({ method: 'DELETE', path: `/api/tables/${crm}/records/${await freshRecord()}` }),
  },
  {
    name: 'bulk-update',
    request: async () => ({
      method: 'POST',
      path: `/api/tables/${crm}/bulk-update`,
      body: { records: [{ data: { email: 'bulk@example.com', full_name: 'Bulk Row' } }] },
    }),
  },
  {
    name: 'import',
    request: async () => ({
      method: 'POST',
      path: `/api/tables/${crm}/import?mode=upsert&key=email`,
      body: { rows: [{ email: 'import@example.com', full_name: 'Imported Row' }] },
    }),
  },
  { name: 'audit-log', request: async () => ({ method: 'GET', path: '/api/workspace/audit-log?limit=5' }) },
  { name: 'members', request: async () => ({ method: 'GET', path: '/api/workspace/members' }) },
  {
    name: 'issue token',
    request: async () => ({
      method: 'POST',
      path: '/api/integration/tokens',
      body: { name: 'matrix', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
    }),
  },
  {
    // Takes no Authorization header: whatever bearer comes along is ignored, the body decides.
    name: 'refresh',
    request: async () => ({
      method: 'POST',
      path: '/api/integration/refresh',
      body: {
        refreshToken: (
          await server.issueToken('OWNER', { name: 'r', env: '*', scopes: ['workspace:read:audit'] })
        ).tokens.refreshToken,
      },
    }),
  },
  { name: 'JWKS', request: async () => ({ method: 'GET', path: `${server.origin}/.well-known/jwks.json` }) },
];

// Columns follow `endpoints`: GET, POST, PATCH, DELETE, bulk, import, audit-log, members, issue,
// refresh, JWKS.
const matrix: Record<string, number[]> = {
  'no token': [401, 401, 401, 401, 401, 401, 401, 401, 401, 200, 200],
  'tf_ client token': [401, 401, 401, 401, 401, 401, 401, 401, 401, 200, 200],
  'expired JWT': [401, 401, 401, 401, 401, 401, 401, 401, 401, 200, 200],
  'tampered JWT': [401, 401, 401, 401, 401, 401, 401, 401, 401, 200, 200],
  'alg none JWT': [401, 401, 401, 401, 401, 401, 401, 401, 401, 200, 200],
  'DATA-API read': [200, 403, 403, 403, 403, 403, 401, 401, 401, 200, 200],
  'DATA-API write': [403, 201, 200, 204, 200, 200, 401, 401, 401, 200, 200],
  'MANAGEMENT with scope': [401, 401, 401, 401, 401, 401, 200, 200, 401, 200, 200],
  'MANAGEMENT without scope': [401, 401, 401, 401, 401, 401, 403, 403, 401, 200, 200],
  'DATA-API wrong environment': [403, 403, 403, 403, 403, 403, 401, 401, 401, 200, 200],
  'DATA-API of another workspace': [404, 404, 404, 404, 404, 404, 401, 401, 401, 200, 200],
  'session JWT': [401, 401, 401, 401, 401, 401, 200, 200, 201, 200, 200],
  'static CLI token': [401, 401, 401, 401, 401, 401, 200, 200, 201, 200, 200],
};

function nth(statuses: number[], i: number): number {
  const status = statuses[i];
  if (status === undefined) throw new Error(`matrix row has no column ${i}`);
  return status;
}

const cells = Object.entries(matrix).flatMap(([caller, statuses]) =>
  endpoints.map((endpoint, i) => ({ caller, endpoint, status: nth(statuses, i) })),
);

describe('authorization matrix', () => {
  it.each(cells)('$caller on $endpoint.name -> $status', async ({ caller, endpoint, status }) => {
    const { method, path, body } = await endpoint.request();
    const response = await server.request(method, path, {
      ...(tokens[caller] === undefined ? {} : { token: tokens[caller] }),
      ...(body === undefined ? {} : { body }),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
    if (status >= 400) expect(response.body.error.code).toMatch(/^[a-z_]+$/);
  });

  it('says why a DATA-API token is refused on a management endpoint, before looking at scopes', async () => {
    const response = await server.request('GET', '/api/workspace/members', {
      token: tokens['DATA-API read'],
    });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('wrong_audience');
  });

  it('names the kind of refusal on table endpoints', async () => {
    const codes = async (caller: string, path: string) =>
      (await server.request('GET', path, { token: tokens[caller] })).body.error.code;
    const records = `/api/tables/${crm}/records`;
    expect(await codes('tf_ client token', records)).toBe('client_token_not_accepted');
    expect(await codes('expired JWT', records)).toBe('token_expired');
    expect(await codes('tampered JWT', records)).toBe('invalid_token');
    expect(await codes('MANAGEMENT with scope', records)).toBe('wrong_audience');
    expect(await codes('DATA-API wrong environment', records)).toBe('environment_mismatch');
    expect(await codes('DATA-API of another workspace', records)).toBe('table_not_found');
    expect(await codes('DATA-API write', records)).toBe('missing_permission');
    const customers = `/api/tables/${server.table('customers').id}/records`;
    expect(await codes('DATA-API read', customers)).toBe('table_not_in_scope');
  });
});

// Each role at mint (§2.2, §5.5): table grants need the table owner or ADMIN/OWNER; workspace read
// scopes need ADMIN/OWNER; workspace write scopes need STEWARD or above.
describe('mint-time role rules', () => {
  const roles = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'] as const;
  const requests: Array<{ name: string; scopes: () => unknown[]; expected: number[] }> = [
    {
      name: 'read grant on crm_contacts (owned by ADMIN)',
      scopes: () => [{ tableId: crm, permissions: ['read'] }],
      expected: [201, 201, 403, 403],
    },
    {
      name: 'write grant on orders (owned by MEMBER)',
      scopes: () => [{ tableId: server.table('orders').id, permissions: ['write'] }],
      expected: [201, 201, 403, 201],
    },
    {
      name: 'read grant on customers (owned by STEWARD)',
      scopes: () => [{ tableId: server.table('customers').id, permissions: ['read'] }],
      expected: [201, 201, 201, 403],
    },
    ...['workspace:read:audit', 'workspace:read:members'].map((scope) => ({
      name: scope,
      scopes: () => [scope],
      expected: [201, 201, 403, 403],
    })),
    ...['workspace:write:certify', 'workspace:write:definition', 'workspace:write:recertify'].map(
      (scope) => ({
        name: scope,
        scopes: () => [scope],
        expected: [201, 201, 201, 403],
      }),
    ),
    {
      name: 'a DATA-API grant with the certify scope',
      scopes: () => [{ tableId: crm, permissions: ['write'] }, 'workspace:write:certify'],
      expected: [400, 400, 400, 400],
    },
  ];
  const mintCells = requests.flatMap((r) =>
    roles.map((role, i) => ({ role, name: r.name, scopes: r.scopes, status: nth(r.expected, i) })),
  );

  it.each(mintCells)('$role minting $name -> $status', async ({ role, scopes, status }) => {
    const response = await server.request('POST', '/api/integration/tokens', {
      token: server.user(role).accessToken,
      body: { name: 'mint', env: 'dev', scopes: scopes() },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(status);
  });
});

// Replacing a definition redefines (and de-certifies) the table, so a person needs the delete rule: the
// table's owner or a workspace admin. A MANAGEMENT token with workspace:write:definition keeps its right.
describe('replace-time role rules', () => {
  const roles = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'] as const;
  const tables: Array<{ name: string; expected: number[] }> = [
    { name: 'customers', expected: [202, 202, 202, 403] }, // owned by STEWARD, CERTIFIED
    { name: 'orders', expected: [202, 202, 403, 202] }, // owned by MEMBER
  ];
  const replaceCells = tables.flatMap((t) =>
    roles.map((role, i) => ({ role, table: t.name, status: nth(t.expected, i) })),
  );

  let replacements = 0;
  /**
   * The table's own columns again with a new decision context, so a permitted replace changes the
   * definition (an identical one would answer 200 "no change") and nothing else of the table.
   */
  async function changedDefinition(tableId: string) {
    replacements += 1;
    const [row] = await server.sql<{ name: string; source: string; columns: Array<{ name: string }> }>(
      'SELECT name, source, columns FROM gds.tables WHERE id = $1',
      [tableId],
    );
    if (!row) throw new Error(`no table ${tableId}`);
    const lines = [
      `table: ${row.name}`,
      `source: ${row.source}`,
      `decision_context: replacement ${replacements}`,
      'columns:',
    ];
    return {
      filename: `${row.name}.yml`,
      content: [...lines, ...row.columns.map((c) => `  - name: ${c.name}`)].join('\n'),
      replaceId: tableId,
    };
  }

  const snapshot = async (tableId: string) => ({
    table: await server.sql('SELECT state, columns, definition_version FROM gds.tables WHERE id = $1', [
      tableId,
    ]),
    replaced: await server.sql(
      `SELECT id FROM gds.audit_log WHERE table_id = $1 AND action = 'DEFINITION_REPLACED'`,
      [tableId],
    ),
  });

  it.each(replaceCells)(
    '$role replacing $table with a CLI token -> $status',
    async ({ role, table, status }) => {
      const tableId = server.table(table).id;
      const before = await snapshot(tableId);
      const response = await server.request('POST', '/api/artifacts', {
        token: server.user(role).cliToken,
        body: await changedDefinition(tableId),
      });
      expect(response.status, JSON.stringify(response.body)).toBe(status);
      if (status === 403) {
        expect(response.body.error).toMatchObject({
          code: 'replace_forbidden',
          message: "Only table owners or workspace admins can replace this table's definition",
        });
        expect(await snapshot(tableId)).toEqual(before);
      }
    },
  );

  it('refuses a MEMBER session JWT on a table it does not own, as the CLI token', async () => {
    const tableId = server.table('customers').id;
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('MEMBER').accessToken,
      body: await changedDefinition(tableId),
    });
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('replace_forbidden');
  });

  it('lets a MANAGEMENT token with workspace:write:definition replace a table its issuer does not own', async () => {
    const tableId = server.table('orders').id;
    const definer = await server.issueToken('STEWARD', {
      name: 'definer',
      env: 'dev',
      scopes: ['workspace:write:definition'],
    });
    const connectorId = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;
    const response = await server.request('POST', '/api/workspace/definitions', {
      token: definer.tokens.accessToken,
      body: { ...(await changedDefinition(tableId)), mimeType: 'yaml', connectorId },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(202);
  });
});
