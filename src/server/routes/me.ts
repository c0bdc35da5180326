// `GET /api/me`: who the caller is, whatever credential it sent (session JWT, static CLI token or an
// integration token): user, workspace, role, the token's kind, audience and scopes, and the
// environments it can act in (its own for an environment-scoped token, else the member's scope).
import type { FastifyInstance } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { ANY_ENVIRONMENT, envScopeAllows } from '../../core/scopes.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { doorsOf } from '../doors.js';
import { unauthorized } from '../errors.js';

export function meRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/me', async (request) => {
    const caller = await callerOf(ctx, request);
    const [row] = await ctx.db.query<{
      email: string;
      display_name: string;
      workspace_name: string;
      role: Schema<'Role'>;
      env_scope: string[];
    }>(
      `SELECT u.email, u.display_name, w.name AS workspace_name, m.role, m.env_scope
         FROM gds.memberships m JOIN gds.users u ON u.id = m.user_id JOIN gds.workspaces w ON w.id = m.workspace_id
        WHERE m.user_id = $1 AND m.workspace_id = $2 AND m.active`,
      [caller.userId, caller.workspaceId],
    );
    if (!row) throw unauthorized('not_a_member', 'This account is not an active member of the workspace.');
    const token: Schema<'Me'>['token'] =
      caller.kind === 'session'
        ? {
            kind: caller.via === 'jwt' ? 'session' : 'cli_token',
            audience: 'session',
            scopes: [],
            environment: null,
          }
        : {
            kind: 'integration',
            audience: caller.audience,
            scopes: caller.scopes,
            environment: caller.env,
          };
    const environments =
      caller.kind === 'integration' && caller.env !== ANY_ENVIRONMENT
        ? [caller.env].filter((env) => envScopeAllows(row.env_scope, env))
        : row.env_scope;
    const me: Schema<'Me'> = {
      user: { id: caller.userId, email: row.email, displayName: row.display_name },
      workspace: { id: caller.workspaceId, name: row.workspace_name },
      role: row.role,
      token,
      effectiveEnvironmentScope: environments,
      doors: doorsOf(ctx, ctx.publicOrigin()),
    };
    return me;
  });
}
