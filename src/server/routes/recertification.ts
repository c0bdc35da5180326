// The recertification signal (§4.8, MANAGEMENT token with `workspace:write:recertify` only) and the CLI's
// recertification requests (`recertification list` / `dismiss`, a person's session JWT or `cli_` token).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireManagement, requireSession } from '../auth/caller.js';
import type { Caller, IntegrationCaller } from '../auth/caller.js';
import { visibleEnvironments } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { badRequest } from '../errors.js';
import {
  countRequests,
  dismissableRequest,
  dismissRequest,
  findRequestFor,
  listRequestPage,
  listSignalPage,
  listSignalsOfRequests,
} from '../governance/recertification-requests.js';
import { decodeListCursor, decodeMatchCursor, encodeListCursor } from '../list-cursor.js';
import { recertify } from '../governance/recertify.js';
import { idempotencyKeyOf } from '../idempotency.js';
import type { Query } from '../query.js';
import { booleanParam, intParam, rejectUnknownParams, repeatedStringParam, stringParam } from '../query.js';

/** The requests one read of signals may name (their ids in the URL stay within any proxy's limit). */
const MAX_SIGNAL_REQUESTS = 100;

export function recertificationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const recertifier = (caller: Caller) => requireManagement(caller, 'workspace:write:recertify', false);
  app.post('/api/workspace/recertify', guardBeforeBody(recertifier), async (request, reply) => {
    const caller = recertifier(await callerOf(ctx, request));
    const key = idempotencyKeyOf(request.headers['idempotency-key']);
    const { response, replayed } = await recertify(ctx, caller as IntegrationCaller, request.body, key);
    if (replayed) void reply.header('idempotent-replayed', 'true');
    return response;
  });

  app.get('/api/recertification-requests', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['tableId', 'all', 'prefix', 'limit', 'cursor', 'total']);
    const all = stringParam(request.query, 'all');
    if (all !== undefined && all !== 'true' && all !== 'false') {
      throw badRequest('invalid_query', 'all is true or false.', { parameter: 'all' });
    }
    const cursor = stringParam(request.query, 'cursor');
    // The requests whose id starts with it, ordered by id: what TAB completion asks (as the table list's prefix).
    const prefix = stringParam(request.query, 'prefix');
    // false: no total on the first page (counting 100,000 open requests costs more than the page; TAB asks so).
    const withTotal = booleanParam(request.query, 'total', true);
    // As the table list: without limit or cursor every request in one answer; with either, pages by key.
    const paged = cursor !== undefined || request.query.limit !== undefined;
    const query = {
      all: all === 'true',
      tableId: stringParam(request.query, 'tableId'),
      // Only the tables of the environments the caller may act in.
      environments: visibleEnvironments(caller),
      limit: paged ? intParam(request.query, 'limit', 1, 1000, 100) : undefined,
      prefix,
      ...(cursor === undefined
        ? {}
        : prefix === undefined
          ? { after: decodeListCursor(cursor) }
          : { afterMatch: decodeMatchCursor(cursor) }),
    };
    const { requests, next } = await listRequestPage(ctx.db, caller.workspaceId, query);
    if (!paged) return { requests };
    return {
      requests,
      nextCursor: next === null ? null : encodeListCursor(next),
      ...(cursor === undefined && withTotal
        ? { total: next === null ? requests.length : await countRequests(ctx.db, caller.workspaceId, query) }
        : {}),
    };
  });

  app.get(
    '/api/recertification-requests/:requestId/signals',
    async (request: FastifyRequest<{ Params: { requestId: string }; Querystring: Query }>) => {
      const caller = requireSession(await callerOf(ctx, request));
      const found = await findRequestFor(ctx.db, caller, request.params.requestId);
      // The query is read once the caller may read the request (authorize, then validate).
      rejectUnknownParams(request.query, ['limit', 'cursor']);
      const cursor = stringParam(request.query, 'cursor');
      const { signals, next } = await listSignalPage(ctx.db, found.id, {
        limit: intParam(request.query, 'limit', 1, 1000, 100),
        after: cursor === undefined ? undefined : decodeListCursor(cursor),
      });
      return { signals, nextCursor: next === null ? null : encodeListCursor(next) };
    },
  );

  // The signals of several requests (`gds recertification list --json`: a page of requests with earlier signals
  // in a few requests): those the caller may not read are left out, as the request list leaves them out.
  app.get('/api/recertification-signals', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['requestId', 'limit', 'cursor']);
    const requestIds = repeatedStringParam(request.query, 'requestId', MAX_SIGNAL_REQUESTS);
    if (requestIds === undefined) {
      throw badRequest('invalid_query', 'requestId is required: the requests whose signals to read.', {
        parameter: 'requestId',
      });
    }
    const cursor = stringParam(request.query, 'cursor');
    const { signals, next } = await listSignalsOfRequests(ctx.db, caller.workspaceId, requestIds, {
      environments: visibleEnvironments(caller),
      limit: intParam(request.query, 'limit', 1, 1000, 100),
      after: cursor === undefined ? undefined : decodeListCursor(cursor),
    });
    return { signals, nextCursor: next === null ? null : encodeListCursor(next) };
  });

  app.post(
    '/api/recertification-requests/:requestId/dismiss',
    guardBeforeBody(requireSession, (context, caller, requestId) =>
      dismissableRequest(context.db, caller, requestId),
    ),
    async (request: FastifyRequest<{ Params: { requestId: string } }>) => {
      const caller = requireSession(await callerOf(ctx, request));
      const body: unknown = request.body ?? {};
      const reason =
        typeof body === 'object' && body !== null ? (body as { reason?: unknown }).reason : undefined;
      // The reason is validated once the caller may dismiss the request (authorize, then validate).
      return { request: await dismissRequest(ctx.db, ctx.clock, caller, request.params.requestId, reason) };
    },
  );
}
