// Management plane, workspace area: audit log (§4.4) and members (§4.5). A MANAGEMENT token with
// the scope, or any active member's session; always the caller's own workspace.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditLogPage, MemberList, Role } from '../../contract/types.js';
import { requireManagement } from '../auth/caller.js';
import { listAudit } from '../audit.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import type { Query } from '../query.js';
import { intParam, rejectUnknownParams, stringParam, timestampParam } from '../query.js';

const ROLE_ORDER = "CASE m.role WHEN 'OWNER' THEN 1 WHEN 'ADMIN' THEN 2 WHEN 'STEWARD' THEN 3 ELSE 4 END";

export function workspaceRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/workspace/audit-log', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireManagement(await callerOf(ctx, request), 'workspace:read:audit', true);
    const query = request.query;
    rejectUnknownParams(query, ['limit', 'cursor', 'eventType', 'since']);
    const limit = intParam(query, 'limit', 1, 200, 50);
    const cursor = stringParam(query, 'cursor');
    const eventType = stringParam(query, 'eventType');
    const since = timestampParam(query, 'since');
    const page: AuditLogPage = await listAudit(ctx.db, caller.workspaceId, {
      limit,
      ...(cursor === undefined ? {} : { cursor }),
      ...(eventType === undefined ? {} : { eventType }),
      ...(since === undefined ? {} : { since }),
    });
    return page;
  });

  app.get('/api/workspace/members', async (request) => {
    const caller = requireManagement(await callerOf(ctx, request), 'workspace:read:members', true);
    const rows = await ctx.db.query<{ user_id: string; email: string; role: Role; env_scope: string[] }>(
      `SELECT m.user_id, u.email, m.role, m.env_scope
         FROM gds.memberships m JOIN gds.users u ON u.id = m.user_id
        WHERE m.workspace_id = $1 AND m.active AND NOT u.platform_operator
        ORDER BY ${ROLE_ORDER}, u.email`,
      [caller.workspaceId],
    );
    const list: MemberList = {
      members: rows.map((r) => ({ userId: r.user_id, email: r.email, role: r.role, envScope: r.env_scope })),
    };
    return list;
  });
}
