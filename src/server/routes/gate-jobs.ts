// Gate jobs (Gate 2/3 and the auto-baseline job): status, result of a terminal job, cancel. A
// person's session or CLI token; `?gate=` (the CLI's --gate) must match the job's gate.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Gate1ProofBody, GateJobBody, Schema } from '../../contract/types.js';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import { recordAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { guardBeforeBody } from '../context.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import type { Job } from '../governance/jobs.js';
import { cancelJob, getJob, recentJobs } from '../governance/jobs.js';
import { requireEnvironment } from '../certification/access.js';
import { gateCaller, gateTableFor } from '../gates/access.js';
import { findProof, recentProofs, storedProofBody } from '../gates/proofs.js';
import { GATE_OF, jobBody, TERMINAL_STATUSES } from '../gates/job-body.js';
import type { Query } from '../query.js';
import { intParam, rejectUnknownParams, stringParam } from '../query.js';

type GateJobList = Schema<'GateJobList'>;

type JobRequest = FastifyRequest<{ Params: { jobId: string }; Querystring: Query }>;
type TableJobsRequest = FastifyRequest<{ Params: { tableId: string }; Querystring: Query }>;

export function gateJobRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/tables/:tableId/gate-jobs', async (request: TableJobsRequest) => {
    const { table } = await gateTableFor(ctx, request);
    rejectUnknownParams(request.query, ['limit']);
    const limit = intParam(request.query, 'limit', 1, 100, 20);
    const [jobs, proofs] = await Promise.all([
      recentJobs(ctx.db, table.id, limit),
      recentProofs(ctx.db, table.id, limit),
    ]);
    // Newest first by when each began, a job not started yet by when it was queued; a queued job has no
    // start time to show (GET /api/gate-jobs/{id} says null as well).
    const began = new Map<string, string>();
    const rows: GateJobList['jobs'] = [
      ...jobs.map((job) => {
        began.set(job.id, job.startedAt ?? job.createdAt);
        return {
          id: job.id,
          gate: GATE_OF[job.type],
          type: job.type,
          status: job.status,
          startedAt: job.startedAt,
          endedAt: job.finishedAt,
          proof: TERMINAL_STATUSES.has(job.status) ? job.id : null,
        };
      }),
      ...proofs.map((proof) => ({
        id: proof.id,
        gate: 1 as const,
        type: 'gate1-submit' as const,
        status: proof.passed ? ('PASSED' as const) : ('FAILED' as const),
        startedAt: proof.createdAt,
        endedAt: proof.createdAt,
        proof: proof.id,
      })),
    ];
    const key = (row: GateJobList['jobs'][number]) => began.get(row.id) ?? row.startedAt ?? '';
    rows.sort((a, b) => key(b).localeCompare(key(a)) || b.id.localeCompare(a.id));
    const body: GateJobList = { tableId: table.id, jobs: rows.slice(0, limit) };
    return body;
  });

  app.get('/api/gate-jobs/:jobId', async (request: JobRequest) => {
    const proof = await proofFor(ctx, request);
    if (proof) return proof;
    const { caller, job } = await jobFor(ctx, request);
    return jobBody(await settled(ctx, caller.workspaceId, job));
  });

  app.get('/api/gate-jobs/:jobId/result', async (request: JobRequest) => {
    const proof = await proofFor(ctx, request);
    if (proof) return proof;
    const { job } = await jobFor(ctx, request);
    if (!TERMINAL_STATUSES.has(job.status)) {
      throw new HttpError(
        409,
        'job_not_terminal',
        `Job ${job.id} is ${job.status}; its result exists once it ends (follow it with gds gate status ${job.id} --gate ${GATE_OF[job.type]}).`,
        { jobId: job.id, status: job.status },
      );
    }
    const body: GateJobBody = { ...jobBody(job), result: job.result };
    return body;
  });

  const cancelling = guardBeforeBody(requireSession, jobInScope);
  app.post('/api/gate-jobs/:jobId/cancel', cancelling, async (request: JobRequest) => {
    const { caller, job } = await jobFor(ctx, request);
    const after = TERMINAL_STATUSES.has(job.status)
      ? job
      : await ctx.db.transaction(async (tx) => {
          const cancelled = await cancelJob(tx, caller.workspaceId, job.id, ctx.clock);
          if (cancelled?.status === 'CANCELLED') {
            // The table's environment and gate mode, as every table event carries them.
            const [table] = job.tableId
              ? await tx.query<{ environment_label: string; gate_mode: 'ENFORCING' | 'ADVISORY' }>(
                  'SELECT environment_label, gate_mode FROM gds.tables WHERE id = $1',
                  [job.tableId],
                )
              : [];
            await recordAudit(tx, ctx.clock, {
              workspaceId: caller.workspaceId,
              userId: caller.userId,
              tableId: job.tableId,
              environmentLabel: table?.environment_label ?? null,
              gateMode: table?.gate_mode ?? null,
              action: 'GATE_JOB_CANCELLED',
              resource: 'gate_job',
              details: { jobId: job.id, type: job.type, from: job.status },
            });
          }
          return cancelled ?? job;
        });
    // A job that had ended before this call (or ended while it ran) is not cancelled by it.
    if (after === job || after.status !== 'CANCELLED') {
      throw new HttpError(
        409,
        'job_terminal',
        `Job ${job.id} already ended (${after.status}); there is nothing to cancel.`,
        { jobId: job.id, status: after.status },
      );
    }
    return jobBody(after);
  });
}

/** Default of ServerOptions.jobReadHoldMs: a job queued this recently is awaited briefly by a status read. */
export const JOB_READ_HOLD_MS = 250;
/** How often a held read looks at the job again. */
const RECHECK_MS = 10;

/**
 * The job as it is once it has ended, or once `ctx.jobReadHoldMs` have passed since it was queued,
 * whichever comes first: a read right after the registration (push --wait reads at once) waits a few
 * milliseconds for a job that ends in as many, instead of answering QUEUED and the client asking again a
 * poll interval later. A job queued longer ago, or one that has ended, is answered at once. The job is
 * read again every RECHECK_MS meanwhile (from the database: a worker of another process may run it).
 */
async function settled(ctx: AppContext, workspaceId: string, job: Job): Promise<Job> {
  const holdMs = ctx.jobReadHoldMs ?? JOB_READ_HOLD_MS;
  const left = holdMs - (ctx.clock() - Date.parse(job.createdAt));
  if (TERMINAL_STATUSES.has(job.status) || !(left > 0)) return job;
  const until = Date.now() + Math.min(left, holdMs);
  let current = job;
  while (!TERMINAL_STATUSES.has(current.status) && Date.now() < until) {
    await sleep(Math.min(RECHECK_MS, Math.max(until - Date.now(), 1)));
    current = (await getJob(ctx.db, workspaceId, job.id)) ?? current;
  }
  return current;
}

/** A `prf_…` id: the persisted Gate 1 proof (`gate submit` printed it), with the job checks applied; else null. */
async function proofFor(ctx: AppContext, request: JobRequest): Promise<Gate1ProofBody | null> {
  if (!request.params.jobId.startsWith('prf_')) return null;
  const caller = await gateCaller(ctx, request);
  const proof = await findProof(ctx.db, caller.workspaceId, request.params.jobId);
  if (!proof) {
    throw notFound(
      'proof_not_found',
      `No Gate 1 proof ${request.params.jobId} exists in this workspace; gds gate jobs <tableId> lists the table's proofs.`,
      { jobId: request.params.jobId },
    );
  }
  await requireTableEnvironment(ctx, caller, proof.tableId);
  // The query is validated once the caller may see the proof (authorize, then validate).
  rejectUnknownParams(request.query, ['gate']);
  const gateParam = stringParam(request.query, 'gate');
  if (gateParam !== undefined && gateParam !== '1') {
    throw badRequest(
      'gate_mismatch',
      `${proof.id} is a Gate 1 proof, not Gate ${gateParam}; pass --gate 1.`,
      {
        jobId: proof.id,
        gate: 1,
      },
    );
  }
  return storedProofBody(proof);
}

async function jobFor(ctx: AppContext, request: JobRequest): Promise<{ caller: SessionCaller; job: Job }> {
  const caller = await gateCaller(ctx, request);
  const job = await jobInScope(ctx, caller, request.params.jobId);
  // The query is validated once the caller may see the job (authorize, then validate).
  rejectUnknownParams(request.query, ['gate']);
  const gateParam = stringParam(request.query, 'gate');
  if (gateParam !== undefined && !['1', '2', '3'].includes(gateParam)) {
    throw badRequest('invalid_query', `gate must be 1, 2 or 3; got "${gateParam}".`, { parameter: 'gate' });
  }
  if (gateParam !== undefined && Number(gateParam) !== GATE_OF[job.type]) {
    throw badRequest(
      'gate_mismatch',
      `Job ${job.id} is a Gate ${GATE_OF[job.type]} job, not Gate ${gateParam}; pass --gate ${GATE_OF[job.type]}.`,
      { jobId: job.id, gate: GATE_OF[job.type] },
    );
  }
  return { caller, job };
}

/** The job of the workspace (404 none) whose table is in the caller's environment scope (403). */
async function jobInScope(ctx: AppContext, caller: SessionCaller, jobId: string): Promise<Job> {
  const job = await getJob(ctx.db, caller.workspaceId, jobId);
  if (!job) {
    throw notFound(
      'job_not_found',
      `No gate job ${jobId} exists in this workspace; check the id gds printed.`,
      {
        jobId,
      },
    );
  }
  if (job.tableId) await requireTableEnvironment(ctx, caller, job.tableId);
  return job;
}

/** A job's or proof's table must be in the caller's environment scope, as every other read of a table (403). */
async function requireTableEnvironment(
  ctx: AppContext,
  caller: SessionCaller,
  tableId: string,
): Promise<void> {
  const [table] = await ctx.db.query<{ environment_label: string }>(
    'SELECT environment_label FROM gds.tables WHERE id = $1',
    [tableId],
  );
  if (table) requireEnvironment(caller, table.environment_label, tableId);
}
