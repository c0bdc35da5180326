// Contract versions: the certification history, restore as a new forward version on a CERTIFIED table
// (recertification filed, state unchanged, history never rewritten), and restore's refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { submit } from './arrange.js';

let server: TestServer;
let orders: string;

beforeAll(async () => {
  server = await startTestServer();
  orders = server.table('orders').id;
  // Two certifications with different grains: versions 1 and 2.
  for (const grain of ['one row per order', 'one row per order line']) {
    const patched = await server.request('PATCH', `/api/tables/${orders}/semantic-contract`, {
      token: steward(),
      body: { grain },
    });
    expect(patched.status).toBe(200);
    await submit(server, orders);
    server.clock.advance(1000);
    const certified = await server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: steward(),
    });
    expect(certified.status).toBe(200);
  }
});

afterAll(async () => {
  await server?.close();
});

function steward() {
  return server.user('STEWARD').accessToken;
}
const versions = async () =>
  (await server.request('GET', `/api/tables/${orders}/versions`, { token: server.user('MEMBER').cliToken }))
    .body.versions;
const restore = (body: unknown, tableId = orders, token = steward()) =>
  server.request('POST', `/api/tables/${tableId}/versions/restore`, { token, body });

describe('versions list', () => {
  it('lists every certification with number, certified-at, certified-by and grain', async () => {
    const list = await versions();
    expect(list.map((v: { version: number; grain: string }) => [v.version, v.grain])).toEqual([
      [1, 'one row per order'],
      [2, 'one row per order line'],
    ]);
    expect(list[1].certifiedBy).toBe(server.user('STEWARD').userId);
    expect(Date.parse(list[1].certifiedAt)).toBeGreaterThan(Date.parse(list[0].certifiedAt));
  });

  it('answers 404 for an unknown table and 401 for a MANAGEMENT token', async () => {
    const missing = await server.request('GET', '/api/tables/tbl_none/versions', { token: steward() });
    expect(missing.status).toBe(404);
    const management = await server.issueToken('ADMIN', {
      name: 'm',
      env: '*',
      scopes: ['workspace:write:certify'],
    });
    const refused = await server.request('GET', `/api/tables/${orders}/versions`, {
      token: management.tokens.accessToken,
    });
    expect(refused.status).toBe(401);
  });
});

describe('a table seeded as CERTIFIED', () => {
  it('has its version 1, which status reports, and its published view', async () => {
    const customers = server.table('customers').id;
    const token = server.user('MEMBER').cliToken;
    const listed = await server.request('GET', `/api/tables/${customers}/versions`, { token });
    expect(listed.body.versions).toHaveLength(1);
    expect(listed.body.versions[0]).toMatchObject({ version: 1, kind: 'CERTIFICATION' });
    const status = await server.request('GET', `/api/tables/${customers}/status`, { token });
    expect(status.body.certification).toMatchObject({ version: 1 });
    const rows = await server.sql('SELECT count(*)::int AS n FROM certified_dev.customers');
    expect(rows[0]).toMatchObject({ n: 10 });
  });
});

describe('versions restore', () => {
  it('refuses a missing reason (400), an unknown version (404), a mismatched --env (400) and a MEMBER (403)', async () => {
    const noReason = await restore({ to: 1 });
    expect(noReason.status).toBe(400);
    // A blank reason is no reason, as reject refuses it: nothing is restored.
    const blank = await restore({ to: 1, reason: ' \t ' });
    expect(blank.status).toBe(400);
    expect(blank.body.error).toMatchObject({ code: 'reason_required', details: { field: 'reason' } });
    const unknown = await restore({ to: 9, reason: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('version_not_found');
    const mismatch = await restore({ to: 1, reason: 'x', env: 'production' });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.code).toBe('environment_mismatch');
    const member = await restore({ to: 1, reason: 'x' }, orders, server.user('MEMBER').accessToken);
    expect(member.status).toBe(403);
    expect(await versions()).toHaveLength(2);
  });

  it('puts version 1 back as version 3, files a recertification request, and keeps the table CERTIFIED', async () => {
    const before = await versions();
    server.clock.advance(1000);
    const response = await restore({ to: 1, reason: 'Line grain broke the dashboards', env: 'dev' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      tableId: orders,
      state: 'CERTIFIED',
      version: {
        version: 3,
        kind: 'RESTORE',
        restoredFrom: 1,
        reason: 'Line grain broke the dashboards',
        certifiedBy: server.user('STEWARD').userId,
        grain: 'one row per order',
        environmentLabel: 'dev',
      },
    });
    const after = await versions();
    expect(after.slice(0, 2)).toEqual(before);
    expect(after[2]).toEqual(response.body.version);

    const [table] = await server.sql('SELECT state, grain FROM gds.tables WHERE id = $1', [orders]);
    expect(table).toEqual({ state: 'CERTIFIED', grain: 'one row per order' });
    const status = await server.request('GET', `/api/tables/${orders}/status`, { token: steward() });
    expect(status.body.certification).toMatchObject({ version: 3 });
    const requests = await server.sql(
      'SELECT id, cause, status FROM gds.recertification_requests WHERE table_id = $1',
      [orders],
    );
    expect(requests).toEqual([
      { id: response.body.recertificationRequestId, cause: 'manual', status: 'OPEN' },
    ]);
    const audit = await server.request(
      'GET',
      '/api/workspace/audit-log?eventType=CONTRACT_VERSION_RESTORED',
      {
        token: server.user('ADMIN').accessToken,
      },
    );
    expect(audit.body.entries[0]).toMatchObject({
      tableId: orders,
      userId: server.user('STEWARD').userId,
      details: { reason: 'Line grain broke the dashboards', restoredFrom: 1 },
    });
    // Cause before effect in the log as a steward reads it (newest first): the restore, then the request it filed.
    const log = await server.request('GET', '/api/workspace/audit-log', {
      token: server.user('ADMIN').accessToken,
    });
    const [filed, restored] = log.body.entries.filter((e: { tableId: string }) => e.tableId === orders);
    expect(filed).toMatchObject({
      action: 'RECERTIFICATION_REQUESTED',
      details: { requestId: response.body.recertificationRequestId, restoredFrom: 1, version: 3 },
    });
    expect(restored).toMatchObject({
      action: 'CONTRACT_VERSION_RESTORED',
      details: { restoredFrom: 1, contractVersion: { from: 2, to: 3 } },
    });
    const certifications = await server.request('GET', '/api/workspace/audit-log?eventType=TABLE_CERTIFIED', {
      token: server.user('ADMIN').accessToken,
    });
    expect(certifications.body.entries.filter((e: { tableId: string }) => e.tableId === orders)).toHaveLength(
      2,
    );
  });

  it('never rewrites history: the database refuses to change or delete a version', async () => {
    await expect(
      server.sql("UPDATE gds.contract_versions SET reason = 'edited' WHERE table_id = $1", [orders]),
    ).rejects.toThrow(/immutable/);
    await expect(
      server.sql('DELETE FROM gds.contract_versions WHERE table_id = $1', [orders]),
    ).rejects.toThrow(/immutable/);
    expect(await versions()).toHaveLength(3);
  });

  it('refuses a version certified in another environment (cross-environment restore unsupported)', async () => {
    await server.sql(
      `INSERT INTO gds.contract_versions (table_id, version, kind, environment_label, contract, certified_at, certified_by)
       SELECT table_id, 4, 'CERTIFICATION', 'staging', contract, certified_at, certified_by
         FROM gds.contract_versions WHERE table_id = $1 AND version = 1`,
      [orders],
    );
    const response = await restore({ to: 4, reason: 'bring staging contract over' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('cross_environment_restore');
    expect(await versions()).toHaveLength(4);
  });

  it('refuses a table that is not CERTIFIED (400)', async () => {
    await submit(server, orders);
    const response = await restore({ to: 1, reason: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('not_certified');
  });
});
