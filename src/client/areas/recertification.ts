// Recertification: the pipeline signal (§4.8, MANAGEMENT token) and the open requests a person lists or
// dismisses (`recertification list` / `dismiss`).
import type { RecertifyRequest, RecertifyResponse, Schema } from '../../contract/types.js';
import { refusesParameter } from '../errors.js';
import { cursorPages } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';
import { LONG_WORK_TIMEOUT_MS, pathOf } from '../transport.js';

export type RecertificationRequest = Schema<'RecertificationRequest'>;
export type RecertificationSignal = Schema<'RecertificationSignal'>;
export type RequestSignal = Schema<'RequestSignal'>;

export interface RecertificationApi {
  /**
   * Tell the service which tables a pipeline rebuilt (`tables`, or dbt `runResults`). With
   * `idempotencyKey`, the service applies the signal once: sent again, it answers as the first time.
   */
  signal(
    request: RecertifyRequest,
    options?: CallOptions & { idempotencyKey?: string | undefined },
  ): Promise<RecertifyResponse>;
  /** OPEN requests of the workspace (`all`: every request), oldest first; `tableId` keeps one table's. */
  listRequests(
    query?: { tableId?: string | undefined; all?: boolean | undefined },
    options?: CallOptions,
  ): Promise<RecertificationRequest[]>;
  /**
   * Up to `limit` (1-1,000) OPEN requests whose id starts with `prefix` (case-insensitive), ordered by id, in one
   * request (`prefix`; an empty one asks for the list's first page), without the list's total
   * (`total=false`): how TAB completes a request's id. A service from before `prefix` refuses it and `total`
   * (or, ignoring prefix, answers other ids): its whole list is then read and filtered, every match kept.
   */
  startingWith(prefix: string, limit: number, options?: CallOptions): Promise<RecertificationRequest[]>;
  /**
   * The same list a page at a time (`pageSizes`: the first page's, then every other's; up to 1,000),
   * following the service's cursor: the first page carries the whole list's `total`.
   */
  requestPages(
    query: { tableId?: string | undefined; all?: boolean | undefined },
    pageSizes: readonly [first: number, rest: number],
    options?: CallOptions,
  ): AsyncGenerator<{ requests: RecertificationRequest[]; total?: number }, void, undefined>;
  /**
   * Every signal of a request, oldest first, a page at a time (a request as listed carries its latest 20;
   * `earlierSignals` says when there are more).
   */
  signals(requestId: string, options?: CallOptions): AsyncGenerator<RecertificationSignal[], void, undefined>;
  /**
   * Every signal of the requests `requestIds` names (at most 100), each request's oldest first, each naming its
   * request, a page of 1,000 at a time; a request the caller may not read has none. A service from before the
   * read answers 404.
   */
  signalsOf(
    requestIds: readonly string[],
    options?: CallOptions,
  ): AsyncGenerator<RequestSignal[], void, undefined>;
  /** Acknowledges a request without certifying or rejecting; returns it DISMISSED. */
  dismiss(requestId: string, reason?: string, options?: CallOptions): Promise<RecertificationRequest>;
}

export function recertificationApi(transport: Transport): RecertificationApi {
  const api: RecertificationApi = {
    async signal(request, options = {}) {
      const { idempotencyKey, ...call } = options;
      return transport.send<RecertifyResponse>({
        method: 'POST',
        path: '/api/workspace/recertify',
        body: request,
        // A signal of 500 rebuilt tables publishes their certified views again, in one transaction: the
        // client waits as long as for a gate run rather than give up on a signal the service goes on with.
        headersTimeoutMs: LONG_WORK_TIMEOUT_MS,
        ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
        ...call,
      });
    },
    async listRequests(query = {}, options) {
      const { requests } = await transport.send<Schema<'RecertificationRequestList'>>({
        method: 'GET',
        path: '/api/recertification-requests',
        query: { tableId: query.tableId, all: query.all === true ? 'true' : undefined },
        ...options,
      });
      return requests;
    },
    async startingWith(prefix, limit, options) {
      const lowered = prefix.toLowerCase();
      const matches = (request: RecertificationRequest) => request.id.toLowerCase().startsWith(lowered);
      try {
        const { requests } = await transport.send<Schema<'RecertificationRequestList'>>({
          method: 'GET',
          path: '/api/recertification-requests',
          // No total: counting every match costs the service more than the page.
          query: { prefix: prefix === '' ? undefined : prefix, limit, total: 'false' },
          ...options,
        });
        if (requests.every(matches)) return requests;
      } catch (error) {
        if (!refusesParameter(error, 'prefix', 'total')) throw error;
      }
      // A service from before `prefix`: the whole list, as it was read before.
      return (await api.listRequests({}, options)).filter(matches);
    },
    async *requestPages(query, [first, rest], options) {
      const walk = cursorPages('/api/recertification-requests', (cursor) =>
        transport.send<Schema<'RecertificationRequestList'>>({
          method: 'GET',
          path: '/api/recertification-requests',
          query: {
            tableId: query.tableId,
            all: query.all === true ? 'true' : undefined,
            limit: cursor === undefined ? first : rest,
            cursor,
          },
          ...options,
        }),
      );
      for await (const page of walk) {
        yield { requests: page.requests, ...(page.total === undefined ? {} : { total: page.total }) };
      }
    },
    async *signals(requestId, options) {
      const path = pathOf('/api/recertification-requests/{requestId}/signals', { requestId });
      const walk = cursorPages(path, (cursor) =>
        transport.send<Schema<'RecertificationSignalList'>>({
          method: 'GET',
          path,
          query: { limit: 1000, cursor },
          ...options,
        }),
      );
      for await (const page of walk) yield page.signals;
    },
    async *signalsOf(requestIds, options) {
      const walk = cursorPages('/api/recertification-signals', (cursor) =>
        transport.send<Schema<'RequestSignalList'>>({
          method: 'GET',
          path: '/api/recertification-signals',
          query: { requestId: [...requestIds], limit: 1000, cursor },
          ...options,
        }),
      );
      for await (const page of walk) yield page.signals;
    },
    async dismiss(requestId, reason, options) {
      const { request } = await transport.send<{ request: RecertificationRequest }>({
        method: 'POST',
        path: pathOf('/api/recertification-requests/{requestId}/dismiss', { requestId }),
        body: reason === undefined ? {} : { reason },
        ...options,
      });
      return request;
    },
  };
  return api;
}
