// The typed client of the service: one transport, one object per API area.
import { artifactsApi } from './areas/artifacts.js';
import { auditLogApi } from './areas/audit-log.js';
import { configApi } from './areas/config.js';
import { connectorsApi } from './areas/connectors.js';
import { contractsApi } from './areas/contracts.js';
import { definitionsApi } from './areas/definitions.js';
import { gateJobsApi } from './areas/gate-jobs.js';
import { gatesApi } from './areas/gates.js';
import { membersApi } from './areas/members.js';
import { notificationsApi } from './areas/notifications.js';
import { promotionsApi } from './areas/promotions.js';
import { recertificationApi } from './areas/recertification.js';
import { recordsApi } from './areas/records.js';
import { tablesApi } from './areas/tables.js';
import { tokensApi } from './areas/tokens.js';
import { versionsApi } from './areas/versions.js';
import { createTransport } from './transport.js';
import type { Transport, TransportOptions } from './transport.js';

export type ApiClientOptions = TransportOptions;

export function createApiClient(options: ApiClientOptions) {
  const transport: Transport = createTransport(options);
  return {
    tokens: tokensApi(transport),
    records: recordsApi(transport),
    auditLog: auditLogApi(transport),
    members: membersApi(transport),
    contracts: contractsApi(transport),
    definitions: definitionsApi(transport),
    recertification: recertificationApi(transport),
    notifications: notificationsApi(transport),
    tables: tablesApi(transport),
    artifacts: artifactsApi(transport),
    connectors: connectorsApi(transport),
    gateJobs: gateJobsApi(transport),
    gates: gatesApi(transport),
    versions: versionsApi(transport),
    config: configApi(transport),
    promotions: promotionsApi(transport),
    /** A raw call for paths without an area method (`gds api`); same auth, retries and errors. */
    request: transport.request,
    /** Requests and retries sent so far. */
    stats: transport.stats,
    /** Closes the keep-alive pool; call once done so the process can exit at once. */
    close: () => transport.close(),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

export { ApiError, CursorLoopError, NetworkError } from './errors.js';
export { staticToken } from './transport.js';
export type { NetworkFailure } from './errors.js';
export type {
  AuthProvider,
  CallOptions,
  HttpMethod,
  RequestOptions,
  ApiResponse,
  TransportTimeouts,
} from './transport.js';
export type { RetryPolicy } from './retry.js';
