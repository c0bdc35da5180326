// A late page of each list read by key starts its index scan at the cursor under a generic plan too
// (plan_cache_mode = force_generic_plan: what a prepared statement reused, or a pooler's server-side prepares,
// give). Written `$n IS NULL OR (created_at, id) > ($n, $m)`, the key could not be an index condition of a
// generic plan, and each page walked the list from its start: page 400 of 20,000 read 20,000 rows. Counted
// here as the rows the database reads of the listed table (pg_stat_xact_user_tables), on PGlite and
// PostgreSQL; each page answers the rows a plain ordered read does.
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/server/db/handle.js';
import { listQueuePage } from '../../../src/server/governance/notifications.js';
import { listRequestPage, listSignalPage } from '../../../src/server/governance/recertification-requests.js';
import { environmentTablePage, listTablePage } from '../../../src/server/governance/tables.js';
import type { ListKey } from '../../../src/server/list-cursor.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { genericRead } from '../../helpers/generic-plan.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from '../db/earlier-schema.js';

const ROWS = 20_000;
const PAGE = 50;
/** Rows of the listed table a page may read: its own and the one after, with room to spare; not the list. */
const PAGE_READ = PAGE * 4;

/** created_at as a cursor writes it (UTC, microseconds). */
const CREATED_KEY = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

describe.each(ENGINES)('late pages under a generic plan ($engine)', (engine) => {
  const db = useEngineDb(
    engine,
    async (opened) => {
      await schemaBefore(opened, Number.MAX_SAFE_INTEGER);
      // Tables awaiting review, each with an open request and an open notification; one request merged into
      // by every signal.
      await opened.query(
        `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                                 columns, created_at, updated_at, active)
         SELECT 'tbl_' || i, 'ws_a', 'tbl_' || i, 'tbl_' || i, 'MODE_A', 'PENDING_REVIEW', 'ADVISORY', 'dev',
                'usr_a', '[]', $1::timestamptz + i * interval '1 ms', $1, true FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.query(
        `INSERT INTO gds.recertification_requests (id, workspace_id, table_id, cause, status, created_at, last_seen_at)
         SELECT 'rcr_' || i, 'ws_a', 'tbl_' || i, 'manual', 'OPEN', $1::timestamptz + i * interval '1 ms', $1
           FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.query(
        `INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
         SELECT 'rcs_' || i, 'rcr_1', 'manual', '{}'::jsonb, NULL, $1::timestamptz + i * interval '1 ms'
           FROM generate_series(1, ${ROWS}) i`,
        [T0],
      );
      await opened.query(
        `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
         SELECT 'ntf_' || i, 'ws_a', 'tbl_' || i, 'STEWARD', 'gate_submitted', 'submitted', '{}',
                $1::timestamptz + i * interval '1 ms'
           FROM generate_series(1, ${ROWS}) i ORDER BY i`,
        [T0],
      );
      await opened.exec('ANALYZE');
    },
    120_000,
  );

  const generic = <T>(relation: string, read: (tx: Queryable) => Promise<T>) =>
    genericRead(db(), relation, read);

  /** The key of the `at`-th row (from 1) of `relation` in `order`, and the ids of the page after it. */
  const keyAt = async (relation: string, where: string, order: string, at: number) => {
    const rows = await db().query<{ id: string; created_key: string }>(
      `SELECT id, ${CREATED_KEY} AS created_key FROM gds.${relation} WHERE ${where} ORDER BY ${order}
        OFFSET ${at - 1} LIMIT ${PAGE + 1}`,
    );
    const [cursor, ...page] = rows;
    if (cursor === undefined) throw new Error(`no row ${at} of ${relation}`);
    return {
      after: { createdAt: cursor.created_key, id: cursor.id } as ListKey,
      page: page.map((r) => r.id),
    };
  };

  const LATE = ROWS - 2 * PAGE;

  it('the table list, oldest and newest first', needs(engine.skip), async () => {
    for (const order of ['oldest', 'newest'] as const) {
      const desc = order === 'newest' ? ' DESC' : '';
      const { after, page } = await keyAt('tables', 'active', `created_at${desc}, id${desc}`, LATE);
      const { answer, rowsRead } = await generic('tables', (tx) =>
        listTablePage(tx, {
          workspaceId: 'ws_a',
          environments: null,
          limit: PAGE,
          order,
          after: order === 'newest' ? { ...after, order } : after,
        }),
      );
      expect(answer.tables.map((t) => t.id)).toEqual(page);
      expect(rowsRead, order).toBeLessThan(PAGE_READ);
    }
  });

  it('the held tables of an environment (a plan’s read)', needs(engine.skip), async () => {
    const { after, page } = await keyAt('tables', 'active', 'created_at, id', LATE);
    const { answer, rowsRead } = await generic('tables', (tx) =>
      environmentTablePage(tx, { workspaceId: 'ws_a', environment: 'dev', limit: PAGE, after }),
    );
    expect(answer.tables.map((t) => t.table.id)).toEqual(page);
    expect(rowsRead).toBeLessThan(PAGE_READ);
  });

  it('the recertification requests', needs(engine.skip), async () => {
    const { after, page } = await keyAt('recertification_requests', 'true', 'created_at, id', LATE);
    const { answer, rowsRead } = await generic('recertification_requests', (tx) =>
      listRequestPage(tx, 'ws_a', { limit: PAGE, after }),
    );
    expect(answer.requests.map((r) => r.id)).toEqual(page);
    expect(rowsRead).toBeLessThan(PAGE_READ);
  });

  // A table's open requests (its page in the dashboard, `--table`) were filtered `$2 IS NULL OR r.table_id = $2`:
  // a generic plan walked the workspace's every open request for the one of the table.
  it('the open recertification requests of one table', needs(engine.skip), async () => {
    const { answer, rowsRead } = await generic('recertification_requests', (tx) =>
      listRequestPage(tx, 'ws_a', { tableId: `tbl_${LATE}`, limit: PAGE }),
    );
    expect(answer.requests.map((r) => r.id)).toEqual([`rcr_${LATE}`]);
    expect(rowsRead).toBeLessThan(PAGE_READ);
  });

  // With every status (the dashboard's table page, `recertification list --table … --all`) no index led by
  // table_id covered the read under any plan: a table's requests read the workspace's every request.
  it(
    'every recertification request of one table, dismissed and resolved too',
    needs(engine.skip),
    async () => {
      const { answer, rowsRead } = await generic('recertification_requests', (tx) =>
        listRequestPage(tx, 'ws_a', { tableId: `tbl_${LATE}`, all: true, limit: PAGE }),
      );
      expect(answer.requests.map((r) => r.id)).toEqual([`rcr_${LATE}`]);
      expect(rowsRead).toBeLessThan(PAGE_READ);
    },
  );

  it('a recertification request’s signals', needs(engine.skip), async () => {
    const { after, page } = await keyAt(
      'recertification_signals',
      "request_id = 'rcr_1'",
      'created_at, id',
      LATE,
    );
    const { answer, rowsRead } = await generic('recertification_signals', (tx) =>
      listSignalPage(tx, 'rcr_1', { limit: PAGE, after }),
    );
    expect(answer.signals.map((s) => s.id)).toEqual(page);
    expect(rowsRead).toBeLessThan(PAGE_READ);
  });

  it('the steward’s queue', needs(engine.skip), async () => {
    const rows = await db().query<{ id: string; seq: string }>(
      `SELECT n.id, n.seq::text AS seq FROM gds.notifications n ORDER BY n.seq OFFSET ${LATE - 1} LIMIT ${PAGE + 1}`,
    );
    const [cursor, ...page] = rows;
    const { answer, rowsRead } = await generic('notifications', (tx) =>
      listQueuePage(tx, 'ws_a', { environments: null, limit: PAGE, after: { seq: cursor?.seq ?? '' } }),
    );
    expect(answer.entries.map((e) => e.id)).toEqual(page.map((r) => r.id));
    expect(rowsRead).toBeLessThan(PAGE_READ);
  });
});
