// Migration 75: a table deleted before deleting closed its open work (commit 9d816d2c) kept its OPEN
// recertification requests and its QUEUED or RUNNING jobs. Upgrading closes them as the delete now does:
// requests DISMISSED by the user who deleted the table, jobs CANCELLED, each audited with reason
// 'table deleted'. The live table's work and what was already closed are left alone, and a second run
// changes nothing.
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from '../../../src/server/db/migrations.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from './earlier-schema.js';

const TABLE = `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                 columns, created_at, updated_at, active, deleted_at)
               VALUES ($1, 'ws_a', $1, $1, 'MODE_A', 'QUARANTINED', 'ADVISORY', 'dev', 'usr_a', '[]', $2, $2, $3, $4)`;
const REQUEST = `INSERT INTO gds.recertification_requests (id, workspace_id, table_id, cause, status, created_at, last_seen_at)
                 VALUES ($1, 'ws_a', $2, 'ingest', $3, $4, $4)`;
const JOB = `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, created_by, created_at)
             VALUES ($1, 'ws_a', $2, 'gate-baseline-auto', $3, 'usr_a', $4)`;

describe.each(ENGINES)('tables deleted before migration 75 ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await schemaBefore(opened, 75);
    await opened.query(TABLE, ['tbl_gone', T0, false, T0]);
    await opened.query(TABLE, ['tbl_live', T0, true, null]);
    await opened.query(
      `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label, created_at)
       VALUES ('aud_deleted', 'ws_a', 'usr_a', 'tbl_gone', 'TABLE_DELETED', 'governance_artifact', 'dev', $1)`,
      [T0],
    );
    for (const [id, table, status] of [
      ['rcr_gone_open', 'tbl_gone', 'OPEN'],
      ['rcr_gone_resolved', 'tbl_gone', 'RESOLVED'],
      ['rcr_live_open', 'tbl_live', 'OPEN'],
    ])
      await opened.query(REQUEST, [id, table, status, T0]);
    for (const [id, table, status] of [
      ['job_gone_queued', 'tbl_gone', 'QUEUED'],
      ['job_gone_running', 'tbl_gone', 'RUNNING'],
      ['job_gone_done', 'tbl_gone', 'SUCCEEDED'],
      ['job_live_queued', 'tbl_live', 'QUEUED'],
    ])
      await opened.query(JOB, [id, table, status, T0]);
    await migrate(opened);
  });

  const statuses = async () => ({
    requests: Object.fromEntries(
      (
        await db().query<{ id: string; status: string; dismissed_by: string | null }>(
          'SELECT id, status, dismissed_by FROM gds.recertification_requests ORDER BY id',
        )
      ).map((r) => [r.id, `${r.status}${r.dismissed_by ? ` by ${r.dismissed_by}` : ''}`]),
    ),
    jobs: Object.fromEntries(
      (
        await db().query<{ id: string; status: string; finished: boolean }>(
          'SELECT id, status, finished_at IS NOT NULL AS finished FROM gds.jobs ORDER BY id',
        )
      ).map((j) => [j.id, `${j.status}${j.finished ? ', finished' : ''}`]),
    ),
  });
  const audited = () =>
    db().query<{ user_id: string; table_id: string; action: string; resource: string; details: unknown }>(
      `SELECT user_id, table_id, action, resource, details FROM gds.audit_log
        WHERE action <> 'TABLE_DELETED' ORDER BY action, details::text`,
    );

  it(
    'dismisses the deleted table’s open requests and cancels its queued and running jobs, audited as a delete does',
    needs(engine.skip),
    async () => {
      expect(await statuses()).toEqual({
        requests: {
          rcr_gone_open: 'DISMISSED by usr_a',
          rcr_gone_resolved: 'RESOLVED',
          rcr_live_open: 'OPEN',
        },
        jobs: {
          job_gone_done: 'SUCCEEDED',
          job_gone_queued: 'CANCELLED, finished',
          job_gone_running: 'CANCELLED, finished',
          job_live_queued: 'QUEUED',
        },
      });
      const reason = { reason: 'table deleted', migration: 75 };
      const job = {
        resource: 'gate_job',
        action: 'GATE_JOB_CANCELLED',
        table_id: 'tbl_gone',
        user_id: 'usr_a',
      };
      expect(await audited()).toEqual([
        {
          ...job,
          details: { jobId: 'job_gone_queued', type: 'gate-baseline-auto', from: 'QUEUED', ...reason },
        },
        {
          ...job,
          details: { jobId: 'job_gone_running', type: 'gate-baseline-auto', from: 'RUNNING', ...reason },
        },
        {
          user_id: 'usr_a',
          table_id: 'tbl_gone',
          action: 'RECERTIFICATION_DISMISSED',
          resource: 'semantic_contract',
          details: { requestId: 'rcr_gone_open', cause: 'ingest', ...reason },
        },
      ]);
    },
  );

  it('changes nothing when run again', needs(engine.skip), async () => {
    const before = { statuses: await statuses(), audited: await audited() };
    const migration = MIGRATIONS.find((m) => m.version === 75);
    await db().transaction((tx) => tx.exec(migration?.sql ?? ''));
    expect({ statuses: await statuses(), audited: await audited() }).toEqual(before);
  });
});

// An upgrade's cost is the deleted tables with open work, not every deleted table times the audit log: the log
// has no index by table, so a lookup of each deleted table's deleter was a scan of the whole log each (100,000
// deleted tables: hours). Counted as the scans of the log the migration's transaction makes (300 deleted tables: 305 before, 6 now).
describe.each(ENGINES)('migration 75 on a workspace of many deleted tables ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await schemaBefore(opened, 75);
    await opened.query(
      `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                               columns, created_at, updated_at, active, deleted_at)
       SELECT 'tbl_' || i, 'ws_a', 'tbl_' || i, 'tbl_' || i, 'MODE_A', 'QUARANTINED', 'ADVISORY', 'dev', 'usr_a',
              '[]', $1, $1, false, $1 FROM generate_series(1, 300) i`,
      [T0],
    );
    await opened.query(
      `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label, created_at)
       SELECT 'aud_' || i, 'ws_a', 'usr_a', 'tbl_' || i, 'TABLE_DELETED', 'governance_artifact', 'dev', $1
         FROM generate_series(1, 300) i`,
      [T0],
    );
    await opened.query(REQUEST, ['rcr_7_open', 'tbl_7', 'OPEN', T0]);
    await opened.query(JOB, ['job_9_queued', 'tbl_9', 'QUEUED', T0]);
    await migrate(
      opened,
      MIGRATIONS.filter((m) => m.version < 75),
    );
  });

  it('reads the audit log a few times, not once a deleted table (300)', needs(engine.skip), async () => {
    const migration = MIGRATIONS.find((m) => m.version === 75);
    const scans = await db().transaction(async (tx) => {
      await tx.exec(migration?.sql ?? '');
      const [row] = await tx.query<{ scans: string | number }>(
        `SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans FROM pg_stat_xact_user_tables
          WHERE schemaname = 'gds' AND relname = 'audit_log'`,
      );
      return Number(row?.scans ?? 0);
    });
    expect(scans).toBeLessThan(20);
    const closed = await db().query<{ id: string; dismissed_by: string | null }>(
      `SELECT id, dismissed_by FROM gds.recertification_requests WHERE status = 'DISMISSED'`,
    );
    expect(closed).toEqual([{ id: 'rcr_7_open', dismissed_by: 'usr_a' }]);
  });
});
