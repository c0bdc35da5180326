// Certify, reject and a new submission of one table at once, on PostgreSQL, where their transactions run
// side by side (PGlite runs one at a time). Each writer of a table's state reads it under the row's lock, so
// the second decides on what the first left (each test starts from the state the one before left): the spec's "not PENDING_REVIEW | certify | 400", one
// certification (one version snapshot) per review, and a submission filed while certify checked the one
// before is not closed by it (§4.9: submit notifies the steward). A held row lock makes the overlap certain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import type { RowHolder } from '../../helpers/row-holder.js';
import { holdTableRow } from '../../helpers/row-holder.js';
import { needs, noPostgres } from '../../helpers/skip.js';
import { submit } from './arrange.js';

describe('certify, reject and submit of one table at once, on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let orders: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    orders = server.table('orders').id;
  });

  afterAll(async () => {
    await server?.close();
  });

  const certify = (role: 'ADMIN' | 'STEWARD' = 'ADMIN', body: object = { note: 'reviewed' }) =>
    server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: server.user(role).accessToken,
      body,
    });
  /** A new submission, once it waits on the held row (it is filed first once the row is let go). */
  const submitBehind = async (holder: RowHolder) => {
    server.clock.advance(1000);
    const submitting = server.request('POST', `/api/tables/${orders}/gate-submissions`, {
      token: server.user('MEMBER').accessToken,
      body: {},
    });
    await holder.waitForBlocked(1);
    return { submitting };
  };
  const reject = () =>
    server.request('POST', `/api/tables/${orders}/reject`, {
      token: server.user('STEWARD').accessToken,
      body: { reason: 'wrong grain' },
    });
  /** Once the two requests wait on the held row, lets them go: the first queued decides first. */
  const letGo = async (holder: RowHolder) => {
    await holder.waitForBlocked(2);
    await holder.client.query('ROLLBACK');
    await holder.end();
  };
  const count = async (sql: string) => (await server.sql<{ n: number }>(sql, [orders]))[0]?.n ?? 0;
  const certifications = () =>
    count(
      `SELECT count(*)::int AS n FROM gds.contract_versions WHERE table_id = $1 AND kind = 'CERTIFICATION'`,
    );
  const audited = (action: string) =>
    count(`SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = '${action}'`);
  const state = async () =>
    (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [orders]))[0]?.state;

  it('two certifies of one submission: one certifies it, the other is 400 and writes no second version', async () => {
    await submit(server, orders);
    const [versions, audits] = [await certifications(), await audited('TABLE_CERTIFIED')];
    const holder = await holdTableRow(server, orders);
    const both = [certify('ADMIN'), certify('STEWARD')];
    await letGo(holder);
    const statuses = (await Promise.all(both)).map((r) => r.status).sort();
    expect(statuses).toEqual([200, 400]);
    expect(await certifications()).toBe(versions + 1);
    expect(await audited('TABLE_CERTIFIED')).toBe(audits + 1);
    expect(await state()).toBe('CERTIFIED');
  });

  it('a certify waiting behind a reject of the same submission is 400, and the certified view stays down', async () => {
    // From CERTIFIED: the submission takes its certified view down.
    await submit(server, orders);
    const holder = await holdTableRow(server, orders);
    const rejecting = reject();
    await holder.waitForBlocked(1);
    const certifying = certify();
    await letGo(holder);
    const [rejected, certified] = await Promise.all([rejecting, certifying]);
    expect(rejected.status).toBe(200);
    expect(certified.status).toBe(400);
    expect(await state()).toBe('QUARANTINED');
    const [view] = await server.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM information_schema.views WHERE table_schema = 'certified_dev' AND table_name = 'orders'`,
    );
    expect(view?.n).toBe(0);
  });

  it('two rejects at once: one rejects, the other finds it QUARANTINED (400)', async () => {
    await submit(server, orders);
    const before = await audited('TABLE_REJECTED');
    const holder = await holdTableRow(server, orders);
    const rejects = [reject(), reject()];
    await letGo(holder);
    expect((await Promise.all(rejects)).map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await audited('TABLE_REJECTED')).toBe(before + 1);
  });

  it('a submission filed while certify checked the one before: certify is 422, the new one stays with the steward', async () => {
    await submit(server, orders);
    const holder = await holdTableRow(server, orders);
    const { submitting } = await submitBehind(holder);
    const certifying = certify();
    await letGo(holder);
    const [submitted, certified] = await Promise.all([submitting, certifying]);
    expect(submitted.status).toBe(201);
    expect(certified.status).toBe(422);
    expect(certified.body.error).toMatchObject({ code: 'stale_proof' });
    expect(certified.body.error.message).toContain('submitted again while certify checked it');
    expect(await state()).toBe('PENDING_REVIEW');
    const [notification] = await server.sql<{ closed: boolean }>(
      'SELECT closed_at IS NOT NULL AS closed FROM gds.notifications WHERE id = $1',
      [submitted.body.notificationId],
    );
    expect(notification?.closed).toBe(false);
    // Certified once reviewed again.
    expect((await certify()).status).toBe(200);
  });

  it('a certify of the submission reviewed, waiting behind a new one: 409 submission_changed, nothing certified', async () => {
    const { id: reviewed } = await submit(server, orders);
    const versions = await certifications();
    const holder = await holdTableRow(server, orders);
    // The certify reads the reviewed submission as the newest before it waits on the row; the new one is
    // filed first, under the lock, and the certify compares after it.
    const { submitting } = await submitBehind(holder);
    const certifying = certify('STEWARD', { reviewedProofId: reviewed });
    await letGo(holder);
    const [submitted, certified] = await Promise.all([submitting, certifying]);
    expect(submitted.status).toBe(201);
    expect(certified.status, JSON.stringify(certified.body)).toBe(409);
    expect(certified.body.error).toMatchObject({
      code: 'submission_changed',
      details: { currentProofId: submitted.body.id },
    });
    expect(await state()).toBe('PENDING_REVIEW');
    expect(await certifications()).toBe(versions);
  });

  it('rows changed between certify’s checks and its transaction: 422, audited as CERTIFICATION_BLOCKED', async () => {
    await submit(server, orders);
    const before = await audited('CERTIFICATION_BLOCKED');
    const holder = await holdTableRow(server, orders);
    // The checks have run once certify waits on the row; the warehouse changes meanwhile.
    const certifying = certify();
    await holder.waitForBlocked(1);
    await server.sql(
      'DELETE FROM analytics_dev.orders WHERE id = (SELECT max(id) FROM analytics_dev.orders)',
    );
    await holder.client.query('ROLLBACK');
    await holder.end();
    const refused = await certifying;
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('data_changed_during_checks');
    expect(await state()).toBe('PENDING_REVIEW');
    expect(await audited('CERTIFICATION_BLOCKED')).toBe(before + 1);
    const [entry] = await server.sql<{
      user_id: string;
      details: { refused: { status: number; code: string } };
    }>(
      `SELECT user_id, details FROM gds.audit_log WHERE table_id = $1 AND action = 'CERTIFICATION_BLOCKED'
        ORDER BY created_at DESC, id DESC LIMIT 1`,
      [orders],
    );
    expect(entry?.user_id).toBe(server.user('ADMIN').userId);
    expect(entry?.details.refused).toMatchObject({ status: 422, code: 'data_changed_during_checks' });
  });
});
