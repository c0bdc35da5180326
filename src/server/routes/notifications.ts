// The steward's queue (`gds review`, the dashboard's "Waiting for review"): the open notifications of
// the tables submitted for review, for a person of role STEWARD and above, paged by the order they were filed in.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { roleAtLeast } from '../../core/scopes.js';
import { requireSession } from '../auth/caller.js';
import { visibleEnvironments } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { forbidden } from '../errors.js';
import { countQueue, listQueuePage } from '../governance/notifications.js';
import { decodeSeqCursor, encodeListCursor } from '../list-cursor.js';
import type { Query } from '../query.js';
import { intParam, rejectUnknownParams, stringParam } from '../query.js';

export function notificationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/notifications', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    if (!roleAtLeast(caller.role, 'STEWARD')) {
      throw forbidden(
        'steward_role_required',
        `The review queue is a steward's: it needs role STEWARD or above; your role is ${caller.role}.`,
        { requiredRole: 'STEWARD', role: caller.role },
      );
    }
    rejectUnknownParams(request.query, ['limit', 'cursor']);
    const cursor = stringParam(request.query, 'cursor');
    // As the table list: without limit or cursor every notification in one answer; with either, pages by key.
    const paged = cursor !== undefined || request.query.limit !== undefined;
    const query = {
      environments: visibleEnvironments(caller),
      limit: paged ? intParam(request.query, 'limit', 1, 1000, 100) : undefined,
      after: cursor === undefined ? undefined : decodeSeqCursor(cursor),
    };
    const { entries, next } = await listQueuePage(ctx.db, caller.workspaceId, query);
    if (!paged) return { notifications: entries };
    return {
      notifications: entries,
      nextCursor: next === null ? null : encodeListCursor(next),
      ...(cursor === undefined
        ? { total: next === null ? entries.length : await countQueue(ctx.db, caller.workspaceId, query) }
        : {}),
    };
  });
}
