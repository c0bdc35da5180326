// Detached gate jobs (gds.jobs): enqueued inside a route's transaction, run by a worker inside the server.
// A job moves QUEUED -> RUNNING -> SUCCEEDED | FAILED, or to CANCELLED while queued or running; a cancelled
// job is never overwritten by its handler's outcome.
//
// Several server processes may share one PostgreSQL: each has a worker, and a job is claimed by exactly one
// (an UPDATE of the oldest QUEUED row, skipping rows another worker has locked), which names itself in
// `claimed_by` and beats a heartbeat while it runs the job; only the claiming worker writes the outcome. A
// RUNNING job whose heartbeat stopped (its process died) is put back in the queue by another worker, up to
// MAX_ATTEMPTS runs in all, then FAILED saying so. Every job type is a read-only report, so a run cut short
// and run again changes nothing twice.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import { isoOf, isoOrNull } from '../db/timestamps.js';
import type { Db, Queryable } from '../db/handle.js';
import { newId } from '../ids.js';

export const JOB_STATUSES = ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type JobType = 'gate-baseline-auto' | 'gate2' | 'gate3';

export interface Job {
  id: string;
  workspaceId: string;
  tableId: string | null;
  type: JobType;
  status: JobStatus;
  /** What the job was asked to do (e.g. Gate 3's baseline report id). */
  params: Record<string, unknown>;
  createdBy: string;
  /** The e-mail of createdBy, where the query joined it (a job answered to a caller). */
  createdByEmail?: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  result: unknown;
  error: { message: string } | null;
  /** The worker that ran (or runs) it: host, process id and a random part. */
  claimedBy?: string | null;
  /** How many times a worker has started it (more than 1 only after a worker died running it). */
  attempts?: number;
}

/** What a handler gets: the job and the database (outside any transaction) and clock of its server. */
export interface JobEnv {
  db: Db;
  clock: Clock;
}

/** Runs a job; the value it resolves to is stored as the job's result. Throwing fails the job. */
export type JobHandler = (job: Job, env: JobEnv) => Promise<unknown>;

const handlers = new Map<JobType, JobHandler>();

/** Registers the handler for a job type (one per type, process-wide; registering again replaces it). */
export function registerJobHandler(type: JobType, handler: JobHandler): void {
  handlers.set(type, handler);
}

interface JobRowDb {
  id: string;
  workspace_id: string;
  table_id: string | null;
  type: JobType;
  status: JobStatus;
  params: Record<string, unknown>;
  created_by: string;
  created_by_email?: string | null;
  created_at: Date | string;
  started_at: Date | string | null;
  finished_at: Date | string | null;
  result: unknown;
  error: { message: string } | null;
  claimed_by?: string | null;
  attempts?: number;
}

function toJob(row: JobRowDb): Job {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    tableId: row.table_id,
    type: row.type,
    status: row.status,
    params: row.params,
    createdBy: row.created_by,
    ...(row.created_by_email === undefined ? {} : { createdByEmail: row.created_by_email }),
    createdAt: isoOf(row.created_at),
    startedAt: isoOrNull(row.started_at),
    finishedAt: isoOrNull(row.finished_at),
    result: row.result,
    error: row.error,
    ...(row.claimed_by === undefined ? {} : { claimedBy: row.claimed_by }),
    ...(row.attempts === undefined ? {} : { attempts: row.attempts }),
  };
}

export interface EnqueueInput {
  workspaceId: string;
  tableId: string | null;
  type: JobType;
  createdBy: string;
  clock: Clock;
  params?: Record<string, unknown>;
}

/** Adds a QUEUED job; it runs once the surrounding transaction commits. */
export async function enqueueJob(tx: Queryable, input: EnqueueInput): Promise<Job> {
  const [row] = await tx.query<JobRowDb>(
    `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, params, created_by, created_at)
     VALUES ($1, $2, $3, $4, 'QUEUED', $5, $6, $7) RETURNING *, (SELECT u.email FROM gds.users u WHERE u.id = created_by) AS created_by_email`,
    [
      newId('job'),
      input.workspaceId,
      input.tableId,
      input.type,
      JSON.stringify(input.params ?? {}),
      input.createdBy,
      new Date(input.clock()).toISOString(),
    ],
  );
  if (!row) throw new Error('enqueueJob: no row returned');
  return toJob(row);
}

/** A job of the workspace, or null. */
export async function getJob(q: Queryable, workspaceId: string, jobId: string): Promise<Job | null> {
  const [row] = await q.query<JobRowDb>(
    `SELECT *, (SELECT u.email FROM gds.users u WHERE u.id = created_by) AS created_by_email FROM gds.jobs WHERE id = $1 AND workspace_id = $2`,
    [jobId, workspaceId],
  );
  return row ? toJob(row) : null;
}

/** QUEUED or RUNNING jobs of a table, oldest first. */
export async function activeJobs(q: Queryable, tableId: string): Promise<Job[]> {
  const rows = await q.query<JobRowDb>(
    `SELECT * FROM gds.jobs WHERE table_id = $1 AND status IN ('QUEUED', 'RUNNING') ORDER BY created_at, id`,
    [tableId],
  );
  return rows.map(toJob);
}

/** A table's jobs of every status, newest first, at most `limit`. */
export async function recentJobs(q: Queryable, tableId: string, limit: number): Promise<Job[]> {
  const rows = await q.query<JobRowDb>(
    `SELECT * FROM gds.jobs WHERE table_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [tableId, limit],
  );
  return rows.map(toJob);
}

/**
 * Cancels a QUEUED or RUNNING job; returns the job after the attempt (its status says whether it was
 * cancelled: a terminal job stays as it was), or null when the workspace has no such job.
 */
export async function cancelJob(
  q: Queryable,
  workspaceId: string,
  jobId: string,
  clock: Clock,
): Promise<Job | null> {
  await q.query(
    `UPDATE gds.jobs SET status = 'CANCELLED', finished_at = $3
      WHERE id = $1 AND workspace_id = $2 AND status IN ('QUEUED', 'RUNNING')`,
    [jobId, workspaceId, new Date(clock()).toISOString()],
  );
  return getJob(q, workspaceId, jobId);
}

/**
 * Cancels every QUEUED or RUNNING job of a table (it was deleted: a job would run against a table that is
 * gone); returns each with the status it had. A running job's handler outcome is then not written.
 */
export async function cancelTableJobs(
  q: Queryable,
  tableId: string,
  clock: Clock,
): Promise<Array<{ id: string; type: JobType; from: JobStatus }>> {
  return q.query<{ id: string; type: JobType; from: JobStatus }>(
    `UPDATE gds.jobs j SET status = 'CANCELLED', finished_at = $2
       FROM (SELECT id, status FROM gds.jobs WHERE table_id = $1 AND status IN ('QUEUED', 'RUNNING')
              ORDER BY created_at, id FOR UPDATE) before
      WHERE j.id = before.id
      RETURNING j.id, j.type, before.status AS "from"`,
    [tableId, new Date(clock()).toISOString()],
  );
}

/** `auto`: a worker polls for queued jobs; `manual`: jobs run only when a test calls `runPending`. */
export type JobsMode = 'auto' | 'manual';

export interface JobControl {
  /** Marks every QUEUED job RUNNING without running it (to observe RUNNING); returns their ids. */
  startPending(): Promise<string[]>;
  /** Runs every started and every QUEUED job to a terminal status; returns their ids. */
  runPending(): Promise<string[]>;
}

const POLL_MS = 200;
/** How often a worker writes `heartbeat_at` of the job it runs. */
export const HEARTBEAT_MS = 15_000;
/** A RUNNING job whose heartbeat is older than this belongs to a worker that is gone. */
export const STALE_AFTER_MS = 4 * HEARTBEAT_MS;
/** Runs of one job, at most: a job whose worker died this often (it may be what kills it) is FAILED. */
export const MAX_ATTEMPTS = 3;

/** The worker inside a server. `stop()` waits for the job in hand, then stops polling. */
export class JobRunner implements JobControl {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private busy: Promise<unknown> = Promise.resolve();
  private readonly started = new Set<string>();
  /** This worker's name in `claimed_by`: unique among the processes sharing the database. */
  readonly id = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private lastRecovery = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly env: JobEnv,
    mode: JobsMode,
  ) {
    if (mode === 'auto') this.schedule();
  }

  async startPending(): Promise<string[]> {
    const ids: string[] = [];
    for (let job = await this.claim(); job; job = await this.claim()) {
      this.started.add(job.id);
      ids.push(job.id);
    }
    return ids;
  }

  runPending(): Promise<string[]> {
    const run = this.busy.then(() => this.drain());
    this.busy = run.catch(() => undefined);
    return run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.busy;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.runPending()
        .catch(() => undefined)
        .finally(() => this.schedule());
    }, POLL_MS);
    this.timer.unref();
  }

  private async drain(): Promise<string[]> {
    const ids: string[] = [];
    for (const id of [...this.started]) {
      this.started.delete(id);
      const [row] = await this.env.db.query<JobRowDb>(
        `SELECT * FROM gds.jobs WHERE id = $1 AND status = 'RUNNING' AND claimed_by = $2`,
        [id, this.id],
      );
      if (row) await this.execute(toJob(row));
      ids.push(id);
    }
    await this.recover();
    while (!this.stopped) {
      const job = await this.claim();
      if (!job) break;
      await this.execute(job);
      ids.push(job.id);
    }
    return ids;
  }

  /**
   * The oldest QUEUED job, now RUNNING and claimed by this worker; null when none is queued. The row lock
   * skipped by other workers and the status re-checked after it make the claim one worker's only.
   */
  private async claim(): Promise<Job | null> {
    const [row] = await this.env.db.query<JobRowDb>(
      `UPDATE gds.jobs SET status = 'RUNNING', started_at = $1, heartbeat_at = $1, claimed_by = $2,
              attempts = attempts + 1
        WHERE id = (SELECT id FROM gds.jobs WHERE status = 'QUEUED' ORDER BY created_at, id LIMIT 1
                     FOR UPDATE SKIP LOCKED)
          AND status = 'QUEUED'
        RETURNING *`,
      [new Date(this.env.clock()).toISOString(), this.id],
    );
    return row ? toJob(row) : null;
  }

  /**
   * At most once a heartbeat period: the RUNNING jobs of workers whose heartbeat stopped go back to the
   * queue (or, after MAX_ATTEMPTS runs, to FAILED saying why). A job of this worker's own is never taken.
   */
  private async recover(): Promise<void> {
    const now = this.env.clock();
    if (now - this.lastRecovery < HEARTBEAT_MS && now >= this.lastRecovery) return;
    this.lastRecovery = now;
    await this.env.db.query(
      `UPDATE gds.jobs SET
          status = CASE WHEN attempts >= $3 THEN 'FAILED' ELSE 'QUEUED' END,
          finished_at = CASE WHEN attempts >= $3 THEN $1::timestamptz END,
          error = CASE WHEN attempts >= $3 THEN jsonb_build_object('message',
            'The server process running this job (' || coalesce(claimed_by, 'unknown') || ') stopped before it ' ||
            'finished, ' || attempts || ' times; run it again.') END,
          started_at = CASE WHEN attempts >= $3 THEN started_at END,
          claimed_by = CASE WHEN attempts >= $3 THEN claimed_by END,
          heartbeat_at = NULL
        WHERE status = 'RUNNING' AND claimed_by IS DISTINCT FROM $4
          AND coalesce(heartbeat_at, started_at) < $2`,
      [new Date(now).toISOString(), new Date(now - STALE_AFTER_MS).toISOString(), MAX_ATTEMPTS, this.id],
    );
  }

  /** Writes this worker's heartbeat on a job it runs, every HEARTBEAT_MS until stopped. */
  private heartbeat(jobId: string): () => void {
    const timer = setInterval(() => {
      void this.env.db
        .query(
          `UPDATE gds.jobs SET heartbeat_at = $2 WHERE id = $1 AND claimed_by = $3 AND status = 'RUNNING'`,
          [jobId, new Date(this.env.clock()).toISOString(), this.id],
        )
        .catch(() => undefined);
    }, HEARTBEAT_MS);
    timer.unref();
    return () => clearInterval(timer);
  }

  private async execute(job: Job): Promise<void> {
    const handler = handlers.get(job.type);
    let status: JobStatus = 'SUCCEEDED';
    let result: unknown = null;
    let error: { message: string } | null = null;
    const stopBeating = this.heartbeat(job.id);
    try {
      if (!handler) throw new Error(`no handler registered for job type ${job.type}`);
      result = (await handler(job, this.env)) ?? null;
    } catch (failure) {
      status = 'FAILED';
      error = { message: failure instanceof Error ? failure.message : String(failure) };
    } finally {
      stopBeating();
    }
    await this.env.db.query(
      `UPDATE gds.jobs SET status = $2, result = $3, error = $4, finished_at = $5
        WHERE id = $1 AND status = 'RUNNING' AND claimed_by = $6`,
      [
        job.id,
        status,
        JSON.stringify(result),
        error ? JSON.stringify(error) : null,
        new Date(this.env.clock()).toISOString(),
        this.id,
      ],
    );
  }
}
