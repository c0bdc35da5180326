// Gate jobs: the auto-baseline job a push queues (Gate 1) and Gate 2/3 jobs.
import type { Gate1ProofBody, GateJobBody, Schema } from '../../contract/types.js';

export type GateJobList = Schema<'GateJobList'>;
/** A job, or the persisted Gate 1 proof a `prf_…` id names. */
export type GateRecord = GateJobBody | Gate1ProofBody;
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export interface GateJobsApi {
  /** The job's status; `gate` asserts which gate it is (the service answers 400 on a mismatch). */
  get(jobId: string, query?: { gate?: 1 | 2 | 3 | undefined }, options?: CallOptions): Promise<GateJobBody>;
  /** As `get`, for any id `gate submit` or a run printed: a `prf_…` id answers the persisted proof. */
  lookup(id: string, query?: { gate?: 1 | 2 | 3 | undefined }, options?: CallOptions): Promise<GateRecord>;
  /** The table's recent gate jobs and submissions, finished ones included, newest first. */
  list(tableId: string, query?: { limit?: number | undefined }, options?: CallOptions): Promise<GateJobList>;
}

export function gateJobsApi(transport: Transport): GateJobsApi {
  return {
    async get(jobId, query = {}, options) {
      return transport.send<GateJobBody>({
        method: 'GET',
        path: pathOf('/api/gate-jobs/{jobId}', { jobId }),
        query: { gate: query.gate },
        ...options,
      });
    },
    async lookup(id, query = {}, options) {
      return transport.send<GateRecord>({
        method: 'GET',
        path: pathOf('/api/gate-jobs/{jobId}', { jobId: id }),
        query: { gate: query.gate },
        ...options,
      });
    },
    async list(tableId, query = {}, options) {
      return transport.send<GateJobList>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/gate-jobs', { tableId }),
        query: { limit: query.limit === undefined ? undefined : String(query.limit) },
        ...options,
      });
    },
  };
}
