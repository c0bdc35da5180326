// The steward's queue: a `gate submit` files a notification that `GET /api/notifications` shows a STEWARD
// and above (paged by key), with its proof, what changed since the last certified version and the open
// recertification requests; it closes when the table leaves PENDING_REVIEW. On PGlite and PostgreSQL.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestResponse, TestServer } from '../../helpers/server.js';
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
      // The cursor of the queue before it was read in commit order: (created_at, id), as the other lists'.
      const old = Buffer.from(
        JSON.stringify({ createdAt: '2026-01-01T00:00:00.000000Z', id: second.body.notifications[0].id }),
      ).toString('base64url');
      const refused = await queue(`?limit=1&cursor=${old}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe('invalid_query');
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

  // A steward (or a script) pages the queue while submissions commit: a notification filed with an earlier
  // created_at that commits after the steward read past a later one must still come on a later page.
  describe('read while submissions commit', needs(skip), () => {
    let server: TestServer;
    let tables: { orders: string; customers: string; contacts: string };

    beforeAll(async () => {
      server = await startTestServer({ jobs: 'manual', ...(postgres ? { database: 'postgres' } : {}) });
      tables = {
        orders: server.table('orders').id,
        customers: server.table('customers').id,
        contacts: server.table('crm_contacts').id,
      };
    });

    afterAll(async () => {
      await server?.close();
    });

    const steward = () => server.user('STEWARD');
    const queuePage = async (cursor: string | null): Promise<{ tableIds: string[]; next: string | null }> => {
      const answer = await server.request(
        'GET',
        `/api/notifications?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        { token: steward().cliToken },
      );
      expect(answer.status).toBe(200);
      return {
        tableIds: answer.body.notifications.map((n: { tableId: string }) => n.tableId),
        next: answer.body.nextCursor,
      };
    };
    /** The rest of the queue after `cursor` (from the top when null: a null nextCursor is "nothing more yet"). */
    const readOn = async (cursor: string | null): Promise<string[]> => {
      const seen: string[] = [];
      let next = cursor;
      do {
        const page = await queuePage(next);
        seen.push(...page.tableIds);
        next = page.next;
      } while (next !== null);
      return seen;
    };
    const submitted = (tableId: string) =>
      server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
        token: steward().accessToken,
        body: {},
      });
    const clearQueue = () =>
      server.sql('UPDATE gds.notifications SET closed_at = now() WHERE closed_at IS NULL');

    it('a submission whose created_at is earlier than one already read (the clock stepped back) is on the next page', async () => {
      await clearQueue();
      server.clock.advance(1000);
      expect((await submitted(tables.customers)).status).toBe(201);
      server.clock.advance(1000);
      expect((await submitted(tables.contacts)).status).toBe(201);
      const first = await queuePage(null);
      expect(first.tableIds).toEqual([tables.customers]);
      server.clock.advance(-10_000);
      expect((await submitted(tables.orders)).status).toBe(201);
      server.clock.advance(10_000);
      const rest = await readOn(first.next);
      expect(new Set([...first.tableIds, ...rest])).toEqual(new Set(Object.values(tables)));
    });

    it(
      'a submission committing after later ones (its transaction held) is seen by a steward paging meanwhile',
      needs(
        postgres ? undefined : 'PGlite runs one transaction at a time: none commits while another is held',
      ),
      async () => {
        await clearQueue();
        const [current] = await server.sql<{ db: string }>('SELECT current_database() AS db');
        const url = new URL(process.env.GDS_TEST_DATABASE_URL ?? '');
        url.pathname = `/${current?.db ?? ''}`;
        const holder = new pg.Client({ connectionString: url.toString() });
        await holder.connect();
        const HOLD = 71_067;
        try {
          // The orders submission stops right after filing its notification, until the holder lets it go.
          await holder.query(`
            CREATE OR REPLACE FUNCTION gds.test_hold_notification() RETURNS trigger LANGUAGE plpgsql AS $$
              BEGIN
                IF NEW.table_id = '${tables.orders}' THEN PERFORM pg_advisory_xact_lock(${HOLD}); END IF;
                RETURN NEW;
              END $$;
            CREATE TRIGGER test_hold_notification AFTER INSERT ON gds.notifications
              FOR EACH ROW EXECUTE FUNCTION gds.test_hold_notification();`);
          await holder.query('SELECT pg_advisory_lock($1)', [HOLD]);
          const waiting = async () => {
            const { rows } = await holder.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'`,
            );
            return rows[0]?.n ?? 0;
          };
          /** Polls until `done` (no time limit of its own: the test's timeout is the bound). */
          const until = async (done: () => Promise<boolean>) => {
            while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 20));
          };

          server.clock.advance(1000);
          const held = submitted(tables.orders);
          await until(async () => (await waiting()) === 1);
          // Two later submissions (a later created_at): each commits, or waits for the held one and is then
          // filed after it. The steward reads the first page once each has done one or the other.
          const answered = new Set<string>();
          const later = [tables.customers, tables.contacts].map((tableId) => {
            server.clock.advance(1000);
            return submitted(tableId).then((answer: TestResponse) => {
              answered.add(tableId);
              return answer;
            });
          });
          await until(async () => answered.size + (await waiting()) - 1 === later.length);

          const first = await queuePage(null);
          await holder.query('SELECT pg_advisory_unlock($1)', [HOLD]);
          const answers = await Promise.all([held, ...later]);
          expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);

          const rest = await readOn(first.next);
          expect(new Set([...first.tableIds, ...rest])).toEqual(new Set(Object.values(tables)));
        } finally {
          // Let a still held submission go first: it holds gds.notifications, which the DROP waits for.
          await holder.query('SELECT pg_advisory_unlock_all()');
          await holder.query(`DROP TRIGGER IF EXISTS test_hold_notification ON gds.notifications;
            DROP FUNCTION IF EXISTS gds.test_hold_notification();`);
          await holder.end();
        }
      },
    );
  });
});
