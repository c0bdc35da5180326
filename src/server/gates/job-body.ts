// A gate job on the wire, and which gate each job type is (`gate status <jobId> --gate <n>`).
import type { GateJobBody } from '../../contract/types.js';
import type { Job, JobType } from '../governance/jobs.js';

/** The auto-baseline job is Gate 1's (its report is what Gate 3 compares against). */
export const GATE_OF: Record<JobType, 1 | 2 | 3> = { 'gate-baseline-auto': 1, gate2: 2, gate3: 3 };

export const TERMINAL_STATUSES: ReadonlySet<Job['status']> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function jobBody(job: Job): GateJobBody {
  return {
    id: job.id,
    tableId: job.tableId,
    type: job.type,
    gate: GATE_OF[job.type],
    status: job.status,
    params: job.params,
    createdBy: job.createdBy,
    ...(job.createdByEmail === undefined ? {} : { createdByEmail: job.createdByEmail }),
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    error: job.error,
  };
}
