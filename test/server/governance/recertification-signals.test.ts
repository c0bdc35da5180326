// A merged recertification request keeps every signal: on a CERTIFIED table, a gate1.yml applied by its owner
// and a restore by a steward (its reason) are two `manual` signals that merge into one open request; both
// are kept with who sent them, when and their own details, in the API, in `gds recertification list --json`
// (and its Latest column) and on the dashboard's table page; requests filed before signals were kept get
// their latest one. On PGlite and on PostgreSQL.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../../cli/helpers/cli-process.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from '../db/earlier-schema.js';

/** The migration that keeps every signal. */
const SIGNALS_MIGRATION = 62;

const RESTORE_REASON = 'rollback: the March load doubled the rows';

describe.each(ENGINES)('merged recertification signals on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let dir: string;
  let table: { id: string; name: string };
  let requestId: string;
  let restoredVersion: number;

  beforeAll(async () => {
    if (skip !== undefined) return;
    [server] = await Promise.all([
      startTestServer({ database: postgres ? 'postgres' : 'pglite', jobs: 'manual' }),
      ensureBuilt(),
    ]);
    dir = await mkdtemp(join(tmpdir(), 'gds-signals-'));
    table = server.table('customers');
    // The seed certified customers (version 1): other rules file a manual request…
    const applied = await server.request('PUT', `/api/tables/${table.id}/gate1`, {
      token: server.user('OWNER').cliToken,
      body: {
        content: 'customPredicates:\n  - name: has_id\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
      },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    requestId = applied.body.recertificationRequestId;
    server.clock.advance(60_000);
    // …and a restore, a second manual signal, merges into it.
    const restored = await server.request('POST', `/api/tables/${table.id}/versions/restore`, {
      token: server.user('STEWARD').accessToken,
      body: { to: 1, reason: RESTORE_REASON },
    });
    expect(restored.status, JSON.stringify(restored.body)).toBe(200);
    expect(restored.body.recertificationRequestId).toBe(requestId);
    restoredVersion = restored.body.version.version;
  });

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const expectedSignals = () => [
    {
      id: expect.stringMatching(/^rcs_/),
      cause: 'manual',
      createdBy: server.user('OWNER').userId,
      createdAt: expect.any(String),
      details: expect.objectContaining({ reason: 'gate1.yml applied', gate1Version: expect.any(Number) }),
    },
    {
      id: expect.stringMatching(/^rcs_/),
      cause: 'manual',
      createdBy: server.user('STEWARD').userId,
      createdAt: expect.any(String),
      details: { reason: RESTORE_REASON, restoredFrom: 1, version: restoredVersion },
    },
  ];

  it(
    'the API lists one open request counted twice, with both signals, oldest first',
    needs(skip),
    async () => {
      const listed = await server.request('GET', `/api/recertification-requests?tableId=${table.id}`, {
        token: server.user('STEWARD').cliToken,
      });
      expect(listed.status).toBe(200);
      expect(listed.body.requests).toEqual([
        expect.objectContaining({ id: requestId, cause: 'manual', status: 'OPEN', count: 2 }),
      ]);
      const [request] = listed.body.requests;
      expect(request.signals).toEqual(expectedSignals());
      // Each signal keeps its own time: the server's clock moved a minute between them.
      const [applied, restored] = request.signals.map((s: { createdAt: string }) => Date.parse(s.createdAt));
      expect(restored - applied).toBeGreaterThanOrEqual(60_000);
      // A page of the list carries them too.
      const paged = await server.request('GET', `/api/recertification-requests?tableId=${table.id}&limit=1`, {
        token: server.user('STEWARD').cliToken,
      });
      expect(paged.body.requests[0].signals).toEqual(expectedSignals());
    },
  );

  it(
    'gds recertification list --json prints every signal; piped, the Latest column is the restore',
    { ...needs(skip) },
    async () => {
      const env = {
        GDS_CONFIG_DIR: join(dir, 'gds'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('STEWARD').cliToken,
      };
      const json = await runCli(['recertification', 'list', '--table', table.id, '--json'], { env });
      expect(json.code, json.stderr).toBe(0);
      expect(json.stderr).toBe('');
      const lines = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(lines).toEqual([
        expect.objectContaining({ id: requestId, count: 2, signals: expectedSignals() }),
      ]);

      const piped = await runCli(['recertification', 'list', '--table', table.id], { env });
      expect(piped.code, piped.stderr).toBe(0);
      const [row] = piped.stdout.trim().split('\n');
      expect(row?.split('\t')).toContain('2');
      expect(row).toContain(`reason: ${RESTORE_REASON}; restoredFrom: 1; version: ${restoredVersion}`);
    },
  );

  it('dismissing it answers the request with both signals', needs(skip), async () => {
    const dismissed = await server.request('POST', `/api/recertification-requests/${requestId}/dismiss`, {
      token: server.user('STEWARD').cliToken,
      body: { reason: 'checked by hand' },
    });
    expect(dismissed.status).toBe(200);
    expect(dismissed.body.request).toMatchObject({ status: 'DISMISSED', count: 2 });
    expect(dismissed.body.request.signals).toEqual(expectedSignals());
  });
});

describe.each(ENGINES)(
  'the dashboard shows every signal of an open request on $engine',
  ({ postgres, skip }) => {
    let server: TestServer;

    beforeAll(async () => {
      if (skip !== undefined) return;
      server = await startTestServer({ database: postgres ? 'postgres' : 'pglite', jobs: 'manual' });
    });

    afterAll(async () => {
      await server?.close();
    });

    it('each signal with its time, its sender by e-mail and its details', needs(skip), async () => {
      const table = server.table('customers');
      const applied = await server.request('PUT', `/api/tables/${table.id}/gate1`, {
        token: server.user('OWNER').cliToken,
        body: {
          content: 'customPredicates:\n  - name: has_id\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
        },
      });
      expect(applied.status).toBe(200);
      server.clock.advance(60_000);
      const restored = await server.request('POST', `/api/tables/${table.id}/versions/restore`, {
        token: server.user('STEWARD').accessToken,
        body: { to: 1, reason: 'rollback <b>now</b>' },
      });
      expect(restored.status).toBe(200);

      const signIn = await fetch(`${server.origin}/dashboard/sign-in`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: server.origin,
          'sec-fetch-site': 'same-origin',
        },
        body: new URLSearchParams({ email: server.user('MEMBER').email }).toString(),
        redirect: 'manual',
      });
      expect(signIn.status).toBe(303);
      const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
      const page = await fetch(`${server.origin}/dashboard/tables/${table.id}`, { headers: { cookie } });
      expect(page.status).toBe(200);
      const text = (await page.text()).replace(/\s+/g, ' ');
      const section = text.split('<h2>Open recertification requests</h2>')[1]?.split('<h2>')[0] ?? '';
      const items = [...section.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]);
      expect(items).toHaveLength(2);
      expect(items[0]).toContain(
        `by ${server.user('OWNER').email}: reason: gate1.yml applied; gate1Version:`,
      );
      // The reason is escaped, like every value the dashboard shows.
      expect(items[1]).toContain(
        `by ${server.user('STEWARD').email}: reason: rollback &lt;b&gt;now&lt;/b&gt;; restoredFrom: 1; version: ${restored.body.version.version}`,
      );
      expect(section).not.toContain(server.user('STEWARD').userId);
    });
  },
);

describe.each(ENGINES)('requests filed before signals were kept, on $engine', (engine) => {
  const db = useEngineDb(
    engine,
    async (db) => {
      // The database as the server before this migration left it, with two open requests. Rows are written by
      // hand: the seed is today's code, which writes columns later migrations add.
      await schemaBefore(db, SIGNALS_MIGRATION);
      await db.query(
        `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                                 columns, created_at, updated_at)
         VALUES ('tbl_customers', 'ws_a', 'customers', 'customers', 'MODE_A', 'CERTIFIED', 'ENFORCING', 'dev',
                 'usr_a', '[]', $1, $1)`,
        [T0],
      );
      await db.query(
        `INSERT INTO gds.recertification_requests
           (id, workspace_id, table_id, cause, status, details, created_by, created_at, last_seen_at, signal_count)
         SELECT r.id, t.workspace_id, t.id, r.cause, 'OPEN', r.details::jsonb, 'usr_first', r.at::timestamptz,
                r.last::timestamptz, r.n
           FROM (VALUES ('rcr_once', 'manual', '{"reason":"only one"}', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 1),
                        ('rcr_thrice', 'drift', '{"trigger":"nightly"}', '2026-01-01T00:00:00Z', '2026-01-03T00:00:00Z', 3))
                AS r(id, cause, details, at, last, n)
           JOIN gds.tables t ON t.name = 'customers' AND t.active`,
      );
      await migrate(db);
    },
    300_000,
  );

  it('each keeps its latest signal; its sender only when it had one', needs(engine.skip), async () => {
    const rows = await db().query<{
      request_id: string;
      cause: string;
      details: Record<string, unknown>;
      created_by: string | null;
      created_at: Date | string;
    }>(
      `SELECT request_id, cause, details, created_by, created_at FROM gds.recertification_signals
        ORDER BY request_id`,
    );
    expect(rows.map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() }))).toEqual([
      {
        request_id: 'rcr_once',
        cause: 'manual',
        details: { reason: 'only one' },
        created_by: 'usr_first',
        created_at: '2026-01-01T00:00:00.000Z',
      },
      {
        request_id: 'rcr_thrice',
        cause: 'drift',
        details: { trigger: 'nightly' },
        created_by: null,
        created_at: '2026-01-03T00:00:00.000Z',
      },
    ]);
  });
});
