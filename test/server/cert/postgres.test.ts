// Certification on a real PostgreSQL (`--database-url`): certify publishes the certified view, the
// view reads the warehouse rows, restore cuts a forward version, and history stays immutable. CI sets
// GDS_TEST_DATABASE_URL (.ci/run starts a loopback PostgreSQL); without it this file is skipped and
// the last lines of the run say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { submit } from './arrange.js';
import { needs, noPostgres } from '../../helpers/skip.js';

describe('certification on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let orders: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    orders = server.table('orders').id;
  });

  afterAll(async () => {
    await server?.close();
  });

  const certify = () =>
    server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: server.user('STEWARD').accessToken,
      body: { note: 'on postgres' },
    });

  it('certifies twice, publishing a view that SQL reads, and restores version 1 as version 3', async () => {
    await submit(server, orders);
    expect((await certify()).status).toBe(200);
    const rows = await server.sql<{ id: string }>('SELECT id FROM certified_dev.orders ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual(['o01', 'o02', 'o03', 'o04', 'o05', 'o06', 'o07', 'o08']);
    await submit(server, orders);
    expect((await certify()).status).toBe(200);
    const restored = await server.request('POST', `/api/tables/${orders}/versions/restore`, {
      token: server.user('STEWARD').accessToken,
      body: { to: 1, reason: 'back to the first contract' },
    });
    expect(restored.status).toBe(200);
    expect(restored.body.version).toMatchObject({ version: 3, kind: 'RESTORE', restoredFrom: 1 });
    // The restore's entry, then the request it filed (newest first, by the log's order on PostgreSQL too).
    const log = await server.request('GET', '/api/workspace/audit-log', {
      token: server.user('ADMIN').accessToken,
    });
    const actions = log.body.entries
      .filter((e: { tableId: string }) => e.tableId === orders)
      .map((e: { action: string }) => e.action);
    expect(actions.slice(0, 2)).toEqual(['RECERTIFICATION_REQUESTED', 'CONTRACT_VERSION_RESTORED']);
    await expect(
      server.sql('DELETE FROM gds.contract_versions WHERE table_id = $1', [orders]),
    ).rejects.toThrow(/immutable/);
  });

  it('a promotion landing new gate1.yml rules on a CERTIFIED table of the same definition files a recertification request', async () => {
    const customers = server.table('customers').id;
    const production = server.table('customers_production').id;
    const promote = () =>
      server.request('POST', `/api/tables/${customers}/promotions`, {
        token: server.user('OWNER').accessToken,
        body: { to: 'production', replaceId: production },
      });
    const applyOnCustomers = (regex: string) =>
      server.sql(
        `WITH bumped AS (UPDATE gds.tables SET gate1_version = gate1_version + 1 WHERE id = $1 RETURNING gate1_version)
         INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at)
         SELECT $1, gate1_version, $2, $3, now() FROM bumped`,
        [
          customers,
          `patternChecks:\n  - name: email_at\n    column: email\n    regex: "${regex}"\n    severity: HARD_FAIL\n`,
          server.user('STEWARD').userId,
        ],
      );
    await applyOnCustomers('@');
    expect((await promote()).status).toBe(202);
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [production]);
    await applyOnCustomers('@.+');
    expect((await promote()).status).toBe(202);
    const [table] = await server.sql('SELECT state, gate1_version FROM gds.tables WHERE id = $1', [
      production,
    ]);
    expect(table).toEqual({ state: 'CERTIFIED', gate1_version: 2 });
    const requests = await server.sql(
      `SELECT cause, status FROM gds.recertification_requests WHERE table_id = $1 AND cause = 'manual'`,
      [production],
    );
    expect(requests).toEqual([{ cause: 'manual', status: 'OPEN' }]);
    // The promotion's entry reads before the rules it landed and the request they filed (newest first).
    const log = await server.request('GET', '/api/workspace/audit-log', {
      token: server.user('ADMIN').accessToken,
    });
    const actions = log.body.entries
      .filter((e: { tableId: string }) => e.tableId === production)
      .map((e: { action: string }) => e.action);
    expect(actions.slice(0, 3)).toEqual(['RECERTIFICATION_REQUESTED', 'GATE1_APPLIED', 'TABLE_PROMOTED']);
  });
});
