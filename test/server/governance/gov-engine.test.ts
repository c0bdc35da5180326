// The lifecycle engine (applyTrigger, governedTransaction, recertification requests) and the job
// runner, against a real server database: states written, audit entries kept even when refused, and
// jobs observed QUEUED, RUNNING and terminal (a cancelled job stays cancelled).
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Caller } from '../../../src/server/auth/caller.js';
import type { RunningServer } from '../../../src/server/app.js';
import { createServer } from '../../../src/server/app.js';
import {
  applyTrigger,
  fileRecertificationRequest,
  governedTransaction,
  LifecycleRefusal,
} from '../../../src/server/governance/engine.js';
import { cancelJob, enqueueJob, getJob, registerJobHandler } from '../../../src/server/governance/jobs.js';
import { resolveOpenRequests } from '../../../src/server/governance/recertification-requests.js';
import { findTable, loadTable } from '../../../src/server/governance/tables.js';
import type { Db } from '../../../src/server/db/handle.js';
import { scratchDir, seededPgliteCopy } from '../../helpers/migrated-database.js';

let server: RunningServer;
let db: Db;
let owner: Caller;
let member: Caller;
const clock = () => Date.now();

const tableId = (name: string) => {
  const table = server.ready.tables.find((t) => t.name === name);
  if (!table) throw new Error(`no seeded table ${name}`);
  return table.id;
};

const sessionOf = (role: 'OWNER' | 'MEMBER'): Caller => {
  const user = server.ready.users.find((u) => u.role === role);
  if (!user) throw new Error(`no ${role}`);
  return {
    kind: 'session',
    via: 'jwt',
    userId: user.userId,
    workspaceId: server.ready.workspaceId,
    role,
    envScope: ['dev'],
  };
};

const auditOf = (table: string, action: string) =>
  server.db.query<{ details: Record<string, unknown>; user_id: string }>(
    'SELECT details, user_id FROM gds.audit_log WHERE table_id = $1 AND action = $2 ORDER BY seq',
    [table, action],
  );

beforeAll(async () => {
  server = await createServer({ port: 0, jobs: 'manual', scratchDir: await scratchDir() });
  db = server.db as Db;
  owner = sessionOf('OWNER');
  member = sessionOf('MEMBER');
});

afterAll(async () => {
  await server?.close();
});

describe('applyTrigger', () => {
  it('moves a CERTIFIED table to QUARANTINED on replacement, audits it and returns the effects in order', async () => {
    const id = tableId('customers');
    const result = await governedTransaction(db, clock, async (tx) =>
      applyTrigger(tx, {
        table: await loadTable(tx, server.ready.workspaceId, id),
        trigger: 'replaced',
        context: { mode: 'MODE_A', actor: { role: 'OWNER', isTableOwner: false } },
        actor: owner,
        clock,
        details: { why: 'test' },
      }),
    );
    expect(result.next).toBe('QUARANTINED');
    expect(result.status).toBe(202);
    expect(result.effects.map((e) => e.type)).toEqual([
      'reconcile_columns',
      'file_recertification',
      'enqueue_baseline_job',
    ]);
    expect((await findTable(db, server.ready.workspaceId, id))?.state).toBe('QUARANTINED');
    const [entry] = await auditOf(id, 'DEFINITION_REPLACED');
    expect(entry?.details).toMatchObject({ why: 'test', from: 'CERTIFIED', to: 'QUARANTINED' });
  });

  it('keeps the refusal audit entry although the transaction rolls back, and leaves the state alone', async () => {
    const id = tableId('crm_contacts');
    const grainBefore = (await loadTable(db, server.ready.workspaceId, id)).grain;
    const attempt = governedTransaction(db, clock, async (tx) => {
      const table = await loadTable(tx, server.ready.workspaceId, id);
      await tx.query(`UPDATE gds.tables SET grain = 'rolled back' WHERE id = $1`, [id]);
      return applyTrigger(tx, {
        table,
        trigger: 'deleted',
        context: { mode: table.mode, actor: { role: 'OWNER', isTableOwner: false } },
        actor: owner,
        clock,
      });
    });
    await expect(attempt).rejects.toBeInstanceOf(LifecycleRefusal);
    await expect(attempt).rejects.toMatchObject({
      status: 400,
      message: 'CLI delete is restricted to warehouse-connected governance artifacts',
    });
    const table = await loadTable(db, server.ready.workspaceId, id);
    expect(table.state).toBe('CERTIFIED');
    expect(table.grain).toBe(grainBefore);
    expect(table.grain).not.toBe('rolled back');
    const refused = await auditOf(id, 'DELETE_REFUSED');
    expect(refused).toHaveLength(1);
    expect(refused[0]?.details).toMatchObject({ refused: { status: 400, code: 'mode_b_delete' } });
  });

  it('refuses a delete by someone neither owner nor admin with 403', async () => {
    const id = tableId('customers_production');
    const attempt = governedTransaction(db, clock, async (tx) => {
      const table = await loadTable(tx, server.ready.workspaceId, id);
      return applyTrigger(tx, {
        table,
        trigger: 'deleted',
        context: { mode: table.mode, actor: { role: 'MEMBER', isTableOwner: false } },
        actor: member,
        clock,
      });
    });
    await expect(attempt).rejects.toMatchObject({
      status: 403,
      message: 'Only table owners or workspace admins can delete',
    });
    expect((await auditOf(id, 'DELETE_REFUSED'))[0]?.user_id).toBe(member.userId);
  });

  it('loadTable answers 404 for another workspace’s table', async () => {
    const foreign = server.ready.otherWorkspace.tables[0]?.id ?? '';
    await expect(loadTable(db, server.ready.workspaceId, foreign)).rejects.toMatchObject({
      status: 404,
      code: 'table_not_found',
    });
  });

  it('files an OPEN recertification request with its own audit entry', async () => {
    const id = tableId('orders');
    const requestId = await db.transaction((tx) =>
      fileRecertificationRequest(tx, {
        tableId: id,
        cause: 'manual',
        details: { note: 'x' },
        actor: owner,
        clock,
      }),
    );
    const [row] = await db.query<{ status: string; cause: string; workspace_id: string }>(
      'SELECT status, cause, workspace_id FROM gds.recertification_requests WHERE id = $1',
      [requestId],
    );
    expect(row).toEqual({ status: 'OPEN', cause: 'manual', workspace_id: server.ready.workspaceId });
    expect((await auditOf(id, 'RECERTIFICATION_REQUESTED'))[0]?.details).toMatchObject({
      requestId,
      cause: 'manual',
    });
    // The same cause again updates the open request: one request, counted twice, the latest details.
    const again = await db.transaction((tx) =>
      fileRecertificationRequest(tx, {
        tableId: id,
        cause: 'manual',
        details: { note: 'y' },
        actor: owner,
        clock,
      }),
    );
    expect(again).toBe(requestId);
    const merged = await db.query<{ signal_count: number; details: unknown }>(
      `SELECT signal_count, details FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
      [id],
    );
    expect(merged).toEqual([{ signal_count: 2, details: { note: 'y' } }]);
    expect(await auditOf(id, 'RECERTIFICATION_REQUESTED')).toHaveLength(1);
    const table = await loadTable(db, server.ready.workspaceId, id);
    const resolve = () => resolveOpenRequests(db, clock, { table, version: 3, actor: owner.userId });
    expect(await resolve()).toEqual([requestId]);
    expect(await resolve()).toEqual([]);
    const [resolved] = await db.query<{ status: string; resolved_version: number; resolved_by: string }>(
      'SELECT status, resolved_version, resolved_by FROM gds.recertification_requests WHERE id = $1',
      [requestId],
    );
    expect(resolved).toEqual({ status: 'RESOLVED', resolved_version: 3, resolved_by: owner.userId });
    expect((await auditOf(id, 'RECERTIFICATION_RESOLVED'))[0]?.details).toMatchObject({
      requestId,
      count: 2,
      version: 3,
    });
  });
});

describe('job runner (manual mode)', () => {
  const enqueue = (type: 'gate2' | 'gate3') =>
    enqueueJob(db, {
      workspaceId: server.ready.workspaceId,
      tableId: tableId('orders'),
      type,
      createdBy: owner.userId,
      clock,
      params: { n: 1 },
    });
  const statusOf = async (id: string) => (await getJob(db, server.ready.workspaceId, id))?.status;

  it('runs a job QUEUED -> RUNNING -> SUCCEEDED and stores the handler result', async () => {
    registerJobHandler('gate2', async (job) => ({ echoed: job.params }));
    const job = await enqueue('gate2');
    expect(job.status).toBe('QUEUED');
    expect(await server.jobs.startPending()).toEqual([job.id]);
    expect(await statusOf(job.id)).toBe('RUNNING');
    expect(await server.jobs.runPending()).toEqual([job.id]);
    const done = await getJob(db, server.ready.workspaceId, job.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', result: { echoed: { n: 1 } }, error: null });
    expect(done?.finishedAt).not.toBeNull();
  });

  it('fails a job whose handler throws, keeping the message', async () => {
    registerJobHandler('gate3', async () => {
      throw new Error('baseline report missing');
    });
    const job = await enqueue('gate3');
    await server.jobs.runPending();
    expect(await getJob(db, server.ready.workspaceId, job.id)).toMatchObject({
      status: 'FAILED',
      error: { message: 'baseline report missing' },
    });
  });

  it('never overwrites a job cancelled while running', async () => {
    registerJobHandler('gate2', async () => ({ finished: true }));
    const job = await enqueue('gate2');
    await server.jobs.startPending();
    expect((await cancelJob(db, server.ready.workspaceId, job.id, clock))?.status).toBe('CANCELLED');
    await server.jobs.runPending();
    expect(await getJob(db, server.ready.workspaceId, job.id)).toMatchObject({
      status: 'CANCELLED',
      result: null,
    });
  });

  it('leaves a terminal job as it was when cancelled', async () => {
    const job = await enqueue('gate2');
    await server.jobs.runPending();
    expect((await cancelJob(db, server.ready.workspaceId, job.id, clock))?.status).toBe('SUCCEEDED');
  });
});

describe('job runner (auto mode)', () => {
  it('runs a queued job without being asked', async () => {
    // On a seeded copy: the worker is what this checks, not a database made from nothing (the file's other server).
    const copy = await seededPgliteCopy();
    onTestFinished(() => copy.remove());
    const auto = await createServer({ port: 0, dataDir: copy.dataDir, scratchDir: await scratchDir() });
    try {
      registerJobHandler('gate2', async () => ({ auto: true }));
      const job = await enqueueJob(auto.db, {
        workspaceId: auto.ready.workspaceId,
        tableId: null,
        type: 'gate2',
        createdBy: auto.ready.users[0]?.userId ?? '',
        clock,
      });
      let status = job.status;
      // Polled for up to a minute (the worker looks every 200 ms): a loaded machine makes it slower, not red.
      for (let i = 0; i < 1200 && status !== 'SUCCEEDED'; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await getJob(auto.db, auto.ready.workspaceId, job.id))?.status ?? 'QUEUED';
      }
      expect(status).toBe('SUCCEEDED');
    } finally {
      await auto.close();
    }
  });
});
