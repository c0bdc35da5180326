// The authorization matrix, re-run as a test. Every operation of src/contract/openapi.yaml that
// takes a credential is called by every kind of caller the service knows — none, forged, tampered and expired
// JWTs, a `tf_` client token as bearer, an unknown `cli_` token, another workspace's CLI token, people of each
// role (OWNER, ADMIN, STEWARD confined to dev+staging, MEMBER confined to dev), MANAGEMENT tokens (every scope;
// every scope but only dev; one scope each), a DATA-API token granted one dev table — on a dev table and on a
// production table, each with a body (and query) that is valid and one that is wrong in every way.
//
// What the spec denies (§5, §7) is written down below per cell; a denied cell must answer 401 or 403 (404 where
// the caller cannot know the object exists: another workspace's ids), never 400 (validation before
// authorization), never 2xx, never 5xx; an allowed cell never answers 5xx.
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../src/server/contract.js';
import { DATA_PLANE_ROUTES } from '../../src/server/routes/records.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

const contract = loadContract();
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
type Role = 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
const RANK: Record<Role, number> = { OWNER: 4, ADMIN: 3, STEWARD: 2, MEMBER: 1 };

interface Operation {
  id: string;
  method: string;
  path: string;
  bodySchema: unknown;
  /** Served at the origin (its own `servers`: /graphql, /mcp), not under the REST base URL. */
  atOrigin: boolean;
}

type Credential =
  | { kind: 'invalid' }
  | { kind: 'session'; role: Role; envs: string[] }
  | { kind: 'other-workspace' }
  | { kind: 'management'; scopes: string[]; env: string }
  | { kind: 'data'; env: string; tables: string[] };

interface Caller {
  name: string;
  token: string | undefined;
  credential: Credential;
}

// How each operation takes its callers (src/server/auth/caller.ts guards, §4 and §5 of the spec).
// The table endpoints (data plane) are the server's own list, so that a new one is walked as one.
// The GraphQL and MCP doors take exactly the table endpoints' tokens; a grant's reach is answered in their body.
const DOORS = new Set(['graphqlQuery', 'mcpMessage', 'mcpStream']);
const isDataPlane = (op: Operation) =>
  DOORS.has(op.id) || DATA_PLANE_ROUTES.has(op.path.replace(/\{(\w+)\}/g, ':$1'));
const MANAGEMENT_ONLY: Record<string, string> = {
  registerDefinition: 'workspace:write:definition',
  recertify: 'workspace:write:recertify',
};
const MANAGEMENT_OR_SESSION: Record<string, string> = {
  listAuditLog: 'workspace:read:audit',
  listMembers: 'workspace:read:members',
  certifyTable: 'workspace:write:certify',
  // A definition names its connector: MANAGEMENT tokens that register definitions may read them.
  listConnectors: 'workspace:write:definition',
  listConnectorObjects: 'workspace:write:definition',
};
// Token lists and revocations take any member: each sees and ends their own, an ADMIN anyone's.
const MINIMUM_ROLE: Record<string, Role> = {
  setConfig: 'ADMIN',
  certifyTable: 'STEWARD',
  rejectTable: 'STEWARD',
  restoreContractVersion: 'STEWARD',
  listNotifications: 'STEWARD',
};
// Operations whose success would end the matrix's own callers or tables: called only where they must be refused.
const DESTRUCTIVE = new Set(['revokeOwnCredential', 'deleteTable']);

/** The statuses a cell may answer: a refusal set, or `allowed` (anything below 500). */
function expected(
  op: Operation,
  credential: Credential,
  tableEnv: string | null,
  tableId: string | null,
): number[] | 'allowed' {
  const usesIds = /\{(tableId|jobId|requestId|tokenId|recordId)\}/.test(op.path);
  const REFUSED = [401, 403];
  // `whoami`: any valid credential is told who it is.
  if (op.id === 'getMe') return credential.kind === 'invalid' ? [401] : 'allowed';
  switch (credential.kind) {
    case 'invalid':
      return [401];
    case 'data':
      if (!isDataPlane(op)) return [401];
      if (DOORS.has(op.id)) return 'allowed';
      if (tableId === null || !credential.tables.includes(tableId)) return REFUSED;
      if (credential.env !== '*' && credential.env !== tableEnv) return REFUSED;
      return 'allowed';
    case 'management': {
      const scope = MANAGEMENT_ONLY[op.id] ?? MANAGEMENT_OR_SESSION[op.id];
      if (scope === undefined) return [401];
      if (!credential.scopes.includes(scope)) return REFUSED;
      if (tableEnv !== null && credential.env !== '*' && credential.env !== tableEnv) return REFUSED;
      return 'allowed';
    }
    case 'other-workspace':
      if (isDataPlane(op) || op.id in MANAGEMENT_ONLY) return [401];
      return usesIds ? [...REFUSED, 404] : 'allowed';
    case 'session': {
      if (isDataPlane(op) || op.id in MANAGEMENT_ONLY) return [401];
      if (tableEnv !== null && !credential.envs.includes(tableEnv)) return REFUSED;
      const minimum = MINIMUM_ROLE[op.id];
      // Certify takes an interactive sign-in (§5.9): a CLI token is 401 there, a refusal too.
      if (minimum !== undefined && RANK[credential.role] < RANK[minimum]) return REFUSED;
      return 'allowed';
    }
  }
}

function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = operation as {
        operationId: string;
        security?: unknown;
        requestBody?: { content?: Record<string, { schema?: unknown }> };
      };
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      found.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        bodySchema: op.requestBody?.content?.['application/json']?.schema,
        atOrigin: Array.isArray((item as { servers?: unknown }).servers),
      });
    }
  }
  return found;
}

type Schema = Record<string, unknown>;

function resolve(schema: unknown): Schema {
  let current = (schema ?? {}) as Schema;
  while (typeof current.$ref === 'string') {
    const name = current.$ref.replace('#/components/schemas/', '');
    current = (contract.components.schemas as Record<string, Schema>)[name] ?? {};
  }
  return current;
}

/** A minimal instance of a request schema: required properties only, the first of every choice. */
function instance(schema: unknown, depth = 0): unknown {
  const s = resolve(schema);
  if (depth > 8) return undefined;
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const choice of ['oneOf', 'anyOf'] as const) {
    const options = s[choice];
    if (Array.isArray(options) && options.length > 0) return instance(options[0], depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    return Object.assign({}, ...s.allOf.map((part) => instance(part, depth + 1) as object));
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string':
      if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (s.format === 'email') return 'someone@example.com';
      if (typeof s.pattern === 'string' && /sha|\[0-9a-f\]\{64\}/i.test(s.pattern)) return 'a'.repeat(64);
      return 'x'.repeat(Math.max(1, Number(s.minLength ?? 1)));
    case 'integer':
    case 'number':
      return Number(s.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: Number(s.minItems ?? 0) }, () => instance(s.items, depth + 1));
    case 'null':
      return null;
    default: {
      const properties = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      const out: Record<string, unknown> = {};
      for (const name of required) out[name] = instance(properties[name], depth + 1);
      return out;
    }
  }
}

const BAD_QUERY = '?limit=-1&page=zero&cursor=%00&since=yesterday&state=NOPE&bogus=1';
const BAD_BODY = {
  bogus: '\u0000',
  reason: 5,
  tables: 'x',
  value: 7,
  runResults: 1,
  name: 5,
  env: [],
  scopes: 'all',
};

let server: TestServer;
let crm: string;
let production: string;
/** A QUEUED Gate 2 job and an OPEN recertification request, both of the production table. */
let productionJob: string;
let productionRequest: string;
const callers: Caller[] = [];
const expiring: Caller[] = [];

function validBody(op: Operation, tableId: string | null): unknown {
  switch (op.id) {
    case 'createRecord':
      return { email: 'matrix@example.com', full_name: 'Matrix' };
    case 'patchRecord':
      return { full_name: 'Matrix' };
    case 'recertify':
      return { tables: [tableId ?? crm], environmentLabel: 'dev' };
    case 'certifyTable':
      return { note: 'matrix' };
    case 'rejectTable':
      return { reason: 'matrix' };
    default:
      return op.bodySchema === undefined ? undefined : instance(op.bodySchema);
  }
}

/** The query a valid request of an operation carries (none unless here): its narrowed form, in the same scope. */
const VALID_QUERY: Record<string, string> = {
  // TAB completing `recertification dismiss`: the production request's id typed, the caller's scope as the list's.
  listRecertificationRequests: '?prefix=RCR_MAT&limit=5',
};

function urlOf(op: Operation, tableId: string | null, valid: boolean): string {
  return (
    (op.atOrigin ? server.origin : '') +
    op.path
      .replace('{tableId}', tableId ?? 'x')
      .replace('{connectorId}', 'con_missing')
      .replace('{recordId}', 'rec_missing')
      .replace('{jobId}', productionJob)
      .replace('{requestId}', productionRequest)
      .replace('{tokenId}', 'clt_missing')
      .replace('{key}', 'gate3_required')
      .replace('{version}', '1') +
    (valid ? (VALID_QUERY[op.id] ?? '') : BAD_QUERY)
  );
}

async function forge(jwt: string): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  const header = decodeProtectedHeader(jwt);
  const claims = decodeJwt(jwt);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', ...(header.kid ? { kid: header.kid } : {}) })
    .sign(privateKey);
}

function tamper(jwt: string): string {
  const [header, payload, signature] = jwt.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
  claims.scope = 'workspace:read:audit workspace:write:certify workspace:write:definition';
  claims.role = 'OWNER';
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

const ALL_SCOPES = [
  'workspace:read:audit',
  'workspace:read:members',
  'workspace:write:certify',
  'workspace:write:definition',
  'workspace:write:recertify',
];

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual', rateLimit: 1_000_000 });
  crm = server.table('crm_contacts').id;
  production = server.table('customers_production').id;
  const run = await server.request('POST', `/api/tables/${production}/gate-runs`, {
    token: server.user('OWNER').accessToken,
    body: { gate: 2 },
  });
  productionJob = run.body?.job?.id;
  if (run.status !== 202 || !productionJob)
    throw new Error(`gate run: ${run.status} ${JSON.stringify(run.body)}`);
  productionRequest = 'rcr_matrix';
  await server.sql(
    `INSERT INTO gds.recertification_requests (id, workspace_id, table_id, cause, status, created_by, created_at, last_seen_at)
     VALUES ($1, $2, $3, 'manual', 'OPEN', $4, now(), now())`,
    [productionRequest, server.ready.workspaceId, production, server.user('OWNER').userId],
  );
  const management = async (name: string, env: string, scopes: string[]) =>
    (await server.issueToken('OWNER', { name, env, scopes: scopes as never })).tokens.accessToken;
  const allMgmt = await server.issueToken('OWNER', { name: 'all', env: '*', scopes: ALL_SCOPES as never });
  const data = await server.issueToken('OWNER', {
    name: 'data-dev',
    env: 'dev',
    scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
  });
  const invalid: Credential = { kind: 'invalid' };
  callers.push(
    { name: 'no credential', token: undefined, credential: invalid },
    { name: 'forged JWT', token: await forge(server.user('OWNER').accessToken), credential: invalid },
    { name: 'tampered JWT', token: tamper(allMgmt.tokens.accessToken), credential: invalid },
    { name: 'tf_ client token as bearer', token: allMgmt.clientToken, credential: invalid },
    { name: 'unknown cli_ token', token: 'cli_unknown0000000000000000', credential: invalid },
    { name: 'refresh token as bearer', token: allMgmt.tokens.refreshToken, credential: invalid },
    {
      name: "other workspace's CLI token",
      token: server.workspace(1).user('OWNER').cliToken,
      credential: { kind: 'other-workspace' },
    },
    {
      name: 'OWNER session JWT',
      token: server.user('OWNER').accessToken,
      credential: { kind: 'session', role: 'OWNER', envs: ['dev', 'staging', 'production'] },
    },
    {
      name: 'ADMIN CLI token',
      token: server.user('ADMIN').cliToken,
      credential: { kind: 'session', role: 'ADMIN', envs: ['dev', 'staging', 'production'] },
    },
    {
      name: 'STEWARD CLI token (dev, staging)',
      token: server.user('STEWARD').cliToken,
      credential: { kind: 'session', role: 'STEWARD', envs: ['dev', 'staging'] },
    },
    {
      name: 'MEMBER CLI token (dev)',
      token: server.user('MEMBER').cliToken,
      credential: { kind: 'session', role: 'MEMBER', envs: ['dev'] },
    },
    {
      name: 'MANAGEMENT every scope',
      token: allMgmt.tokens.accessToken,
      credential: { kind: 'management', scopes: ALL_SCOPES, env: '*' },
    },
    {
      name: 'MANAGEMENT every scope, dev only',
      token: await management('dev', 'dev', ALL_SCOPES),
      credential: { kind: 'management', scopes: ALL_SCOPES, env: 'dev' },
    },
    ...(await Promise.all(
      ALL_SCOPES.map(async (scope) => ({
        name: `MANAGEMENT ${scope} only`,
        token: await management(scope, '*', [scope]),
        credential: { kind: 'management', scopes: [scope], env: '*' } as Credential,
      })),
    )),
    {
      name: 'DATA-API token (crm_contacts, dev)',
      token: data.tokens.accessToken,
      credential: { kind: 'data', env: 'dev', tables: [crm] },
    },
  );
  const expiringMgmt = await server.issueToken('OWNER', {
    name: 'expiring',
    env: '*',
    scopes: ALL_SCOPES as never,
  });
  const expiringData = await server.issueToken('OWNER', {
    name: 'expiring-data',
    env: 'dev',
    scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
  });
  expiring.push(
    { name: 'expired session JWT', token: server.user('ADMIN').accessToken, credential: invalid },
    { name: 'expired MANAGEMENT token', token: expiringMgmt.tokens.accessToken, credential: invalid },
    { name: 'expired DATA-API token', token: expiringData.tokens.accessToken, credential: invalid },
  );
});

afterAll(async () => {
  await server?.close();
});

async function walk(who: Caller[]): Promise<{ wrong: string[]; cells: number }> {
  const wrong: string[] = [];
  let cells = 0;
  const envOf = (id: string) => (id === production ? 'production' : 'dev');
  for (const op of operations()) {
    // Table routes on a dev and a production table; job and request routes on the production table's.
    const tables = op.path.includes('{tableId}')
      ? [crm, production]
      : /\{(jobId|requestId)\}/.test(op.path)
        ? [production]
        : [null];
    for (const tableId of tables) {
      for (const caller of who) {
        for (const valid of [true, false]) {
          const want = expected(op, caller.credential, tableId === null ? null : envOf(tableId), tableId);
          if (want === 'allowed' && DESTRUCTIVE.has(op.id)) continue;
          const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
          const body = valid ? validBody(op, tableId) : BAD_BODY;
          const url = urlOf(op, op.path.includes('{tableId}') ? tableId : null, valid);
          const response = await server.request(op.method, url, {
            ...(caller.token === undefined ? {} : { token: caller.token }),
            ...(hasBody && body !== undefined ? { body } : {}),
          });
          cells += 1;
          const ok = want === 'allowed' ? response.status < 500 : want.includes(response.status);
          if (!ok) {
            const table = tableId === null ? '' : ` on the ${envOf(tableId)} table`;
            wrong.push(
              `${op.method} ${op.path}${table} as ${caller.name} with a ${valid ? 'valid' : 'bad'} request: ` +
                `${response.status} ${response.body?.error?.code ?? ''} (expected ${want === 'allowed' ? '< 500' : want.join('/')})`,
            );
          }
        }
      }
    }
  }
  return { wrong, cells };
}

describe('the authorization matrix: every operation × every caller × a valid and a bad request', () => {
  // About 1,600 requests: on a busy shared machine they take longer than the default test timeout.
  it(
    'refuses with 401/403 where the spec denies (never 400, 2xx or 5xx) and never answers 5xx',
    { timeout: 300_000 },
    async () => {
      const { wrong, cells } = await walk(callers);
      expect(cells).toBeGreaterThan(1500);
      expect(wrong).toEqual([]);
    },
  );

  it("answers the production request by its id's prefix only to who acts in production, as the list", async () => {
    const seen: Record<string, boolean> = {};
    const listed: Record<string, boolean> = {};
    for (const caller of callers.filter(({ credential }) => credential.kind === 'session')) {
      const ids = async (query: string) =>
        (
          (await server.request('GET', `/api/recertification-requests${query}`, { token: caller.token }))
            .body as { requests: Array<{ id: string }> }
        ).requests.map((request) => request.id);
      // With all=true: the walk may have dismissed the request.
      seen[caller.name] = (await ids(`${VALID_QUERY.listRecertificationRequests ?? '?'}&all=true`)).includes(
        productionRequest,
      );
      listed[caller.name] = (await ids('?all=true')).includes(productionRequest);
    }
    expect(seen).toEqual({
      'OWNER session JWT': true,
      'ADMIN CLI token': true,
      'STEWARD CLI token (dev, staging)': false,
      'MEMBER CLI token (dev)': false,
    });
    expect(seen).toEqual(listed);
    const other = await server.request(
      'GET',
      '/api/recertification-requests?prefix=rcr_mat&limit=5&all=true',
      {
        token: server.workspace(1).user('OWNER').cliToken,
      },
    );
    expect(other.body.requests).toEqual([]);
  });

  it('refuses expired access tokens with 401 everywhere', { timeout: 300_000 }, async () => {
    server.clock.advance(61 * 60_000);
    try {
      const { wrong } = await walk(expiring);
      expect(wrong).toEqual([]);
    } finally {
      server.clock.reset();
    }
  });
});
