// Gate 1 rules and gate runs: gate1.yml versions, suggestions, dry runs, submissions, and the result and
// cancellation of gate jobs (their status is in gate-jobs.ts).
import type {
  Gate1ApplyResult,
  Gate1ProofBody,
  Gate1Suggestions,
  Gate1Version,
  Gate1VersionList,
  GateJobBody,
  GateRunRequest,
  GateSubmitRequest,
  Schema,
} from '../../contract/types.js';
import { LONG_WORK_TIMEOUT_MS, pathOf, projectQuery, writeOptions } from '../transport.js';
import type { CallOptions, ProjectWriteOptions, Transport } from '../transport.js';

export type GateJobAccepted = Schema<'GateJobAccepted'>;
/** The gate a job belongs to, as `--gate` names it (1 = the auto-baseline job). */
export type GateNumber = 1 | 2 | 3;

/**
 * A submission's answer: the proof, and whether the service answered it as an earlier request with the same
 * `Idempotency-Key` (`Idempotent-Replayed: true`): nothing was scanned, stored or notified this time. Not
 * after a lost attempt was sent again: the attempt the service took may be this call's own.
 */
export interface Gate1Submission {
  proof: Gate1ProofBody;
  replayed: boolean;
}

/** A Gate 1 dry run answers with its proof (200); a Gate 2/3 run with the queued job (202). */
export type GateRunResponse = { kind: 'proof'; proof: Gate1ProofBody } | { kind: 'job'; job: GateJobBody };

export interface GatesApi {
  /** The newest gate1.yml; 404 `gate1_not_found` when none was ever applied. */
  get(tableId: string, options?: CallOptions): Promise<Gate1Version>;
  /** One stored version (`3` or `v3`). */
  version(tableId: string, version: string, options?: CallOptions): Promise<Gate1Version>;
  versions(tableId: string, options?: CallOptions): Promise<Gate1VersionList>;
  /**
   * `ifMatch`: the gate1.yml version the content was compared with (0: none yet); `project`: only that
   * project's table (409 `owned_elsewhere` otherwise).
   */
  apply(tableId: string, content: string, options?: ProjectWriteOptions): Promise<Gate1ApplyResult>;
  suggest(tableId: string, options?: CallOptions): Promise<Gate1Suggestions>;
  run(tableId: string, request: GateRunRequest, options?: CallOptions): Promise<GateRunResponse>;
  /**
   * 409 `table_certified` when `request.ifNotCertified` and the table is CERTIFIED; with `project`, 409
   * `owned_elsewhere` when the table is not that project's. `ifStale`: a table waiting for review on a fresh
   * proof is not submitted again (the answer is that proof, `skipped: 'fresh'`). With `idempotencyKey`, the
   * service applies the submission once: sent again (the transport's retry after a lost connection, a pipeline
   * step run again), it answers as the first time; `replayed` unless a lost attempt of this call was sent again.
   */
  submit(
    tableId: string,
    request: GateSubmitRequest,
    options?: CallOptions & { project?: string; ifStale?: boolean; idempotencyKey?: string | undefined },
  ): Promise<Gate1Submission>;
  /** 409 `job_not_terminal` while the job is queued or running. */
  result(
    jobId: string,
    gate: GateNumber | undefined,
    options?: CallOptions,
  ): Promise<GateJobBody | Gate1ProofBody>;
  /** 409 `job_terminal` once it has ended. */
  cancel(jobId: string, gate: GateNumber | undefined, options?: CallOptions): Promise<GateJobBody>;
}

export function gatesApi(transport: Transport): GatesApi {
  const gateQuery = (gate: GateNumber | undefined) => ({
    gate: gate === undefined ? undefined : String(gate),
  });
  return {
    async get(tableId, options) {
      return transport.send<Gate1Version>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/gate1', { tableId }),
        ...options,
      });
    },
    async version(tableId, version, options) {
      const path = pathOf('/api/tables/{tableId}/gate1/versions/{version}', { tableId, version });
      return transport.send<Gate1Version>({ method: 'GET', path, ...options });
    },
    async versions(tableId, options) {
      return transport.send<Gate1VersionList>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/gate1/versions', { tableId }),
        ...options,
      });
    },
    async apply(tableId, content, options = {}) {
      const { project, ...write } = options;
      return transport.send<Gate1ApplyResult>({
        method: 'PUT',
        path: pathOf('/api/tables/{tableId}/gate1', { tableId }),
        body: { content },
        ...projectQuery(project),
        ...writeOptions(write),
      });
    },
    async suggest(tableId, options) {
      return transport.send<Gate1Suggestions>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/gate1/suggestions', { tableId }),
        ...options,
      });
    },
    async run(tableId, request, options) {
      const response = await transport.request<Gate1ProofBody | GateJobAccepted>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/gate-runs', { tableId }),
        body: request,
        headersTimeoutMs: LONG_WORK_TIMEOUT_MS,
        ...options,
      });
      return response.status === 202
        ? { kind: 'job', job: (response.data as GateJobAccepted).job }
        : { kind: 'proof', proof: response.data as Gate1ProofBody };
    },
    async submit(tableId, request, options = {}) {
      const { project, ifStale, idempotencyKey, ...call } = options;
      const { query } = projectQuery(project);
      const response = await transport.request<Gate1ProofBody>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/gate-submissions', { tableId }),
        body: request,
        headersTimeoutMs: LONG_WORK_TIMEOUT_MS,
        ...(query !== undefined || ifStale === true
          ? { query: { ...query, ...(ifStale === true ? { ifStale: 'true' } : {}) } }
          : {}),
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...call,
      });
      const replayed =
        response.headers.get('idempotent-replayed') === 'true' && response.retriesAfterLoss === 0;
      return { proof: response.data, replayed };
    },
    async result(jobId, gate, options) {
      return transport.send<GateJobBody | Gate1ProofBody>({
        method: 'GET',
        path: pathOf('/api/gate-jobs/{jobId}/result', { jobId }),
        query: gateQuery(gate),
        ...options,
      });
    },
    async cancel(jobId, gate, options) {
      return transport.send<GateJobBody>({
        method: 'POST',
        path: pathOf('/api/gate-jobs/{jobId}/cancel', { jobId }),
        query: gateQuery(gate),
        ...options,
      });
    },
  };
}
