// Certification history of a table's contract (`gds versions list|restore`).
import type { Schema } from '../../contract/types.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export type ContractVersion = Schema<'ContractVersion'>;
export type RestoreRequest = Schema<'RestoreRequest'>;
export type RestoreResult = Schema<'RestoreResult'>;

export interface VersionsApi {
  /** Every version, oldest first; restores are versions of kind RESTORE. */
  list(tableId: string, options?: CallOptions): Promise<ContractVersion[]>;
  restore(tableId: string, request: RestoreRequest, options?: CallOptions): Promise<RestoreResult>;
}

export function versionsApi(transport: Transport): VersionsApi {
  return {
    async list(tableId, options) {
      const { versions } = await transport.send<Schema<'ContractVersionList'>>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/versions', { tableId }),
        ...options,
      });
      return versions;
    },
    async restore(tableId, request, options) {
      return transport.send<RestoreResult>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/versions/restore', { tableId }),
        body: request,
        ...options,
      });
    },
  };
}
