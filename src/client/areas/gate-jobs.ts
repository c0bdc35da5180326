// Gate jobs: the auto-baseline job a push queues (Gate 1) and Gate 2/3 jobs.
import type { GateJobBody } from '../../contract/types.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export interface GateJobsApi {
  /** The job's status; `gate` asserts which gate it is (the service answers 400 on a mismatch). */
  get(jobId: string, query?: { gate?: 1 | 2 | 3 | undefined }, options?: CallOptions): Promise<GateJobBody>;
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
  };
}
