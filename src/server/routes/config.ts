// Workspace configuration (`gds config list|set|history`): any member reads; ADMIN or OWNER sets.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit.js';
import { personOfRole, requirePerson } from '../certification/access.js';
import {
  configHistory,
  listConfig,
  requireConfigKey,
  requireConfigValue,
  setConfig,
} from '../certification/config.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { badRequest } from '../errors.js';

type KeyRequest = FastifyRequest<{ Params: { key: string }; Body: unknown }>;

export function configRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/config', async (request) => {
    const caller = requirePerson(await callerOf(ctx, request));
    return { config: await listConfig(ctx.db, caller.workspaceId) };
  });

  const configurer = personOfRole('ADMIN', 'change the workspace configuration');
  app.put('/api/config/:key', guardBeforeBody(configurer), async (request: KeyRequest) => {
    const caller = configurer(await callerOf(ctx, request));
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body) || !('value' in body)) {
      throw badRequest('invalid_body', 'Send {"value": "<new value>"}.');
    }
    const key = requireConfigKey(request.params.key);
    const value = requireConfigValue(key, (body as { value: unknown }).value);
    return ctx.db.transaction(async (tx) => {
      const { oldValue, entry, changed } = await setConfig(tx, ctx.clock, {
        workspaceId: caller.workspaceId,
        key,
        value,
        actor: caller.userId,
      });
      if (!changed) return { ...entry, changed };
      await recordAudit(tx, ctx.clock, {
        workspaceId: caller.workspaceId,
        userId: caller.userId,
        action: 'WORKSPACE_CONFIG_CHANGED',
        resource: 'workspace_config',
        details: { key, oldValue, newValue: entry.value },
      });
      return { ...entry, changed };
    });
  });

  app.get('/api/config/:key/history', async (request: KeyRequest) => {
    const caller = requirePerson(await callerOf(ctx, request));
    const key = requireConfigKey(request.params.key);
    return { key, changes: await configHistory(ctx.db, caller.workspaceId, key) };
  });
}
