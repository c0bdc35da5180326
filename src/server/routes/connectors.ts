// `connectors list`: the workspace's connectors (§2.8). A person's session JWT or `cli_` token.
import type { FastifyInstance } from 'fastify';
import { requireSession } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';

export function connectorRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/connectors', async (request) => {
    const caller = requireSession(await callerOf(ctx, request));
    const connectors = await ctx.db.query<{
      id: string;
      name: string;
      type: string;
      status: string;
      environmentLabel: string;
    }>(
      `SELECT id, name, type, status, environment_label AS "environmentLabel"
         FROM gds.connectors WHERE workspace_id = $1 ORDER BY created_at, name`,
      [caller.workspaceId],
    );
    return { connectors };
  });
}
