// "A steward must learn of every submission" (§3: gate submit is the steward handoff, it notifies; gate apply is
// private editing and does not, lines 148 and 260 of the spec), and exactly once: the submission's notification
// is filed once whatever way it is sent again — `ifStale` (what `gds apply --submit` sends), or the same
// `Idempotency-Key` (a pipeline re-running its step) — and every table waiting for review has its open
// notification. Read as the steward reads it (GET /api/notifications) and in the database. On PGlite and
// PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('the steward learns of each submission once, on $engine', ({ postgres, skip }) => {
  describe('submissions and their notifications', needs(skip), () => {
    let server: TestServer;
    let orders: string;
    let customers: string;

    beforeAll(async () => {
      server = await startTestServer({ jobs: 'manual', ...(postgres ? { database: 'postgres' } : {}) });
      orders = server.table('orders').id;
      customers = server.table('customers').id;
    });

    afterAll(async () => {
      await server?.close();
    });

    const steward = () => server.user('STEWARD');
    const submitRaw = (tableId: string, options: { query?: string; key?: string; body?: unknown } = {}) => {
      server.clock.advance(1000);
      return server.request('POST', `/api/tables/${tableId}/gate-submissions${options.query ?? ''}`, {
        token: steward().accessToken,
        body: options.body ?? {},
        ...(options.key === undefined ? {} : { headers: { 'idempotency-key': options.key } }),
      });
    };
    /** What the steward and the database hold of the table's notifications. */
    const notified = async (tableId: string) => {
      const queue = await server.request('GET', '/api/notifications', { token: steward().cliToken });
      expect(queue.status).toBe(200);
      const [row] = await server.sql<{ filed: number; open: number }>(
        `SELECT count(*)::int AS filed, count(*) FILTER (WHERE closed_at IS NULL)::int AS open
           FROM gds.notifications WHERE table_id = $1`,
        [tableId],
      );
      const [audit] = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'STEWARD_NOTIFIED'`,
        [tableId],
      );
      return {
        listed: queue.body.notifications.filter((n: { tableId: string }) => n.tableId === tableId).length,
        filed: row?.filed,
        open: row?.open,
        audited: audit?.n,
      };
    };
    /** Every active table waiting for review has exactly one open notification. */
    const everyReviewNotified = async () => {
      const unnotified = await server.sql<{ id: string; open: number }>(
        `SELECT t.id, (SELECT count(*)::int FROM gds.notifications n
                        WHERE n.table_id = t.id AND n.closed_at IS NULL) AS open
           FROM gds.tables t WHERE t.active AND t.state = 'PENDING_REVIEW'`,
      );
      expect(unnotified.filter((t) => t.open !== 1)).toEqual([]);
    };
    const gate1 = (tableId: string, content: string) =>
      server.request('PUT', `/api/tables/${tableId}/gate1`, {
        token: server.user('OWNER').accessToken,
        body: { content },
      });
    const RULES = 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0.1, fail: 0.5 }\n';

    it('gate submit notifies the steward once; ifStale (apply --submit) sent again notifies nobody', async () => {
      const first = await submitRaw(orders, { query: '?ifStale=true' });
      expect(first.status).toBe(201);
      expect(first.body.notificationId).toMatch(/^ntf_/);
      expect(await notified(orders)).toEqual({ listed: 1, filed: 1, open: 1, audited: 1 });
      const again = await submitRaw(orders, { query: '?ifStale=true' });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ skipped: 'fresh', id: first.body.id });
      expect(again.body.notificationId).toBeUndefined();
      expect(await notified(orders)).toEqual({ listed: 1, filed: 1, open: 1, audited: 1 });
      await everyReviewNotified();
    });

    it('a submission sent again with the same Idempotency-Key is answered as the first, notifying nobody', async () => {
      const before = await notified(orders);
      const first = await submitRaw(orders, { key: 'ci-run-42-orders' });
      expect(first.status).toBe(201);
      const filed = {
        listed: 1,
        filed: (before.filed ?? 0) + 1,
        open: 1,
        audited: (before.audited ?? 0) + 1,
      };
      expect(await notified(orders)).toEqual(filed);
      const retried = await submitRaw(orders, { key: 'ci-run-42-orders' });
      expect(retried.status).toBe(201);
      expect(retried.body).toEqual(first.body);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(await notified(orders)).toEqual(filed);
      const [proofs] = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.gate_proofs WHERE table_id = $1 AND kind = 'submit'`,
        [orders],
      );
      expect(proofs?.n).toBe(2);
      // The key names that one submission: another request with it is refused, nothing submitted.
      const reused = await submitRaw(orders, { key: 'ci-run-42-orders', body: { ifNotCertified: true } });
      expect(reused.status).toBe(422);
      expect(reused.body.error.code).toBe('idempotency_key_reused');
      const elsewhere = await submitRaw(customers, { key: 'ci-run-42-orders' });
      expect(elsewhere.status).toBe(422);
      expect(await notified(customers)).toEqual({ listed: 0, filed: 0, open: 0, audited: 0 });
      expect(await notified(orders)).toEqual(filed);
      // Without the key, a submission is a new one: the steward hears of it (its entry replaces the first).
      const fresh = await submitRaw(orders);
      expect(fresh.status).toBe(201);
      expect(await notified(orders)).toEqual({
        ...filed,
        filed: filed.filed + 1,
        audited: filed.audited + 1,
      });
      await everyReviewNotified();
    });

    it('two submissions at once with one Idempotency-Key file one notification', async () => {
      const before = await notified(orders);
      const [a, b] = await Promise.all([
        submitRaw(orders, { key: 'ci-run-43-orders' }),
        submitRaw(orders, { key: 'ci-run-43-orders' }),
      ]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.body).toEqual(b.body);
      expect([a, b].filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
      expect(await notified(orders)).toEqual({
        listed: 1,
        filed: (before.filed ?? 0) + 1,
        open: 1,
        audited: (before.audited ?? 0) + 1,
      });
      await everyReviewNotified();
    });

    it('refuses an Idempotency-Key that is not a short printable string (400), submitting nothing', async () => {
      const before = await notified(orders);
      const refused = await submitRaw(orders, { key: 'x'.repeat(201) });
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_idempotency_key');
      expect(await notified(orders)).toEqual(before);
    });

    it('gate apply notifies nobody: on a table waiting for review, nor on a CERTIFIED one', async () => {
      const waiting = await notified(orders);
      expect((await gate1(orders, RULES)).status).toBe(200);
      expect(await notified(orders)).toEqual(waiting);
      expect((await gate1(customers, RULES)).status).toBe(200);
      expect(await notified(customers)).toEqual({ listed: 0, filed: 0, open: 0, audited: 0 });
      await everyReviewNotified();
    });
  });
});
