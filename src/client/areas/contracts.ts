// Semantic contracts (§4.6): certification of a PENDING_REVIEW table.
import type { CertifyRequest, CertifyResponse } from '../../contract/types.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export interface ContractsApi {
  certify(tableId: string, request?: CertifyRequest, options?: CallOptions): Promise<CertifyResponse>;
}

export function contractsApi(transport: Transport): ContractsApi {
  return {
    async certify(tableId, request = {}, options) {
      return transport.send<CertifyResponse>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/semantic-contract/certify', { tableId }),
        body: request,
        ...options,
      });
    },
  };
}
