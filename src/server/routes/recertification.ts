// The recertification signal (§4.8, MANAGEMENT token with `workspace:write:recertify` only) and the CLI's
// recertification requests (`recertification list` / `dismiss`, a person's session JWT or `cli_` token).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireManagement, requireSession } from '../auth/caller.js';
import type { IntegrationCaller } from '../auth/caller.js';
import { inEnvironmentScope } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { badRequest } from '../errors.js';
import { dismissRequest, listOpenRequests } from '../governance/recertification-requests.js';
import { recertify } from '../governance/recertify.js';
import type { Query } from '../query.js';
import { rejectUnknownParams, stringParam } from '../query.js';

export function recertificationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post('/api/workspace/recertify', async (request) => {
    const caller = requireManagement(await callerOf(ctx, request), 'workspace:write:recertify', false);
    return recertify(ctx, caller as IntegrationCaller, request.body);
  });

  app.get('/api/recertification-requests', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['tableId', 'all']);
    const all = stringParam(request.query, 'all');
    if (all !== undefined && all !== 'true' && all !== 'false') {
      throw badRequest('invalid_query', 'all is true or false.', { parameter: 'all' });
    }
    const requests = await listOpenRequests(
      ctx.db,
      caller.workspaceId,
      stringParam(request.query, 'tableId'),
      {
        all: all === 'true',
      },
    );
    // Like the table list: only the tables of the environments the caller may act in.
    return { requests: requests.filter((r) => inEnvironmentScope(caller, r.environmentLabel)) };
  });

  app.post(
    '/api/recertification-requests/:requestId/dismiss',
    async (request: FastifyRequest<{ Params: { requestId: string } }>) => {
      const caller = requireSession(await callerOf(ctx, request));
      const body: unknown = request.body ?? {};
      const reason =
        typeof body === 'object' && body !== null ? (body as { reason?: unknown }).reason : undefined;
      if (reason !== undefined && typeof reason !== 'string') {
        throw badRequest('invalid_request', 'reason must be a string.', { field: 'reason' });
      }
      return { request: await dismissRequest(ctx.db, ctx.clock, caller, request.params.requestId, reason) };
    },
  );
}
