// The pipeline recertification signal (§4.8).
import type { RecertifyRequest, RecertifyResponse } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export interface RecertificationApi {
  /** Tell the service which tables a pipeline rebuilt (`tables`, or dbt `runResults`). */
  signal(request: RecertifyRequest, options?: CallOptions): Promise<RecertifyResponse>;
}

export function recertificationApi(transport: Transport): RecertificationApi {
  return {
    async signal(request, options) {
      return transport.send<RecertifyResponse>({
        method: 'POST',
        path: '/api/workspace/recertify',
        body: request,
        ...options,
      });
    },
  };
}
