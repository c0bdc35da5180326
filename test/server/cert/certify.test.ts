// Certify (§4.6) with every status of §7.2, the rows of §3 for certify and reject, and the certified
// view read back with SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_NAME_CHARS, MAX_NOTE_CHARS } from '../../../src/core/text-bounds.js';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';
import { submit, succeededGate3 } from './arrange.js';

type Role = 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
let server: TestServer;
let orders: string;
let crm: string;
const EVIDENCE = { evidenceFileName: 'review.pdf', evidenceHash: 'ab'.repeat(32), evidenceSize: 2048 };

beforeAll(async () => {
  server = await startTestServer();
  orders = server.table('orders').id;
  crm = server.table('crm_contacts').id;
});

afterAll(async () => {
  await server?.close();
});

const session = (role: Role) => server.user(role).accessToken;
const certify = (tableId: string, token: string, body?: unknown) =>
  server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
    token,
    ...(body === undefined ? {} : { body }),
  });
const stateOf = async (tableId: string) =>
  (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [tableId]))[0]?.state;
const latestAudit = async (action: string) => {
  const page = await server.request('GET', `/api/workspace/audit-log?eventType=${action}&limit=1`, {
    token: session('ADMIN'),
  });
  return page.body.entries[0];
};
const setConfig = (key: string, value: string) =>
  server.request('PUT', `/api/config/${key}`, { token: session('OWNER'), body: { value } });

describe('certify: who may call it', () => {
  it('401 without a valid credential, with a static CLI token (interactive sign-in only) and a DATA-API token', async () => {
    await submit(server, orders);
    expect((await certify(orders, 'not-a-token')).status).toBe(401);
    const cli = await certify(orders, server.user('STEWARD').cliToken);
    expect(cli.status).toBe(401);
    expect(cli.body.error.code).toBe('interactive_login_required');
    expect(cli.body.error.message).toContain('gds auth login');
    const data = await server.issueToken('ADMIN', {
      name: 'rows',
      env: '*',
      scopes: [{ tableId: orders, permissions: ['write'] }],
    });
    expect((await certify(orders, data.tokens.accessToken)).status).toBe(401);
    expect(await stateOf(orders)).toBe('PENDING_REVIEW');
  });

  it('403 for a role below STEWARD, a token without the scope, and a token without table write permission', async () => {
    const member = await certify(orders, session('MEMBER'));
    expect(member.status).toBe(403);
    expect(member.body.error.code).toBe('role_too_low');

    const audit = await server.issueToken('ADMIN', {
      name: 'audit',
      env: '*',
      scopes: ['workspace:read:audit'],
    });
    const noScope = await certify(orders, audit.tokens.accessToken);
    expect(noScope.status).toBe(403);
    expect(noScope.body.error.code).toBe('missing_scope');

    // A steward's certify token reaches only the tables its issuer owns; orders belongs to the member.
    const stewardToken = await server.issueToken('STEWARD', {
      name: 'certify',
      env: 'dev',
      scopes: ['workspace:write:certify'],
    });
    const noWrite = await certify(orders, stewardToken.tokens.accessToken);
    expect(noWrite.status).toBe(403);
    expect(noWrite.body.error.code).toBe('table_write_forbidden');

    const stagingToken = await server.issueToken('ADMIN', {
      name: 'staging',
      env: 'staging',
      scopes: ['workspace:write:certify'],
    });
    const otherEnv = await certify(orders, stagingToken.tokens.accessToken);
    expect(otherEnv.status).toBe(403);
    expect(otherEnv.body.error.code).toBe('environment_forbidden');
    expect(await stateOf(orders)).toBe('PENDING_REVIEW');
  });

  it('404 for an unknown table or one of another workspace', async () => {
    expect((await certify('tbl_missing', session('STEWARD'))).status).toBe(404);
    const globex = server.ready.otherWorkspace.tables[0]?.id ?? '';
    const response = await certify(globex, session('OWNER'));
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('table_not_found');
  });

  it('400 when the table is not PENDING_REVIEW, or the evidence hash is not SHA-256 hex', async () => {
    const customers = server.table('customers').id;
    const certified = await certify(customers, session('STEWARD'));
    expect(certified.status).toBe(400);
    expect(certified.body.error.code).toBe('not_pending_review');
    // Not "run gate submit": that would send the certified table back to review.
    expect(certified.body.error.message).toBe('The table is already CERTIFIED: nothing to do');
    expect(await stateOf(customers)).toBe('CERTIFIED');
    const refused = await latestAudit('CERTIFICATION_REFUSED');
    expect(refused).toMatchObject({ tableId: customers, resource: 'semantic_contract' });

    const badHash = await certify(orders, session('STEWARD'), { evidenceHash: 'md5:1234' });
    expect(badHash.status).toBe(400);
    expect(badHash.body.error.code).toBe('invalid_evidence_hash');
  });
});

describe('certify: blocked (422), state unchanged', () => {
  const applyGate1 = async (content: string) => {
    const applied = await server.request('PUT', `/api/tables/${crm}/gate1`, {
      token: session('STEWARD'),
      body: { content },
    });
    expect(applied.status).toBe(200);
  };

  it('blocks a table with no review proof', async () => {
    await server.sql("UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1", [crm]);
    const none = await certify(crm, session('ADMIN'));
    expect(none.status).toBe(422);
    expect(none.body.error.code).toBe('stale_proof');
    expect(none.body.error.message).toContain('no review proof');
    expect(await stateOf(crm)).toBe('PENDING_REVIEW');
    expect(await latestAudit('CERTIFICATION_BLOCKED')).toMatchObject({ tableId: crm });
  });

  it('blocks a proof whose predicates failed on the data, naming them', async () => {
    // Most seeded contacts have no phone number: the baseline null-rate predicate fails for real.
    const proof = await submit(server, crm);
    expect(proof.failedPredicates).toEqual(['null_rate.phone']);
    const response = await certify(crm, session('ADMIN'));
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('predicates_failed');
    expect(response.body.error.message).toContain('null_rate.phone');
  });

  it('blocks a stale proof: gate1.yml changed after it', async () => {
    await applyGate1('fieldOverrides:\n  - field: phone\n    nullRate: { warn: 0.8, fail: 0.95 }\n');
    const stale = await certify(crm, session('ADMIN'));
    expect(stale.status).toBe(422);
    expect(stale.body.error.code).toBe('stale_proof');
    expect(stale.body.error.message).toContain('stale');
    expect(await stateOf(crm)).toBe('PENDING_REVIEW');
  });

  it('blocks a stale proof: newer data was ingested after it (the pipeline recertification signal)', async () => {
    expect((await submit(server, orders)).passed).toBe(true);
    const pipeline = await server.issueToken('ADMIN', {
      name: 'pipeline',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    });
    const signal = await server.request('POST', '/api/workspace/recertify', {
      token: pipeline.tokens.accessToken,
      body: { tables: ['orders'] },
    });
    expect(signal.status).toBe(200);
    const stale = await certify(orders, session('STEWARD'));
    expect(stale.status).toBe(422);
    expect(stale.body.error.code).toBe('stale_proof');
    expect(await stateOf(orders)).toBe('PENDING_REVIEW');
  });

  it('422 stale_proof after a data-plane write to a Mode B table (an ingest) since the proof', async () => {
    expect((await submit(server, crm)).passed).toBe(true);
    const writer = await server.issueToken('ADMIN', {
      name: 'crm-writer',
      env: 'dev',
      scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
    });
    const token = writer.tokens.accessToken;
    const page = await server.request('GET', `/api/tables/${crm}/records?limit=1`, { token });
    const record = page.body.records[0];
    const patched = await server.request('PATCH', `/api/tables/${crm}/records/${record.id}`, {
      token,
      body: { email: record.email },
    });
    expect(patched.status).toBe(200);
    const stale = await certify(crm, session('ADMIN'));
    expect(stale.status).toBe(422);
    expect(stale.body.error.code).toBe('stale_proof');
    expect(await stateOf(crm)).toBe('PENDING_REVIEW');
  });

  it('blocks until a Gate 3 job has SUCCEEDED and passed since the proof when the workspace requires Gate 3', async () => {
    expect((await submit(server, crm)).passed).toBe(true);
    expect((await setConfig('gate3_required', 'true')).status).toBe(200);
    await submit(server, crm);
    const blocked = await certify(crm, session('ADMIN'));
    expect(blocked.status).toBe(422);
    expect(blocked.body.error.code).toBe('gate3_required');
    await succeededGate3(server, crm, false);
    const failedGate3 = await certify(crm, session('ADMIN'));
    expect(failedGate3.body.error.code).toBe('gate3_required');
    await succeededGate3(server, crm);
    await submit(server, crm);
    expect((await certify(crm, session('ADMIN'))).body.error.code).toBe('gate3_required');
    expect(await stateOf(crm)).toBe('PENDING_REVIEW');
  });

  it('blocks without evidence when the inspection policy requires it, then certifies with it', async () => {
    await succeededGate3(server, crm);
    expect((await setConfig('inspection_policy', 'evidence_required')).status).toBe(200);
    const blocked = await certify(crm, session('ADMIN'), { note: 'looks fine', evidenceFileName: 'x.pdf' });
    expect(blocked.status).toBe(422);
    expect(blocked.body.error.code).toBe('inspection_policy_unmet');
    expect(blocked.body.error.message).toContain('evidenceHash');
    const admin = await server.issueToken('ADMIN', {
      name: 'certifier',
      env: 'dev',
      scopes: ['workspace:write:certify'],
    });
    const ok = await certify(crm, admin.tokens.accessToken, { note: 'inspected', ...EVIDENCE });
    expect(ok.status).toBe(200);
    expect(ok.body.contract.status).toBe('CERTIFIED');
    expect(await stateOf(crm)).toBe('CERTIFIED');
    await setConfig('inspection_policy', 'none');
    await setConfig('gate3_required', 'false');
  });
});

describe('certify: success', () => {
  it('certifies, snapshots version 1, audits TABLE_CERTIFIED with the note and evidence, and publishes the view', async () => {
    expect((await submit(server, orders)).passed).toBe(true);
    const response = await certify(orders, session('STEWARD'), {
      note: 'Reviewed with finance',
      ...EVIDENCE,
    });
    expect(response.status).toBe(200);
    const contract = response.body.contract;
    expect(contract).toMatchObject({ status: 'CERTIFIED', grain: '', grainType: null, grainKeyColumns: [] });
    expect(contract.id).toMatch(/^ctr_/);
    expect(Date.parse(contract.certifiedAt)).toBeLessThanOrEqual(server.clock.now());
    expect(await stateOf(orders)).toBe('CERTIFIED');

    const versions = await server.request('GET', `/api/tables/${orders}/versions`, {
      token: session('MEMBER'),
    });
    expect(versions.body.versions).toMatchObject([
      {
        version: 1,
        kind: 'CERTIFICATION',
        environmentLabel: 'dev',
        certifiedAt: contract.certifiedAt,
        certifiedBy: server.user('STEWARD').userId,
        grain: '',
      },
    ]);

    const audit = await latestAudit('TABLE_CERTIFIED');
    expect(audit).toMatchObject({
      tableId: orders,
      resource: 'semantic_contract',
      userId: server.user('STEWARD').userId,
      environmentLabel: 'dev',
      gateModeAtEvaluation: server.table('orders').gateMode,
      details: { note: 'Reviewed with finance', ...EVIDENCE, certifiedView: 'certified_dev.orders' },
    });

    const rows = await server.sql('SELECT * FROM certified_dev.orders ORDER BY id');
    expect(rows).toHaveLength(8);
    expect(Object.keys(rows[0])).toEqual(['id', 'order_id', 'customer_id', 'amount', 'status', 'ordered_on']);
    expect(rows[0]).toMatchObject({ id: 'o01', order_id: 5001, customer_id: 1001, status: 'SHIPPED' });
  });

  it("publishes a Mode B table's view over its records, typed by the registered columns", async () => {
    const rows = await server.sql<{ email: string; score: number | null }>(
      'SELECT email, score FROM certified_dev.crm_contacts ORDER BY email',
    );
    expect(rows).toHaveLength(12);
    expect(rows[0]).toEqual({ email: 'ada@example.com', score: 91 });
    const audit = await latestAudit('TABLE_CERTIFIED');
    expect(audit.tableId).toBe(orders);
  });
});

describe('reject', () => {
  const reject = (tableId: string, body: unknown, role: Role = 'STEWARD') =>
    server.request('POST', `/api/tables/${tableId}/reject`, { token: session(role), body });

  it('sends a PENDING_REVIEW table back to QUARANTINED with the reason in the audit trail', async () => {
    await submit(server, orders);
    expect((await reject(orders, {})).status).toBe(400);
    expect((await reject(orders, { reason: '  ' })).status).toBe(400);
    expect((await reject(orders, { reason: 'nulls' }, 'MEMBER')).status).toBe(403);
    const response = await reject(orders, { reason: 'Amounts include refunds twice' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ tableId: orders, state: 'QUARANTINED' });
    expect(await stateOf(orders)).toBe('QUARANTINED');
    expect(await latestAudit('TABLE_REJECTED')).toMatchObject({
      tableId: orders,
      resource: 'semantic_contract',
      userId: server.user('STEWARD').userId,
      details: { reason: 'Amounts include refunds twice' },
    });
  });

  it('refuses a table that is not PENDING_REVIEW (400), leaving it as it is', async () => {
    const response = await reject(orders, { reason: 'again' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('not_pending_review');
    expect(await stateOf(orders)).toBe('QUARANTINED');
  });
});

// §3 and §6: certify's note and reject's reason are recorded in the audit log. An entry keeps 96 KB of
// details, so a longer text was certified (or rejected) and then left out of its entry; each text a person
// writes is now at most 10,000 characters (src/core/text-bounds.ts), refused past that with nothing changed.
describe.each(ENGINES)('the notes and reasons the audit log keeps, on $engine', ({ postgres, skip }) => {
  let on: TestServer;
  let table: string;
  const most = 'n'.repeat(MAX_NOTE_CHARS);
  const over = `${most}n`;

  beforeAll(async () => {
    if (skip !== undefined) return;
    on = await startTestServer(postgres ? { database: 'postgres', jobs: 'manual' } : { jobs: 'manual' });
    table = on.table('orders').id;
  });

  afterAll(async () => {
    await on?.close();
  });

  const steward = () => on.user('STEWARD').accessToken;
  const post = (path: string, body: unknown) =>
    on.request('POST', `/api/tables/${table}${path}`, { token: steward(), body });
  const stateNow = async () =>
    (await on.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [table]))[0]?.state;
  const latest = async (action: string) =>
    (
      await on.request('GET', `/api/workspace/audit-log?eventType=${action}&limit=1`, {
        token: on.user('ADMIN').accessToken,
      })
    ).body.entries[0];
  const tooLong = (
    response: { status: number; body: { error: { code: string; details: unknown } } },
    field: string,
    max: number,
  ) => {
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'text_too_long',
      details: { field, max, length: max + 1 },
    });
  };

  it(
    'certify: a note of 10,000 characters is recorded whole; one more, or a long evidence file name, is 400',
    needs(skip),
    async () => {
      await submit(on, table);
      tooLong(await post('/semantic-contract/certify', { note: over }), 'note', MAX_NOTE_CHARS);
      tooLong(
        await post('/semantic-contract/certify', { evidenceFileName: 'f'.repeat(MAX_FILE_NAME_CHARS + 1) }),
        'evidenceFileName',
        MAX_FILE_NAME_CHARS,
      );
      expect(await stateNow()).toBe('PENDING_REVIEW');
      const audited = await on.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_CERTIFIED'`,
        [table],
      );
      expect(audited[0]?.n).toBe(0);
      const certified = await post('/semantic-contract/certify', {
        note: most,
        evidenceFileName: 'f'.repeat(MAX_FILE_NAME_CHARS),
      });
      expect(certified.status).toBe(200);
      expect((await latest('TABLE_CERTIFIED')).details).toMatchObject({ note: most });
    },
  );

  it(
    'versions restore and recertification dismiss: a reason of 10,001 characters is 400, nothing changed',
    needs(skip),
    async () => {
      tooLong(await post('/versions/restore', { to: 1, reason: over }), 'reason', MAX_NOTE_CHARS);
      const versions = await on.request('GET', `/api/tables/${table}/versions`, { token: steward() });
      expect(versions.body.versions).toHaveLength(1);
      expect((await post('/versions/restore', { to: 1, reason: 'filed for the dismissal' })).status).toBe(
        200,
      );
      const listed = await on.request('GET', `/api/recertification-requests?tableId=${table}`, {
        token: steward(),
      });
      const [request] = listed.body.requests as Array<{ id: string; status: string }>;
      expect(request?.status).toBe('OPEN');
      const dismiss = (reason: string) =>
        on.request('POST', `/api/recertification-requests/${request?.id}/dismiss`, {
          token: steward(),
          body: { reason },
        });
      tooLong(await dismiss(over), 'reason', MAX_NOTE_CHARS);
      expect((await dismiss(most)).status).toBe(200);
      expect((await latest('RECERTIFICATION_DISMISSED')).details).toMatchObject({ reason: most });
    },
  );

  it(
    'reject: a reason of 10,000 characters is recorded whole; one more is 400, the table still waiting',
    needs(skip),
    async () => {
      await submit(on, table);
      tooLong(await post('/reject', { reason: over }), 'reason', MAX_NOTE_CHARS);
      expect(await stateNow()).toBe('PENDING_REVIEW');
      expect((await post('/reject', { reason: most })).status).toBe(200);
      expect(await stateNow()).toBe('QUARANTINED');
      expect((await latest('TABLE_REJECTED')).details).toMatchObject({ reason: most });
    },
  );
});
