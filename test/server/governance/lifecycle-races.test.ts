// Conflicting lifecycle actions on one table at once (§3), on PostgreSQL, where their transactions run side
// by side (PGlite runs one at a time): each pair must end as one of them after the other would. The pipeline
// recertification signal (§4.8) decides each table's transition (CERTIFIED: recert_filed with a
// recertification request; otherwise not_certified) on the state it reads, so it must read the state a
// certify committing meanwhile left: never a CERTIFIED table whose newer data was recorded with no request.
// A certify and a definition replacement: certified then replaced (QUARANTINED, a request filed, the view
// down), or replaced then refused (400). A held row lock makes the overlap certain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import type { RowHolder } from '../../helpers/row-holder.js';
import { holdTableRow } from '../../helpers/row-holder.js';
import { needs, noPostgres } from '../../helpers/skip.js';
import { submit } from '../cert/arrange.js';

describe('conflicting lifecycle actions on one table at once, on PostgreSQL', needs(noPostgres), () => {
  let server: TestServer;
  let orders: string;
  let recertifier: string;
  let definer: string;

  beforeAll(async () => {
    server = await startTestServer({ database: 'postgres', jobs: 'manual' });
    orders = server.table('orders').id;
    const issue = async (name: string, env: string, scope: string) =>
      (await server.issueToken('ADMIN', { name, env, scopes: [scope] as never })).tokens.accessToken;
    recertifier = await issue('pipeline', 'dev', 'workspace:write:recertify');
    definer = await issue('ci-definer', '*', 'workspace:write:definition');
  });

  afterAll(async () => {
    await server?.close();
  });

  const certify = () =>
    server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: server.user('ADMIN').accessToken,
      body: { note: 'reviewed' },
    });
  const signal = () =>
    server.request('POST', '/api/workspace/recertify', {
      token: recertifier,
      body: { tables: ['orders'], trigger: 'PIPELINE_RUN' },
    });
  const replace = (columns = ['id', 'order_id']) =>
    server.request('POST', '/api/workspace/definitions', {
      token: definer,
      body: {
        filename: 'orders.yml',
        content: `table: orders\nsource: analytics_dev.orders\ncolumns:\n${columns.map((c) => `  - name: ${c}\n`).join('')}`,
        mimeType: 'yaml',
        connectorId: server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id,
        replaceId: orders,
      },
    });
  /** Once `waiting` requests wait on the held row, lets them go: the first queued decides first. */
  const letGo = async (holder: RowHolder, waiting: number) => {
    await holder.waitForBlocked(waiting);
    await holder.client.query('ROLLBACK');
    await holder.end();
  };
  const count = async (sql: string, params: unknown[] = [orders]) =>
    (await server.sql<{ n: number }>(sql, params))[0]?.n ?? 0;
  const certifications = () =>
    count(
      `SELECT count(*)::int AS n FROM gds.contract_versions WHERE table_id = $1 AND kind = 'CERTIFICATION'`,
    );
  const certifiedView = () =>
    count(
      `SELECT count(*)::int AS n FROM information_schema.views WHERE table_schema = 'certified_dev' AND table_name = 'orders'`,
      [],
    );
  const openRequests = async () =>
    (
      await server.sql<{ cause: string }>(
        `SELECT cause FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
        [orders],
      )
    ).map((r) => r.cause);
  const state = async () =>
    (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [orders]))[0]?.state;

  it('a signal arriving while certify commits: the certified table gets its recertification request (recert_filed)', async () => {
    await submit(server, orders);
    const holder = await holdTableRow(server, orders);
    const certifying = certify();
    await holder.waitForBlocked(1);
    const signalling = signal();
    await letGo(holder, 2);
    const [certified, signalled] = await Promise.all([certifying, signalling]);
    expect(signalled.status).toBe(200);
    // Whichever went first, the outcome is one of the two orders: certify then the signal (CERTIFIED, a
    // request filed), or the signal then certify (the ingest made the proof stale: 422, still in review).
    if (certified.status === 200) {
      expect(await state()).toBe('CERTIFIED');
      expect(signalled.body.outcomes).toEqual([
        expect.objectContaining({ table: 'orders', outcome: 'recert_filed' }),
      ]);
      expect(signalled.body.outcomes[0]).not.toHaveProperty('staleSubmission');
      expect(await openRequests()).toEqual(['ingest']);
    } else {
      expect(certified.status).toBe(422);
      expect(await state()).toBe('PENDING_REVIEW');
      expect(signalled.body.outcomes).toEqual([
        expect.objectContaining({ table: 'orders', outcome: 'not_certified' }),
      ]);
    }
  });

  it('a certify waiting behind a signal: the ingest went first, so the proof is stale (422) and the table stays in review', async () => {
    await submit(server, orders);
    const holder = await holdTableRow(server, orders);
    const signalling = signal();
    await holder.waitForBlocked(1);
    const certifying = certify();
    await letGo(holder, 2);
    const [signalled, certified] = await Promise.all([signalling, certifying]);
    expect(signalled.body.outcomes).toEqual([
      expect.objectContaining({ table: 'orders', outcome: 'not_certified', staleSubmission: true }),
    ]);
    expect(certified.status).toBe(422);
    expect(certified.body.error).toMatchObject({ code: 'stale_proof' });
    expect(await state()).toBe('PENDING_REVIEW');
  });

  it('a replacement waiting behind a certify: certified, then replaced (QUARANTINED, a request filed, the view down)', async () => {
    await server.sql(`UPDATE gds.recertification_requests SET status = 'DISMISSED' WHERE table_id = $1`, [
      orders,
    ]);
    await submit(server, orders);
    const versions = await certifications();
    const holder = await holdTableRow(server, orders);
    const certifying = certify();
    await holder.waitForBlocked(1);
    const replacing = replace();
    await letGo(holder, 2);
    const [certified, replaced] = await Promise.all([certifying, replacing]);
    expect(certified.status).toBe(200);
    expect(replaced.status).toBe(202);
    expect(replaced.body.state).toBe('QUARANTINED');
    expect(await state()).toBe('QUARANTINED');
    expect(await certifications()).toBe(versions + 1);
    expect(await openRequests()).toEqual(['schema_change']);
    expect(await certifiedView()).toBe(0);
  });

  it('a certify waiting behind a replacement: replaced, then refused (400), no version written', async () => {
    await submit(server, orders);
    const versions = await certifications();
    const holder = await holdTableRow(server, orders);
    const replacing = replace(['id', 'order_id', 'amount']);
    await holder.waitForBlocked(1);
    const certifying = certify();
    await letGo(holder, 2);
    const [replaced, certified] = await Promise.all([replacing, certifying]);
    expect(replaced.status).toBe(202);
    expect(certified.status).toBe(400);
    expect(certified.body.error).toMatchObject({ code: 'not_pending_review' });
    expect(await state()).toBe('QUARANTINED');
    expect(await certifications()).toBe(versions);
    expect(await certifiedView()).toBe(0);
  });

  it('two submissions at once (no key): both filed, the table waits for review with one open notification, and certifies', async () => {
    server.clock.advance(1000);
    const holder = await holdTableRow(server, orders);
    const submitAs = (role: 'MEMBER' | 'STEWARD') =>
      server.request('POST', `/api/tables/${orders}/gate-submissions`, {
        token: server.user(role).accessToken,
        body: {},
      });
    const both = [submitAs('MEMBER'), submitAs('STEWARD')];
    await letGo(holder, 2);
    const answers = await Promise.all(both);
    expect(answers.map((a) => a.status)).toEqual([201, 201]);
    expect(await state()).toBe('PENDING_REVIEW');
    const open = await server.sql<{ id: string }>(
      'SELECT id FROM gds.notifications WHERE table_id = $1 AND closed_at IS NULL',
      [orders],
    );
    expect(open).toHaveLength(1);
    expect(answers.map((a) => a.body.notificationId)).toContain(open[0]?.id);
    expect((await certify()).status).toBe(200);
    expect(await state()).toBe('CERTIFIED');
  });
});
