// Who may use the gate endpoints: a person (session JWT or static CLI token, never an integration
// token) whose environment scope covers the table's environment.
import type { FastifyRequest } from 'fastify';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import { requireEnvironment } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import type { GateTable } from './table.js';
import { loadGateTable } from './table.js';

export async function gateCaller(ctx: AppContext, request: FastifyRequest): Promise<SessionCaller> {
  return requireSession(await callerOf(ctx, request));
}

/** The caller and the table, after both checks. */
export async function gateTableFor(
  ctx: AppContext,
  request: FastifyRequest<{ Params: { tableId: string } }>,
): Promise<{ caller: SessionCaller; table: GateTable }> {
  const caller = await gateCaller(ctx, request);
  return { caller, table: await gateTableOf(ctx, caller, request.params.tableId) };
}

/** The table, once the caller's environments are checked to cover it. */
export async function gateTableOf(
  ctx: AppContext,
  caller: SessionCaller,
  tableId: string,
): Promise<GateTable> {
  const table = await loadGateTable(ctx.db, caller.workspaceId, tableId);
  requireEnvironment(caller, table.environmentLabel, table.id);
  return table;
}
