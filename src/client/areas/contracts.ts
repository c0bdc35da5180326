// Semantic contracts (§4.6): certification of a PENDING_REVIEW table, rejection, and the contract's intent.
import type { CertifyRequest, CertifyResponse, Schema } from '../../contract/types.js';
import { LONG_WORK_TIMEOUT_MS, pathOf, projectQuery, writeOptions } from '../transport.js';
import type { CallOptions, ProjectWriteOptions, Transport } from '../transport.js';

export type TableStateChange = Schema<'TableStateChange'>;
export type ContractIntentRequest = Schema<'ContractIntentRequest'>;
export type LiveContract = Schema<'LiveContract'>;

export interface ContractsApi {
  certify(tableId: string, request?: CertifyRequest, options?: CallOptions): Promise<CertifyResponse>;
  /** PENDING_REVIEW back to QUARANTINED; the reason goes into the audit trail. */
  reject(tableId: string, reason: string, options?: CallOptions): Promise<TableStateChange>;
  /**
   * Fields not given carry forward unchanged; answers the live contract after the change and whether it
   * changed. `ifMatch`: the contract revision the request was computed from (0: none yet); `project`: only
   * that project's table (409 `owned_elsewhere` otherwise).
   */
  setIntent(
    tableId: string,
    request: ContractIntentRequest,
    options?: ProjectWriteOptions,
  ): Promise<Schema<'LiveContractResponse'>>;
  /**
   * The live contract, and whether the caller may set its intent; 404 `contract_not_found` while the table
   * has none.
   */
  get(tableId: string, options?: CallOptions): Promise<Schema<'LiveContractResponse'>>;
}

export function contractsApi(transport: Transport): ContractsApi {
  return {
    async certify(tableId, request = {}, options) {
      return transport.send<CertifyResponse>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/semantic-contract/certify', { tableId }),
        body: request,
        headersTimeoutMs: LONG_WORK_TIMEOUT_MS,
        ...options,
      });
    },
    async reject(tableId, reason, options) {
      return transport.send<TableStateChange>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/reject', { tableId }),
        body: { reason },
        ...options,
      });
    },
    async setIntent(tableId, request, options = {}) {
      const { project, ...write } = options;
      return transport.send<Schema<'LiveContractResponse'>>({
        method: 'PATCH',
        path: pathOf('/api/tables/{tableId}/semantic-contract', { tableId }),
        body: request,
        ...projectQuery(project),
        ...writeOptions(write),
      });
    },
    async get(tableId, options) {
      return transport.send<Schema<'LiveContractResponse'>>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/semantic-contract', { tableId }),
        ...options,
      });
    },
  };
}
