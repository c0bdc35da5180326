// The error tables of the spec (§7.1 data plane, §7.2 management plane, §7.3's causes) as one matrix: each
// operation with every status it lists, each driven by a real request to the in-process server (PGlite), and each
// answer checked for its status and the contract's error body `{"error":{"code","message"}}` (a JSON body, a code
// in snake_case, a message free of control characters). The files that test each door in depth (records, rate
// limit, refresh, workspace, cert/certify, governance/gov-definitions, governance/gov-recertify) say more about
// each cause; this one holds the whole table in one place, so a status the server gets wrong shows as a row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { submit } from './cert/arrange.js';

let server: TestServer;
/** Tokens by what they are, issued in beforeAll. */
const t: Record<
  | 'crm'
  | 'audit'
  | 'members'
  | 'certify'
  | 'stewardCertify'
  | 'definer'
  | 'prodDefiner'
  | 'recertifier'
  | 'devRecertifier',
  string
> = {
  crm: '',
  audit: '',
  members: '',
  certify: '',
  stewardCertify: '',
  definer: '',
  prodDefiner: '',
  recertifier: '',
  devRecertifier: '',
};
let crmRefresh = '';

const id = (name: string) => server.table(name).id;
const connector = (name: string) => {
  const found = server.ready.connectors.find((c) => c.name === name);
  if (!found) throw new Error(`no connector ${name}`);
  return found.id;
};
const session = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER') => server.user(role).accessToken;
/** A Mode A definition in YAML. */
const yaml = (table: string, source: string) =>
  [`table: ${table}`, `source: ${source}`, 'columns:', '  - name: id', '  - name: total'].join('\n');
const define = (body: Record<string, unknown>, token = t.definer) =>
  server.request('POST', '/api/workspace/definitions', { token, body });
const definition = (extra: Record<string, unknown> = {}) => ({
  filename: 'matrix.yml',
  content: yaml('matrix_products', 'analytics_dev.products'),
  mimeType: 'yaml',
  connectorId: connector('warehouse-dev'),
  ...extra,
});
const recertify = (body: unknown, token = t.recertifier) =>
  server.request('POST', '/api/workspace/recertify', { token, body });
/** The run_results.json of a dbt 1.5 run (schema v5) with these results. */
const run = (status: string) => ({
  metadata: {
    dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v5.json',
    dbt_version: '1.5.0',
  },
  results: [
    { status, unique_id: 'model.shop.categorydim', relation_name: '"dw"."analytics_dev"."categorydim"' },
  ],
  elapsed_time: 1,
});
const certify = (tableId: string, token?: string) =>
  server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
    ...(token === undefined ? {} : { token }),
    body: {},
  });
const records = (tableId: string, token?: string) =>
  server.request('GET', `/api/tables/${tableId}/records?limit=1`, token === undefined ? {} : { token });
const state = async (tableId: string) =>
  (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [tableId]))[0]?.state;

interface Row {
  op: string;
  status: number;
  cause: string;
  /** The error code, where the cause has one of its own. */
  code?: string;
  /** The message, where the spec words it (§7.3). */
  message?: string;
  call: () => Promise<TestResponse>;
  /** What else the answer must show. */
  check?: (response: TestResponse) => void | Promise<void>;
}

const dataPlane: Row[] = [
  { op: 'records', status: 401, cause: 'no Authorization header', call: () => records(id('crm_contacts')) },
  {
    op: 'records',
    status: 401,
    cause: 'an invalid bearer token',
    call: () => records(id('crm_contacts'), 'not-a-jwt'),
  },
  {
    op: 'records',
    status: 401,
    cause: 'a client token (tf_) as bearer',
    call: () => records(id('crm_contacts'), `tf_${'a1'.repeat(20)}`),
  },
  {
    op: 'records',
    status: 403,
    cause: 'a table outside the granted scope',
    call: () => records(id('orders'), t.crm),
  },
  { op: 'records', status: 404, cause: 'an unknown table id', call: () => records('tbl_missing', t.crm) },
  {
    op: 'records',
    status: 404,
    cause: 'an inactive table id',
    call: () => records(id('legacy_leads'), t.crm),
  },
  {
    op: 'records',
    status: 404,
    cause: 'delete of a record that does not exist',
    call: () =>
      server.request('DELETE', `/api/tables/${id('crm_contacts')}/records/rec_missing`, { token: t.crm }),
  },
  {
    op: 'records',
    status: 404,
    cause: "delete of another table's record (outside scope)",
    call: async () => {
      const [other] = await server.sql<{ id: string }>(
        'SELECT id FROM gds.records WHERE table_id = $1 LIMIT 1',
        [id('legacy_leads')],
      );
      const response = await server.request(
        'DELETE',
        `/api/tables/${id('crm_contacts')}/records/${other?.id ?? 'none'}`,
        { token: t.crm },
      );
      const [still] = await server.sql('SELECT id FROM gds.records WHERE table_id = $1 AND id = $2', [
        id('legacy_leads'),
        other?.id,
      ]);
      expect(still).toBeDefined();
      return response;
    },
  },
  {
    op: 'records',
    status: 429,
    cause: 'the 201st request of a minute (200 per minute), with Retry-After',
    code: 'rate_limited',
    call: async () => {
      const token = (
        await server.issueToken('OWNER', {
          name: 'matrix-rate',
          env: 'dev',
          scopes: [{ tableId: id('crm_contacts'), permissions: ['read'] }],
        })
      ).tokens.accessToken;
      for (let i = 0; i < 200; i += 1) expect((await records(id('crm_contacts'), token)).status).toBe(200);
      return records(id('crm_contacts'), token);
    },
    check: (response) => {
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(response.headers.get('x-ratelimit-limit')).toBe('200');
    },
  },
  {
    op: 'refresh',
    status: 401,
    cause: 'an invalid refresh token',
    call: () =>
      server.request('POST', '/api/integration/refresh', { body: { refreshToken: 'rt_missing.secret' } }),
  },
  {
    op: 'refresh',
    status: 401,
    cause: 'a reused refresh token',
    code: 'refresh_token_reused',
    call: async () => {
      const first = await server.request('POST', '/api/integration/refresh', {
        body: { refreshToken: crmRefresh },
      });
      expect(first.status).toBe(200);
      return server.request('POST', '/api/integration/refresh', { body: { refreshToken: crmRefresh } });
    },
  },
  {
    op: 'refresh',
    status: 401,
    cause: 'an expired refresh token (30 days)',
    call: async () => {
      const issued = await server.issueToken('ADMIN', {
        name: 'matrix-expiring',
        env: '*',
        scopes: ['workspace:read:audit'] as never,
      });
      server.clock.advance(30 * 86_400_000 + 60_000);
      try {
        return await server.request('POST', '/api/integration/refresh', {
          body: { refreshToken: issued.tokens.refreshToken },
        });
      } finally {
        server.clock.advance(-(30 * 86_400_000 + 60_000));
      }
    },
  },
];

const auditLog = (query: string, token?: string) =>
  server.request('GET', `/api/workspace/audit-log${query}`, token === undefined ? {} : { token });
const members = (token?: string) =>
  server.request('GET', '/api/workspace/members', token === undefined ? {} : { token });

const managementPlane: Row[] = [
  { op: 'audit-log', status: 401, cause: 'no token', call: () => auditLog('') },
  { op: 'audit-log', status: 401, cause: 'an invalid token', call: () => auditLog('', 'not-a-jwt') },
  {
    op: 'audit-log',
    status: 401,
    cause: 'a DATA-API token (wrong audience)',
    call: () => auditLog('', t.crm),
  },
  {
    op: 'audit-log',
    status: 403,
    cause: 'a MANAGEMENT token without workspace:read:audit',
    code: 'missing_scope',
    call: () => auditLog('', t.members),
  },
  { op: 'audit-log', status: 400, cause: 'limit=0', call: () => auditLog('?limit=0', t.audit) },
  { op: 'audit-log', status: 400, cause: 'limit=201', call: () => auditLog('?limit=201', t.audit) },
  {
    op: 'audit-log',
    status: 400,
    cause: 'since not ISO-8601',
    call: () => auditLog('?since=yesterday', t.audit),
  },
  {
    op: 'audit-log',
    status: 400,
    cause: 'a cursor no page gave',
    call: () => auditLog('?cursor=%%%', t.audit),
  },
  { op: 'members', status: 401, cause: 'no token', call: () => members() },
  { op: 'members', status: 401, cause: 'a DATA-API token (wrong audience)', call: () => members(t.crm) },
  {
    op: 'members',
    status: 403,
    cause: 'a MANAGEMENT token without workspace:read:members',
    code: 'missing_scope',
    call: () => members(t.audit),
  },
  { op: 'certify', status: 401, cause: 'no credential', call: () => certify(id('orders')) },
  {
    op: 'certify',
    status: 401,
    cause: 'a DATA-API token',
    call: () => certify(id('crm_contacts'), t.crm),
  },
  {
    op: 'certify',
    status: 403,
    cause: 'a MANAGEMENT token without workspace:write:certify',
    code: 'missing_scope',
    call: () => certify(id('orders'), t.audit),
  },
  {
    op: 'certify',
    status: 403,
    cause: "a certify token without write permission on the table (its issuer's role does not reach it)",
    code: 'table_write_forbidden',
    call: () => certify(id('orders'), t.stewardCertify),
  },
  {
    op: 'certify',
    status: 403,
    cause: 'a session of role MEMBER (below STEWARD)',
    code: 'role_too_low',
    call: () => certify(id('orders'), session('MEMBER')),
  },
  { op: 'certify', status: 404, cause: 'an unknown table', call: () => certify('tbl_missing', t.certify) },
  {
    op: 'certify',
    status: 400,
    cause: 'a table not in PENDING_REVIEW (CERTIFIED)',
    code: 'not_pending_review',
    call: () => certify(id('customers'), t.certify),
    check: async () => expect(await state(id('customers'))).toBe('CERTIFIED'),
  },
  {
    op: 'certify',
    status: 422,
    cause: 'a stale proof (gate1.yml applied after the submission)',
    code: 'stale_proof',
    call: async () => {
      const crm = id('crm_contacts');
      await submit(server, crm);
      const applied = await server.request('PUT', `/api/tables/${crm}/gate1`, {
        token: session('STEWARD'),
        body: {
          content:
            'patternChecks:\n  - name: email_at\n    column: email\n    regex: "@"\n    severity: WARN\n',
        },
      });
      expect(applied.status).toBe(200);
      return certify(crm, session('STEWARD'));
    },
    check: async () => expect(await state(id('crm_contacts'))).toBe('PENDING_REVIEW'),
  },
  {
    op: 'definitions',
    status: 401,
    cause: 'a DATA-API token (wrong audience)',
    call: () => define(definition(), t.crm),
  },
  {
    op: 'definitions',
    status: 401,
    cause: 'a session (no session branch)',
    call: () => define(definition(), session('OWNER')),
  },
  {
    op: 'definitions',
    status: 403,
    cause: 'a MANAGEMENT token without workspace:write:definition',
    code: 'missing_scope',
    call: () => define(definition(), t.audit),
  },
  {
    op: 'definitions',
    status: 403,
    cause: "a connector outside the token's environment",
    call: () => define(definition(), t.prodDefiner),
  },
  {
    op: 'definitions',
    status: 403,
    cause: "a replaced table outside the token's environment",
    call: async () => {
      const [orders] = await server.sql<{ governance_id: string }>(
        'SELECT governance_id FROM gds.tables WHERE id = $1',
        [id('orders')],
      );
      return define(
        definition({
          content: yaml('orders', 'analytics_prod.orders'),
          connectorId: connector('warehouse-production'),
          replaceId: orders?.governance_id,
        }),
        t.prodDefiner,
      );
    },
    check: async (response) => {
      expect(response.body.error.message).toContain('the table being replaced (orders) is in dev');
      expect(await state(id('orders'))).toBe('PENDING_REVIEW');
    },
  },
  {
    op: 'definitions',
    status: 404,
    cause: 'a connector that does not exist',
    call: () => define(definition({ connectorId: 'con_missing' })),
  },
  {
    op: 'definitions',
    status: 404,
    cause: 'a replaceId that matches nothing',
    call: () => define(definition({ replaceId: 'gov_missing' })),
  },
  {
    op: 'definitions',
    status: 409,
    cause: 'an artifact with the same name exists',
    call: () => define(definition({ content: yaml('orders', 'analytics_dev.products') })),
  },
  {
    op: 'definitions',
    status: 409,
    cause: 'an artifact with the same source exists',
    call: () => define(definition({ content: yaml('orders_again', 'analytics_dev.orders') })),
  },
  {
    op: 'definitions',
    status: 400,
    cause: 'a missing field (content)',
    call: () => define({ filename: 'a.yml', mimeType: 'yaml', connectorId: connector('warehouse-dev') }),
  },
  {
    op: 'definitions',
    status: 400,
    cause: 'an invalid mimeType',
    call: () => define(definition({ mimeType: 'csv' })),
  },
  {
    op: 'definitions',
    status: 400,
    cause: 'an unresolvable source',
    call: () => define(definition({ content: yaml('matrix_nowhere', 'analytics_dev.nowhere') })),
  },
  {
    op: 'recertify',
    status: 401,
    cause: 'a DATA-API token (wrong audience)',
    call: () => recertify({ tables: ['categorydim'], environmentLabel: 'dev' }, t.crm),
  },
  {
    op: 'recertify',
    status: 403,
    cause: 'a MANAGEMENT token without workspace:write:recertify (certify is not enough)',
    code: 'missing_scope',
    call: () => recertify({ tables: ['categorydim'], environmentLabel: 'dev' }, t.certify),
  },
  {
    op: 'recertify',
    status: 403,
    cause: 'a body environmentLabel mismatching an environment-scoped token',
    code: 'environment_mismatch',
    call: () => recertify({ tables: ['categorydim'], environmentLabel: 'production' }, t.devRecertifier),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'no environmentLabel for an environment-agnostic token',
    call: () => recertify({ tables: ['categorydim'] }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'a raw run-results body (no environmentLabel) with an environment-agnostic token',
    code: 'environment_required',
    call: () => recertify(run('success')),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'an unconfigured environment tier',
    code: 'unknown_environment',
    call: () => recertify({ tables: ['categorydim'], environmentLabel: 'qa' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'an invalid tables array (an entry that is not a name)',
    call: () => recertify({ tables: [5], environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'an empty tables array',
    call: () => recertify({ tables: [], environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'neither tables nor runResults',
    call: () => recertify({ environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'both tables and runResults',
    call: () => recertify({ tables: ['categorydim'], runResults: run('success'), environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'malformed run results',
    code: 'malformed_run_results',
    call: () => recertify({ runResults: { metadata: {}, results: [1] }, environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'a run that built nothing',
    code: 'nothing_built',
    call: () => recertify({ runResults: run('error'), environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 400,
    cause: 'more than 500 tables',
    code: 'too_many_tables',
    call: () =>
      recertify({ tables: Array.from({ length: 501 }, (_, i) => `t${i}`), environmentLabel: 'dev' }),
  },
  {
    op: 'recertify',
    status: 413,
    cause: 'a body over 25 MB',
    call: () =>
      recertify({
        tables: ['categorydim'],
        environmentLabel: 'dev',
        evidence: { summary: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES) },
      }),
  },
];

const cli = (role: 'OWNER' | 'MEMBER') => server.user(role).cliToken;
const push = (body: Record<string, unknown>) =>
  server.request('POST', '/api/artifacts', { token: cli('OWNER'), body });

/** §7.3: the causes of the client's errors, as the server answers them (with the spec's words). */
const clientReported: Row[] = [
  {
    op: 'push',
    status: 409,
    cause: 'a name collision without --replace',
    message: "A governance artifact named 'orders' already exists",
    call: () =>
      push({
        filename: 'orders.yml',
        content: yaml('orders', 'analytics_dev.products'),
        connectorId: connector('warehouse-dev'),
      }),
  },
  {
    op: 'push',
    status: 404,
    cause: 'a connector that does not exist',
    message: 'Connector not found',
    call: () =>
      push({
        filename: 'matrix.yml',
        content: yaml('matrix_products', 'analytics_dev.products'),
        connectorId: 'con_x',
      }),
  },
  {
    op: 'push',
    status: 404,
    cause: "another workspace's connector",
    message: 'Connector not found',
    call: () =>
      push({
        filename: 'matrix.yml',
        content: yaml('matrix_products', 'analytics_dev.products'),
        connectorId: server.ready.otherWorkspace.connectors[0]?.id ?? 'con_none',
      }),
  },
  {
    op: 'push',
    status: 400,
    cause: 'an extension not .sql, .yml, .yaml or .json',
    message: 'Unsupported file type',
    call: () => push({ filename: 'matrix.csv', content: 'a,b', connectorId: connector('warehouse-dev') }),
  },
  {
    op: 'delete',
    status: 400,
    cause: 'a Mode B table',
    message: 'CLI delete is restricted to warehouse-connected governance artifacts',
    call: () => server.request('DELETE', `/api/tables/${id('crm_contacts')}`, { token: cli('OWNER') }),
  },
  {
    op: 'delete',
    status: 403,
    cause: 'someone neither table owner nor workspace admin',
    message: 'Only table owners or workspace admins can delete',
    call: () => server.request('DELETE', `/api/tables/${id('customers')}`, { token: cli('MEMBER') }),
    check: async () => expect(await state(id('customers'))).toBe('CERTIFIED'),
  },
  {
    op: 'gate run',
    status: 400,
    cause: 'Gate 3 without --baseline',
    message: '--baseline <reportId> is required for Gate 3',
    call: () =>
      server.request('POST', `/api/tables/${id('customers')}/gate-runs`, {
        token: session('STEWARD'),
        body: { gate: 3 },
      }),
  },
];

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  const management = async (role: 'ADMIN' | 'STEWARD', env: string, scopes: string[]) =>
    (
      await server.issueToken(role, {
        name: `matrix-${env}-${scopes.join('-')}`,
        env,
        scopes: scopes as never,
      })
    ).tokens.accessToken;
  const crm = await server.issueToken('OWNER', {
    name: 'matrix-crm',
    env: 'dev',
    scopes: [{ tableId: id('crm_contacts'), permissions: ['read', 'write'] }],
  });
  t.crm = crm.tokens.accessToken;
  crmRefresh = crm.tokens.refreshToken;
  t.audit = await management('ADMIN', '*', ['workspace:read:audit']);
  t.members = await management('ADMIN', '*', ['workspace:read:members']);
  t.certify = await management('ADMIN', '*', ['workspace:write:certify']);
  t.stewardCertify = await management('STEWARD', 'dev', ['workspace:write:certify']);
  t.definer = await management('ADMIN', '*', ['workspace:write:definition']);
  t.prodDefiner = await management('ADMIN', 'production', ['workspace:write:definition']);
  t.recertifier = await management('ADMIN', '*', ['workspace:write:recertify']);
  t.devRecertifier = await management('ADMIN', 'dev', ['workspace:write:recertify']);
  // orders waits for review, so a refusal of certify on it is for who calls, not for its state.
  await submit(server, id('orders'));
});

afterAll(async () => {
  await server?.close();
});

async function drive(row: Row): Promise<void> {
  const response = await row.call();
  expect(response.status, JSON.stringify(response.body)?.slice(0, 300)).toBe(row.status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toMatchObject({
    error: { code: expect.stringMatching(/^[a-z][a-z0-9_]*$/), message: expect.any(String) },
  });
  expect(response.body.error.message).not.toBe('');
  expect(response.body.error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  if (row.code !== undefined) expect(response.body.error.code).toBe(row.code);
  if (row.message !== undefined) expect(response.body.error.message).toBe(row.message);
  await row.check?.(response);
}

describe('§7.1 data plane: every status, from a real request', () => {
  it.each(dataPlane)('$op: $status for $cause', drive);
});

describe('§7.2 management plane: every status of every endpoint, from a real request', () => {
  it.each(managementPlane)('$op: $status for $cause', drive);
});

describe("§7.3 the causes of the client's errors, as the server answers them", () => {
  it.each(clientReported)('$op: $status for $cause', drive);
});
