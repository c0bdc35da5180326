// Months of CI history behind the reads the daily commands make: the audit log by eventType (§4.4: newest
// first, by cursor, eventType exact; and since, paged right), the newest submission of the tables a plan reads, a table's
// active jobs (`status`) and its open notification (closed at each submission). Each answers as before and
// reads rows bounded by its answer, not by the history: rows its scans touched (EXPLAIN ANALYZE), no timing.
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/contract/types.js';
import { listAudit } from '../../src/server/audit.js';
import { staleSubmissions } from '../../src/server/gates/proofs.js';
import { activeJobs } from '../../src/server/governance/jobs.js';
import { closeNotifications, listQueuePage } from '../../src/server/governance/notifications.js';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { countingQueryable } from '../helpers/rows-read.js';
import { needs } from '../helpers/skip.js';

const HISTORY = 20_000;

describe.each(ENGINES)('history reads on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual', queryTimeoutMs: 120_000 });
  const workspace = () => server().user('OWNER').workspaceId;
  const since = () => new Date(server().clock.now() - 3_600_000).toISOString();

  /** `count` entries of `action`, `minutesAgo` old (`spread`: one millisecond apart; else all at one time). */
  const addEntries = (prefix: string, count: number, action: string, minutesAgo: number, spread = true) =>
    server().sql(
      `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
                                  gate_mode, details, created_at)
       SELECT $1 || g, $2, NULL, NULL, $3, 'table', 'dev', NULL, NULL,
              $4::timestamptz - CASE WHEN $6 THEN (($5::int - g) * interval '1 millisecond') ELSE interval '0' END
         FROM generate_series(1, $5::int) g ORDER BY g`,
      [
        prefix,
        workspace(),
        action,
        new Date(server().clock.now() - minutesAgo * 60_000).toISOString(),
        count,
        spread,
      ],
    );

  /** What the audit log holds for a filter, newest (highest seq) first. */
  const expected = async (filter: { since?: string; eventType?: string }) =>
    (
      await server().sql<{ id: string }>(
        `SELECT id FROM gds.audit_log WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR created_at >= $2)
           AND ($3::text IS NULL OR action = $3) ORDER BY seq DESC`,
        [workspace(), filter.since ?? null, filter.eventType ?? null],
      )
    ).map((r) => r.id);

  /** Every entry of a filter, a page of `limit` at a time by cursor over HTTP, as gds audit list --all reads it. */
  const walk = async (query: string, limit: number) => {
    const ids: string[] = [];
    let cursor = '';
    for (let page = 0; page < 1000; page++) {
      const response = await server().request(
        'GET',
        `/api/workspace/audit-log?limit=${limit}${query}${cursor === '' ? '' : `&cursor=${cursor}`}`,
        { token: server().user('OWNER').accessToken },
      );
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      const body = response.body as { entries: AuditEntry[]; nextCursor: string };
      expect(body.entries.length).toBeLessThanOrEqual(limit);
      ids.push(...body.entries.map((e) => e.id));
      cursor = body.nextCursor;
      if (cursor === '') return ids;
    }
    throw new Error('the cursor never ended');
  };

  it(
    'pages since a time newest first across equal timestamps, with eventType exact, each entry once',
    needs(skip),
    async () => {
      await addEntries('aud_old_', HISTORY, 'RECORD_CREATED', 30 * 24 * 60);
      // Twenty-five at one instant, then entries whose times run against their seq (an earlier clock reading
      // committed later): the page is in seq order, whatever the times.
      await addEntries('aud_same_', 25, 'RECORD_CREATED', 10, false);
      await addEntries('aud_back_', 6, 'TABLE_CERTIFIED', 20);
      await addEntries('aud_same_cert_', 9, 'TABLE_CERTIFIED', 10, false);
      for (const [query, filter] of [
        [`&since=${since()}`, { since: since() }],
        [`&since=${since()}&eventType=TABLE_CERTIFIED`, { since: since(), eventType: 'TABLE_CERTIFIED' }],
        ['&eventType=TABLE_CERTIFIED', { eventType: 'TABLE_CERTIFIED' }],
      ] as const) {
        const want = await expected(filter);
        expect(want.length).toBeGreaterThan(7);
        expect(await walk(query, 7), query).toEqual(want);
        expect(await walk(query, 200), query).toEqual(want);
      }
      // An eventType none holds, and a since later than every entry: an empty last page.
      expect(await walk('&eventType=CLI_TOKEN_CREATED', 50)).toEqual([]);
      expect(await walk(`&since=${new Date(server().clock.now() + 3_600_000).toISOString()}`, 50)).toEqual(
        [],
      );
    },
  );

  it(
    'pages a since window of more than a thousand entries by seq, each entry once',
    needs(skip),
    async () => {
      await addEntries('aud_wide_', 1_150, 'RECORD_UPDATED', 5);
      const want = await expected({ since: since() });
      expect(want.length).toBeGreaterThan(1_000);
      expect(await walk(`&since=${since()}`, 200)).toEqual(want);
      // The window's last page, past which the log holds only entries older than since.
      const tail = await walk(`&since=${since()}&eventType=TABLE_CERTIFIED`, 4);
      expect(tail).toEqual(await expected({ since: since(), eventType: 'TABLE_CERTIFIED' }));
    },
  );

  it(
    'pages since a time across entries whose clock ran back (in the window, older by seq than a thousand newer outside it)',
    needs(skip),
    async () => {
      // Two servers whose clocks disagree, or a clock set back: seq and created_at need not agree. Entries
      // inside the window, then 1,200 written later with a clock a month behind: every entry since is listed.
      await addEntries('aud_early_', 12, 'TABLE_SUBMITTED', 3);
      await addEntries('aud_skewed_', 1_200, 'RECORD_DELETED', 31 * 24 * 60);
      const want = await expected({ since: since() });
      expect(want).toEqual(expect.arrayContaining(['aud_early_1', 'aud_early_12']));
      expect(await walk(`&since=${since()}`, 5)).toEqual(want);
      expect(await walk(`&since=${since()}`, 200)).toEqual(want);
      const submitted = await expected({ since: since(), eventType: 'TABLE_SUBMITTED' });
      expect(submitted).toHaveLength(12);
      expect(await walk(`&since=${since()}&eventType=TABLE_SUBMITTED`, 5)).toEqual(submitted);
    },
  );

  it(
    'reads a since window behind a thousand newer entries outside it without walking the history before it',
    needs(skip),
    async () => {
      // The statistics each engine's server keeps (PostgreSQL's autovacuum, the embedded server's own analysis
      // each minute): without them this small log is read whole for any page.
      await server().sql('ANALYZE gds.audit_log');
      const db = countingQueryable(server());
      const reads = async (query: Parameters<typeof listAudit>[2]) => {
        db.reset();
        const page = await listAudit(db, workspace(), query);
        expect(page.entries.map((e) => e.id)).toEqual((await expected(query)).slice(0, query.limit));
        return db.read();
      };
      // What a page of the newest entries reads (this planner may read the workspace's log for it, here small).
      const newest = await reads({ limit: 50 });
      const windowSize = (await expected({ since: since() })).length;
      expect(windowSize).toBeGreaterThan(1_000);
      for (const query of [
        { limit: 50, since: since() },
        { limit: 50, since: new Date(server().clock.now() + 3_600_000).toISOString() },
        { limit: 200, since: since(), eventType: 'RECORD_DELETED' },
      ]) {
        // That page, the window read by time (each of its entries counted at most three times: in the index, in
        // the table, in the set the page is taken from) and the page's entries: never the HISTORY behind it.
        expect(await reads(query), JSON.stringify(query)).toBeLessThan(newest + 3 * windowSize + 2 * 201);
      }
      // A window its newest entries fill: that page (its seqs, then its entries by key, each read at most
      // three times), not the window or the log behind it.
      const dense = { limit: 50, since: new Date(server().clock.now() - 40 * 86_400_000).toISOString() };
      expect(await reads(dense)).toBeLessThanOrEqual(newest + 3 * 51);
    },
  );

  it('reads the audit log by eventType without walking the entries before them', needs(skip), async () => {
    const db = countingQueryable(server());
    for (const query of [
      { limit: 50, eventType: 'CLI_TOKEN_CREATED' },
      { limit: 50, eventType: 'TABLE_CERTIFIED' },
      { limit: 50, since: since(), eventType: 'TABLE_CERTIFIED' },
    ]) {
      db.reset();
      await listAudit(db, workspace(), query);
      // The page (and the entries of that eventType before since): never the HISTORY entries of others.
      expect(db.read(), JSON.stringify(query)).toBeLessThan(HISTORY / 4);
    }
  });

  it('reads one submission of each table for staleSubmissions, not all of them', needs(skip), async () => {
    const owner = server().user('OWNER').userId;
    const tables = ['customers', 'orders', 'crm_contacts'].map((name) => server().table(name).id);
    // Sixty submissions of each, the newest at the table's versions; and a newer dry run's proof of one.
    await server().sql(
      `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
                                      definition_version, gate1_version, data_version, created_by, created_at)
         SELECT 'prf_h_' || t.id || '_' || g, t.id, 'submit', true, '[]', '[]', NULL, t.definition_version,
                t.gate1_version, t.data_version - (CASE WHEN g = 60 THEN 0 ELSE 1 END), $2, now()
           FROM gds.tables t, generate_series(1, 60) g WHERE t.id = ANY($1) ORDER BY g`,
      [tables, owner],
    );
    await server().sql(
      `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
                                      definition_version, gate1_version, data_version, created_by, created_at)
         SELECT 'prf_h_run', id, 'run', true, '[]', '[]', NULL, 0, 0, 0, $2, now() FROM gds.tables WHERE id = $1`,
      [tables[0], owner],
    );
    const db = countingQueryable(server());
    expect(await staleSubmissions(db, tables)).toEqual(new Set());
    await server().sql('UPDATE gds.tables SET data_version = data_version + 1 WHERE id = $1', [tables[1]]);
    db.reset();
    expect(await staleSubmissions(db, tables)).toEqual(new Set([tables[1]]));
    // A few rows a table (its row, its newest submission, a dry run's proof before it), not its sixty.
    expect(db.read()).toBeLessThan(10 * tables.length);
  });

  it("reads a table's active jobs, not its history of jobs", needs(skip), async () => {
    const owner = server().user('OWNER').userId;
    const table = server().table('customers').id;
    const workspaceId = workspace();
    const db = countingQueryable(server());
    await server().sql(
      `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, params, created_by, created_at)
         SELECT 'job_h_' || g, $1, $2, 'gate1', CASE WHEN g = 300 THEN 'QUEUED' ELSE 'SUCCEEDED' END, '{}', $3,
                now() - (300 - g) * interval '1 minute'
           FROM generate_series(1, 300) g`,
      [workspaceId, table, owner],
    );
    db.reset();
    expect((await activeJobs(db, table)).map((j) => j.id)).toEqual(['job_h_300']);
    expect(db.read()).toBeLessThan(10);
  });

  it("reads the steward's queue without the submissions of tables never certified", needs(skip), async () => {
    const [uncertified] = await server().sql<{ id: string }>(
      `SELECT t.id FROM gds.tables t WHERE t.workspace_id = $1 AND t.active
          AND NOT EXISTS (SELECT 1 FROM gds.contract_versions v WHERE v.table_id = t.id)
          AND NOT EXISTS (SELECT 1 FROM gds.notifications n WHERE n.table_id = t.id)
        ORDER BY t.id LIMIT 1`,
      [workspace()],
    );
    const table = uncertified?.id ?? '';
    await server().sql(
      `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
                                    definition_version, gate1_version, data_version, created_by, created_at)
       SELECT 'prf_q_' || g, t.id, 'submit', true, '[]', '[]', NULL, t.definition_version, t.gate1_version,
              t.data_version, $2, now()
         FROM gds.tables t, generate_series(1, 200) g WHERE t.id = $1 ORDER BY g`,
      [table, server().user('OWNER').userId],
    );
    await server().sql(`UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1`, [table]);
    await server().sql(
      `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
       VALUES ('ntf_q', $1, $2, 'STEWARD', 'gate_submitted', 'submitted', '{"proofId": "prf_q_200"}', now())`,
      [workspace(), table],
    );
    const db = countingQueryable(server());
    const { entries } = await listQueuePage(db, workspace(), { environments: null, limit: 50 });
    expect(entries.find((e) => e.tableId === table)).toMatchObject({
      id: 'ntf_q',
      proof: { id: 'prf_q_200', fresh: true },
      sinceCertified: null,
    });
    // The queue's rows and their tables' rows, not the table's 200 submissions.
    expect(db.read()).toBeLessThan(100);
  });

  it("closes a table's open notification reading it alone", needs(skip), async () => {
    const table = server().table('customers').id;
    const db = countingQueryable(server());
    // Its 300 notifications, the newest open; and 300 open of another table (the rest of the queue).
    await server().sql(
      `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
         SELECT 'ntf_o_' || g, $1, $2, 'STEWARD', 'gate_submitted', 'submitted', '{}', now()
           FROM generate_series(1, 300) g`,
      [workspace(), server().table('orders').id],
    );
    await server().sql(
      `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at,
                                        closed_at)
         SELECT 'ntf_h_' || g, $1, $2, 'STEWARD', 'gate_submitted', 'submitted', '{}', now(),
                CASE WHEN g = 300 THEN NULL ELSE now() END
           FROM generate_series(1, 300) g`,
      [workspace(), table],
    );
    await closeNotifications(db, table, new Date(server().clock.now()).toISOString());
    expect(db.read()).toBeLessThan(10);
    expect(
      await server().sql(`SELECT id FROM gds.notifications WHERE table_id = $1 AND closed_at IS NULL`, [
        table,
      ]),
    ).toEqual([]);
  });
});
