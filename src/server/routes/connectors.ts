// `connectors list`: the workspace's connectors (§2.8), and the warehouse objects one reads (what a
// definition's source may name, so `gds plan` refuses what the registration would). A person's session JWT
// or `cli_` token, or a MANAGEMENT token that may register definitions (which name a connector).
import type { FastifyInstance } from 'fastify';
import { requireManagement } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { loadConnector } from '../governance/definitions.js';
import { listWarehouseObjects } from '../warehouse.js';

export function connectorRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/connectors', async (request) => {
    const caller = requireManagement(await callerOf(ctx, request), 'workspace:write:definition', true);
    // The contract's order, targetConnector's: a client takes an environment's first ACTIVE one as a promotion's.
    const connectors = await ctx.db.query<{
      id: string;
      name: string;
      type: string;
      status: string;
      environmentLabel: string;
    }>(
      `SELECT id, name, type, status, environment_label AS "environmentLabel"
         FROM gds.connectors WHERE workspace_id = $1 ORDER BY created_at, id`,
      [caller.workspaceId],
    );
    return { connectors };
  });

  app.get<{ Params: { connectorId: string } }>('/api/connectors/:connectorId/objects', async (request) => {
    const caller = requireManagement(await callerOf(ctx, request), 'workspace:write:definition', true);
    const connector = await loadConnector(ctx.db, caller.workspaceId, request.params.connectorId);
    const objects = await listWarehouseObjects(ctx.db, [{ id: connector.id, schema: connector.schema }]);
    return {
      connectorId: connector.id,
      schema: connector.schema,
      objects: objects.map(({ source, columns }) => ({ source, columns })),
    };
  });
}
