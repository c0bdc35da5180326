// The steward's queue: a `gate submit` files a notification that `GET /api/notifications` shows a STEWARD
// and above (paged by key), with its proof, what changed since the last certified version and the open
// recertification requests; it closes when the table leaves PENDING_REVIEW. On PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { ENGINES } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { submit } from '../cert/arrange.js';

describe.each(ENGINES)('the steward queue on $engine', ({ postgres, skip }) => {
  describe('GET /api/notifications', needs(skip), () => {
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

    const queue = async (query = '', role: 'STEWARD' | 'ADMIN' | 'MEMBER' = 'STEWARD') =>
      server.request('GET', `/api/notifications${query}`, { token: server.user(role).cliToken });
    const steward = () => server.user('STEWARD');

    it('is a steward’s: a MEMBER is 403, a STEWARD sees an empty queue', async () => {
      const member = await queue('', 'MEMBER');
      expect(member.status).toBe(403);
      expect(member.body.error.code).toBe('steward_role_required');
      const empty = await queue();
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ notifications: [] });
    });

    it('a submission is listed with its proof, its submitter’s e-mail and no certified version', async () => {
      const proof = await submit(server, orders);
      const answer = await queue();
      expect(answer.status).toBe(200);
      expect(answer.body.notifications).toHaveLength(1);
      const [entry] = answer.body.notifications;
      expect(entry).toMatchObject({
        kind: 'gate_submitted',
        tableId: orders,
        tableName: 'orders',
        state: 'PENDING_REVIEW',
        submittedBy: { userId: steward().userId, email: steward().email },
        proof: { passed: proof.passed, failedPredicates: proof.failedPredicates },
        sinceCertified: null,
        openRecertificationRequests: [],
      });
      const audit = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'STEWARD_NOTIFIED'
            AND details->>'notificationId' = $2`,
        [orders, entry.id],
      );
      expect(audit[0]?.n).toBe(1);
    });

    it('a second submission of the table replaces its entry; another table pages by key', async () => {
      const [before] = (await queue()).body.notifications;
      await submit(server, orders);
      await submit(server, customers);
      const all = await queue();
      expect(all.body.notifications.map((n: { tableId: string }) => n.tableId)).toEqual([orders, customers]);
      expect(all.body.notifications[0].id).not.toBe(before.id);
      const first = await queue('?limit=1');
      expect(first.body).toMatchObject({ total: 2, notifications: [{ tableId: orders }] });
      expect(typeof first.body.nextCursor).toBe('string');
      const second = await queue(`?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
      expect(second.body.notifications.map((n: { tableId: string }) => n.tableId)).toEqual([customers]);
      expect(second.body.nextCursor).toBeNull();
      expect((await queue('?cursor=nonsense')).status).toBe(400);
    });

    it('closes when the table is rejected or certified; a later submission shows the certified version', async () => {
      const rejected = await server.request('POST', `/api/tables/${customers}/reject`, {
        token: steward().accessToken,
        body: { reason: 'not yet' },
      });
      expect(rejected.status).toBe(200);
      expect((await queue()).body.notifications.map((n: { tableId: string }) => n.tableId)).toEqual([orders]);

      const certified = await server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
        token: steward().accessToken,
        body: {},
      });
      expect(certified.status).toBe(200);
      expect((await queue()).body.notifications).toEqual([]);
      const closed = await server.sql<{ open: number }>(
        'SELECT count(*)::int AS open FROM gds.notifications WHERE closed_at IS NULL',
      );
      expect(closed[0]?.open).toBe(0);

      // A changed gate1.yml since the certified version, and a request it filed on the CERTIFIED table.
      const applied = await server.request('PUT', `/api/tables/${orders}/gate1`, {
        token: server.user('OWNER').cliToken,
        body: {
          content: 'customPredicates:\n  - name: id_set\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
        },
      });
      expect(applied.status).toBe(200);
      await submit(server, orders);
      const [entry] = (await queue('', 'ADMIN')).body.notifications;
      expect(entry.sinceCertified).toMatchObject({
        version: 1,
        certifiedBy: steward().email,
        changed: [{ what: 'gate1', to: entry.proof.tableVersion.gate1 }],
      });
      expect(entry.sinceCertified.changed[0].from).toBe(entry.sinceCertified.tableVersion.gate1);
      expect(entry.openRecertificationRequests).toEqual([
        expect.objectContaining({ cause: 'manual', count: 1 }),
      ]);
    });
  });
});
