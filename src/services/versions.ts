// `gds versions list|restore`: the certification history of a table's contract.
import type { ApiClient } from '../client/index.js';
import type { ContractVersion, RestoreRequest, RestoreResult } from '../client/areas/versions.js';

export type VersionsClient = Pick<ApiClient, 'versions'>;
type Call = { signal?: AbortSignal };

export async function listVersions(
  client: VersionsClient,
  tableId: string,
  call: Call = {},
): Promise<ContractVersion[]> {
  return client.versions.list(tableId, call);
}

/** Cuts a new RESTORE version from an earlier one; history is never rewritten. */
export async function restoreVersion(
  client: VersionsClient,
  tableId: string,
  input: { to: number; reason: string; env?: string | undefined },
  call: Call = {},
): Promise<RestoreResult> {
  const request: RestoreRequest = {
    to: input.to,
    reason: input.reason,
    ...(input.env === undefined ? {} : { env: input.env }),
  };
  return client.versions.restore(tableId, request, call);
}
