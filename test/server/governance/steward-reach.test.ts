// Who learns of a submission (§3, §4.9, §6: `gate submit` notifies the steward): every person of role STEWARD
// and above of the table's workspace whose environments hold the table, each through the one queue
// (GET /api/notifications, what `gds review` reads), and nobody else: not another workspace, not a steward
// whose environments exclude the table, not a MEMBER. Whoever submits, by a browser sign-in or a CLI token, the
// notification is one; a submission whose transaction fails half-way leaves neither the state nor a notification.
// On PGlite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('who learns of a submission, on $engine', ({ postgres, skip }) => {
  describe('the queue of each person', needs(skip), () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({
        jobs: 'manual',
        workspaces: 2,
        ...(postgres ? { database: 'postgres' } : {}),
      });
    });

    afterAll(async () => {
      await server?.close();
    });

    type Role = 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
    const submitAs = (tableId: string, token: string) => {
      server.clock.advance(1000);
      return server.request('POST', `/api/tables/${tableId}/gate-submissions`, { token, body: {} });
    };
    /** The table ids of the queue `token` reads, every page of it, in its order. */
    const queueOf = async (token: string): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '?limit=1' : `?limit=1&cursor=${encodeURIComponent(cursor)}`;
        const page = await server.request('GET', `/api/notifications${query}`, { token });
        expect(page.status).toBe(200);
        ids.push(...page.body.notifications.map((n: { tableId: string }) => n.tableId));
        cursor = page.body.nextCursor;
      } while (cursor !== null);
      return ids;
    };
    const queueOfRole = (role: Role, workspace = 0) =>
      queueOf(server.workspace(workspace).user(role).cliToken);
    const openNotifications = async (tableId: string) =>
      (
        await server.sql<{ n: number }>(
          'SELECT count(*)::int AS n FROM gds.notifications WHERE table_id = $1 AND closed_at IS NULL',
          [tableId],
        )
      )[0]?.n;

    it('a dev table: every STEWARD and above of its workspace learns, once; no MEMBER, no other workspace', async () => {
      const orders = server.table('orders').id;
      const answer = await submitAs(orders, server.user('MEMBER').cliToken);
      expect(answer.status).toBe(201);
      for (const role of ['STEWARD', 'ADMIN', 'OWNER'] as const)
        expect(await queueOfRole(role)).toEqual([orders]);
      const member = await server.request('GET', '/api/notifications', {
        token: server.user('MEMBER').cliToken,
      });
      expect(member.status).toBe(403);
      for (const role of ['STEWARD', 'ADMIN', 'OWNER'] as const)
        expect(await queueOfRole(role, 1)).toEqual([]);
      expect(await openNotifications(orders)).toBe(1);
    });

    it('a steward whose environments exclude the table does not learn of it, an ADMIN does; given them, the steward does', async () => {
      const production = server.table('customers_production').id;
      const answer = await submitAs(production, server.user('OWNER').accessToken);
      expect(answer.status).toBe(201);
      // The seeded steward acts in dev and staging only: the production table is not theirs to review.
      expect(await queueOfRole('STEWARD')).not.toContain(production);
      expect(await queueOfRole('ADMIN')).toContain(production);
      // Given production, the same steward reads it (the queue is read against the scope at the time).
      await server.sql(
        `UPDATE gds.memberships SET env_scope = '["dev","staging","production"]'::jsonb
          WHERE user_id = $1`,
        [server.user('STEWARD').userId],
      );
      try {
        expect(await queueOfRole('STEWARD')).toContain(production);
      } finally {
        await server.sql(
          `UPDATE gds.memberships SET env_scope = '["dev","staging"]'::jsonb WHERE user_id = $1`,
          [server.user('STEWARD').userId],
        );
      }
      expect(await openNotifications(production)).toBe(1);
    });

    it('submitted by a browser sign-in or by a CLI token: one notification naming the submitter', async () => {
      const customers = server.table('customers').id;
      const bySession = await submitAs(customers, server.user('ADMIN').accessToken);
      expect(bySession.status).toBe(201);
      const byToken = await submitAs(customers, server.user('STEWARD').cliToken);
      expect(byToken.status).toBe(201);
      expect(await openNotifications(customers)).toBe(1);
      const queue = await server.request('GET', '/api/notifications', {
        token: server.user('OWNER').cliToken,
      });
      const entry = queue.body.notifications.find((n: { tableId: string }) => n.tableId === customers);
      expect(entry).toMatchObject({
        id: byToken.body.notificationId,
        submittedBy: { email: server.user('STEWARD').email },
      });
    });

    it('an integration token cannot submit (401): nothing changes and nobody is notified', async () => {
      const contacts = server.table('crm_contacts').id;
      const issued = await server.issueToken('OWNER', {
        name: 'ci-submit',
        env: '*',
        scopes: ['workspace:write:definition'],
      });
      const answer = await submitAs(contacts, issued.tokens.accessToken);
      expect(answer.status).toBe(401);
      expect(await openNotifications(contacts)).toBe(0);
      const [table] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [
        contacts,
      ]);
      expect(table?.state).not.toBe('PENDING_REVIEW');
    });

    it('the GraphQL and MCP doors submit nothing: no mutation, no such tool', async () => {
      const contacts = server.table('crm_contacts').id;
      const reader = await server.issueToken('OWNER', {
        name: 'doors',
        env: 'dev',
        scopes: [{ tableId: contacts, permissions: ['read', 'write'] }],
      });
      const token = reader.tokens.accessToken;
      const before = await server.sql('SELECT state, updated_at FROM gds.tables WHERE id = $1', [contacts]);
      const mutation = await server.request('POST', `${server.origin}/graphql`, {
        token,
        body: { query: `mutation { submit(tableId: "${contacts}") { state } }` },
      });
      expect(mutation.body.data ?? null).toBeNull();
      expect(mutation.body.errors?.length).toBeGreaterThan(0);
      const mcp = (body: unknown) =>
        server.request('POST', `${server.origin}/mcp`, {
          token,
          headers: { accept: 'application/json, text/event-stream' },
          body,
        });
      const tools = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(tools.status).toBe(200);
      const names = tools.body.result.tools.map((t: { name: string }) => t.name);
      expect(names.filter((name: string) => /submit|review|certif/.test(name))).toEqual([]);
      const call = await mcp({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'gate_submit', arguments: { tableId: contacts } },
      });
      expect(call.body.result?.isError ?? call.body.error !== undefined).toBe(true);
      expect(await server.sql('SELECT state, updated_at FROM gds.tables WHERE id = $1', [contacts])).toEqual(
        before,
      );
      expect(await openNotifications(contacts)).toBe(0);
    });

    it('three submissions at once, two of one table: one entry each in the queue', async () => {
      const contacts = server.table('crm_contacts').id;
      const orders = server.table('orders').id;
      const answers = await Promise.all([
        submitAs(contacts, server.user('STEWARD').accessToken),
        submitAs(orders, server.user('ADMIN').accessToken),
        submitAs(orders, server.user('OWNER').accessToken),
      ]);
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
      expect(await openNotifications(contacts)).toBe(1);
      expect(await openNotifications(orders)).toBe(1);
      const queue = await queueOfRole('STEWARD');
      expect(queue.filter((id) => id === orders)).toHaveLength(1);
      expect(queue.filter((id) => id === contacts)).toHaveLength(1);
    });
  });

  // A 500 is not in the contract: this server checks none of its answers.
  describe('a submission that fails half-way', needs(skip), () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({
        jobs: 'manual',
        contractCheck: false,
        ...(postgres ? { database: 'postgres' } : {}),
      });
    });

    afterAll(async () => {
      await server?.close();
    });

    const submitAs = (tableId: string, token: string, key?: string) => {
      server.clock.advance(1000);
      return server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
        token,
        body: {},
        ...(key === undefined ? {} : { headers: { 'idempotency-key': key } }),
      });
    };
    const queueOf = async (token: string): Promise<string[]> => {
      const queue = await server.request('GET', '/api/notifications', { token });
      expect(queue.status).toBe(200);
      return queue.body.notifications.map((n: { tableId: string }) => n.tableId);
    };

    it('a submission whose transaction fails after the notification was filed leaves no state and no notification; its retry files one', async () => {
      const contacts = server.table('crm_contacts').id;
      const [before] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [
        contacts,
      ]);
      // The submission's last write, its STEWARD_NOTIFIED audit entry, fails.
      await server.sql(`
        CREATE FUNCTION gds.fail_steward_notified() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.action = 'STEWARD_NOTIFIED' THEN RAISE EXCEPTION 'the disk is full'; END IF;
          RETURN NEW;
        END $$`);
      await server.sql(`
        CREATE TRIGGER fail_steward_notified BEFORE INSERT ON gds.audit_log
          FOR EACH ROW EXECUTE FUNCTION gds.fail_steward_notified();`);
      try {
        // As gds gate submit sends it: with an Idempotency-Key, which a retry sends again.
        const answer = await submitAs(contacts, server.user('STEWARD').accessToken, 'ci-7-contacts');
        expect(answer.status).toBe(500);
      } finally {
        await server.sql('DROP TRIGGER fail_steward_notified ON gds.audit_log');
        await server.sql('DROP FUNCTION gds.fail_steward_notified()');
      }
      const [after] = await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [
        contacts,
      ]);
      expect(after?.state).toBe(before?.state);
      const [filed] = await server.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM gds.notifications WHERE table_id = $1',
        [contacts],
      );
      expect(filed?.n).toBe(0);
      expect(await queueOf(server.user('STEWARD').cliToken)).not.toContain(contacts);
      // Sent again with its key, it is submitted (the failure was not kept as the key's answer) and filed once.
      const again = await submitAs(contacts, server.user('STEWARD').accessToken, 'ci-7-contacts');
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBeNull();
      const [open] = await server.sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM gds.notifications WHERE table_id = $1 AND closed_at IS NULL',
        [contacts],
      );
      expect(open?.n).toBe(1);
      expect(await queueOf(server.user('STEWARD').cliToken)).toContain(contacts);
    });
  });
});
