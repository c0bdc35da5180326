// Deleting a table (§3: `delete`, soft: only the governance record goes) ends the work still open on it:
// its OPEN recertification requests are closed (DISMISSED, saying the table was deleted) and can no longer
// be dismissed (404, as for an unknown request), its queued or running gate jobs are CANCELLED instead of
// running against a table that is gone, and its steward notification leaves the queue. The audit log says
// each of these.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { holdTableRow } from '../../helpers/row-holder.js';
import { needs } from '../../helpers/skip.js';
import { submit } from '../cert/arrange.js';

describe.each(ENGINES)('deleting a table with open work on it, on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let devConnector: string;

  const admin = () => server.user('ADMIN').cliToken;
  const del = (id: string) => server.request('DELETE', `/api/tables/${id}`, { token: admin() });
  const jobStatus = async (id: string) =>
    (await server.sql<{ status: string }>('SELECT status FROM gds.jobs WHERE id = $1', [id]))[0]?.status;
  const audits = (tableId: string, action: string) =>
    server.sql<{ user_id: string; details: Record<string, unknown> }>(
      `SELECT user_id, details FROM gds.audit_log WHERE table_id = $1 AND action = $2 ORDER BY created_at, id`,
      [tableId, action],
    );

  /** A warehouse table `analytics_dev.<name>` and its Mode A definition pushed (202): the new table's id. */
  const newTable = async (name: string) => {
    await server.sql(`CREATE TABLE analytics_dev.${name} (id integer)`);
    const pushed = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: {
        filename: `${name}.yml`,
        content: `table: ${name}\nsource: analytics_dev.${name}\ncolumns:\n  - name: id\n`,
        connectorId: devConnector,
      },
    });
    expect(pushed.status).toBe(202);
    return pushed.body.governanceId as string;
  };

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({
      jobs: 'manual',
      ...(postgres ? { database: 'postgres' as const } : {}),
    });
    devConnector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
  });

  afterAll(async () => {
    await server?.close();
  });

  it(
    'closes its open recertification requests; a dismiss of one is refused as for an unknown request',
    needs(skip),
    async () => {
      const customers = server.table('customers').id;
      // A definition replaced on a CERTIFIED table files a schema_change request.
      const replaced = await server.request('POST', '/api/artifacts', {
        token: server.user('OWNER').cliToken,
        body: {
          filename: 'customers.yml',
          content:
            'table: customers\nsource: analytics_dev.customers\ncolumns:\n  - name: id\n  - name: email\n',
          connectorId: devConnector,
          replaceId: customers,
        },
      });
      expect(replaced.status).toBe(202);
      const [open] = (
        await server.request('GET', '/api/recertification-requests', {
          token: server.user('STEWARD').cliToken,
        })
      ).body.requests as Array<{ id: string; tableId: string }>;
      expect(open?.tableId).toBe(customers);
      const requestId = open?.id ?? '';

      expect((await del(customers)).status).toBe(200);

      const dismiss = await server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, {
        token: server.user('STEWARD').cliToken,
        body: { reason: 'stale' },
      });
      expect(dismiss.status).toBe(404);
      expect(dismiss.body.error.code).toBe('recertification_request_not_found');
      const [row] = await server.sql<{ status: string; dismissed_by: string | null }>(
        'SELECT status, dismissed_by FROM gds.recertification_requests WHERE id = $1',
        [requestId],
      );
      expect(row).toEqual({ status: 'DISMISSED', dismissed_by: server.user('ADMIN').userId });
      const dismissed = await audits(customers, 'RECERTIFICATION_DISMISSED');
      expect(dismissed).toEqual([
        {
          user_id: server.user('ADMIN').userId,
          details: { requestId, cause: 'schema_change', reason: 'table deleted' },
        },
      ]);
    },
  );

  it(
    'cancels its queued and running gate jobs, with an audit entry each, so none runs afterwards',
    needs(skip),
    async () => {
      // A new definition: the auto-baseline job is queued with it.
      const tableId = await newTable('orders_copy');
      const [baseline] = await server.sql<{ id: string }>(
        `SELECT id FROM gds.jobs WHERE table_id = $1 AND type = 'gate-baseline-auto'`,
        [tableId],
      );
      const baselineId = baseline?.id ?? '';
      const run = () =>
        server.request('POST', `/api/tables/${tableId}/gate-runs`, {
          token: server.user('OWNER').cliToken,
          body: { gate: 2 },
        });
      // The baseline job and one Gate 2 job are RUNNING (claimed, not run yet); another Gate 2 job is QUEUED.
      const running = (await run()).body.job.id as string;
      await server.jobs.startPending();
      const queued = (await run()).body.job.id as string;
      expect(await jobStatus(baselineId)).toBe('RUNNING');
      expect(await jobStatus(running)).toBe('RUNNING');
      expect(await jobStatus(queued)).toBe('QUEUED');

      expect((await del(tableId)).status).toBe(200);
      await server.jobs.runPending();

      for (const id of [baselineId, running, queued]) expect(await jobStatus(id)).toBe('CANCELLED');
      // What `push --wait` and `gate status` read: the job ended, CANCELLED.
      const read = await server.request('GET', `/api/gate-jobs/${baselineId}`, {
        token: server.user('OWNER').cliToken,
      });
      expect(read.status).toBe(200);
      expect(read.body.status).toBe('CANCELLED');
      const cancelled = await audits(tableId, 'GATE_JOB_CANCELLED');
      expect(cancelled.map((a) => a.details)).toEqual(
        expect.arrayContaining([
          { jobId: baselineId, type: 'gate-baseline-auto', from: 'RUNNING', reason: 'table deleted' },
          { jobId: running, type: 'gate2', from: 'RUNNING', reason: 'table deleted' },
          { jobId: queued, type: 'gate2', from: 'QUEUED', reason: 'table deleted' },
        ]),
      );
      expect(cancelled).toHaveLength(3);
      expect(cancelled.every((a) => a.user_id === server.user('ADMIN').userId)).toBe(true);
    },
  );

  it(
    'a Gate 2 run whose table is deleted while it is being queued is 404, and no job is left queued',
    needs(
      skip ??
        (postgres ? undefined : 'PGlite runs one transaction at a time: none commits while another is held'),
    ),
    async () => {
      const tableId = await newTable('orders_race');
      await server.jobs.runPending();
      // The run has read the table and waits to queue its job; the delete commits meanwhile.
      const holder = await holdTableRow(server, tableId);
      const run = server.request('POST', `/api/tables/${tableId}/gate-runs`, {
        token: server.user('OWNER').cliToken,
        body: { gate: 2 },
      });
      await holder.waitForBlocked(1);
      await holder.client.query('UPDATE gds.tables SET active = false WHERE id = $1', [tableId]);
      await holder.client.query('COMMIT');
      await holder.end();
      const answered = await run;
      expect(answered.status, JSON.stringify(answered.body)).toBe(404);
      expect(answered.body.error.code).toBe('table_not_found');
      const left = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.jobs WHERE table_id = $1 AND type = 'gate2'`,
        [tableId],
      );
      expect(left).toEqual([{ n: 0 }]);
    },
  );

  it('takes its steward notification out of the queue', needs(skip), async () => {
    const orders = server.table('orders').id;
    await submit(server, orders);
    const queue = () =>
      server.request('GET', '/api/notifications', { token: server.user('STEWARD').cliToken });
    expect((await queue()).body.notifications.map((n: { tableId: string }) => n.tableId)).toContain(orders);
    expect((await del(orders)).status).toBe(200);
    expect((await queue()).body.notifications.map((n: { tableId: string }) => n.tableId)).not.toContain(
      orders,
    );
    const open = await server.sql<{ n: number }>(
      'SELECT count(*)::int AS n FROM gds.notifications WHERE table_id = $1 AND closed_at IS NULL',
      [orders],
    );
    expect(open[0]?.n).toBe(0);
  });
});
