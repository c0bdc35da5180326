// Who may use the gate endpoints: a person (session JWT or static CLI token, never an integration
// token) whose environment scope covers the table's environment.
import type { FastifyRequest } from 'fastify';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { forbidden } from '../errors.js';
import type { GateTable } from './table.js';
import { loadGateTable } from './table.js';

export async function gateCaller(ctx: AppContext, request: FastifyRequest): Promise<SessionCaller> {
  return requireSession(await callerOf(ctx, request));
}

export function assertEnvironment(caller: SessionCaller, environmentLabel: string, tableId: string): void {
  if (caller.envScope.includes(environmentLabel) || caller.envScope.includes('*')) return;
  throw forbidden(
    'environment_not_in_scope',
    `Table ${tableId} is in environment ${environmentLabel}, outside your scope (${caller.envScope.join(', ')}); ask a workspace admin to widen it.`,
    { tableId, environmentLabel, envScope: caller.envScope },
  );
}

/** The caller and the table, after both checks. */
export async function gateTableFor(
  ctx: AppContext,
  request: FastifyRequest<{ Params: { tableId: string } }>,
): Promise<{ caller: SessionCaller; table: GateTable }> {
  const caller = await gateCaller(ctx, request);
  const table = await loadGateTable(ctx.db, caller.workspaceId, request.params.tableId);
  assertEnvironment(caller, table.environmentLabel, table.id);
  return { caller, table };
}
