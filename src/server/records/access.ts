// Who may use the data plane, and on which tables: one implementation for every door that serves rows
// (REST's table endpoints, GraphQL, MCP). A request is authenticated and counted against its token's rate
// bucket before anything else; only a DATA-API token gets further, and only to the tables its grant
// names, in its environment.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TablePermission } from '../../core/scopes.js';
import type { Caller, IntegrationCaller } from '../auth/caller.js';
import { requireDataApi } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { authenticate } from '../context.js';
import { HttpError } from '../errors.js';
import { findTables } from '../governance/tables.js';
import { rateLimited, rateLimitHeaders } from '../rate-limit.js';
import type { GovernedTable } from './tables.js';
import { authorizeTable, loadActiveTable } from './tables.js';

/** The rate bucket of an integration token: every door's requests with it count in this one window. */
const tokenBucket = (tokenId: string) => `token:${tokenId}`;

/**
 * Authenticates a data-plane request and takes one request from its rate bucket (X-RateLimit-* on the
 * reply, 401 and 429 included); throws 429 past the limit, then the authentication's own failure.
 */
export async function admitDataPlane(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Caller> {
  let caller: Caller | undefined;
  let failure: unknown;
  try {
    caller = await authenticate(ctx, request);
  } catch (error) {
    failure = error;
  }
  // A caller that is not an integration token counts against its address, not against a bucket of its
  // own per (bogus) credential.
  const key = caller?.kind === 'integration' ? tokenBucket(caller.tokenId) : `address:${request.ip}`;
  const state = await ctx.limiter.take(key);
  const headers = rateLimitHeaders(state, ctx.clock());
  reply.headers(headers);
  if (!state.allowed) {
    throw new HttpError(
      429,
      'rate_limited',
      `Rate limit of ${state.limit} requests per minute reached; retry after ${headers['retry-after']} seconds.`,
      { limit: state.limit },
      headers,
    );
  }
  if (failure !== undefined || caller === undefined) throw failure;
  return caller;
}

/**
 * Counts `units` more requests of an admitted caller's rate bucket (a GraphQL request that reads several
 * times: each read past the first its admission counted), with the X-RateLimit-* headers; 429 past the limit.
 */
export async function chargeDataPlane(
  ctx: AppContext,
  caller: IntegrationCaller,
  reply: FastifyReply,
  units: number,
): Promise<void> {
  if (units < 1) return;
  const state = await ctx.limiter.take(tokenBucket(caller.tokenId), units);
  const now = ctx.clock();
  reply.headers(rateLimitHeaders(state, now));
  if (!state.allowed) throw rateLimited(state, now, 'requests (a GraphQL root field is one)');
}

/** A data-plane request's DATA-API caller: admitted (rate limit) and of the right audience, else 401. */
export async function dataApiCaller(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<IntegrationCaller> {
  return requireDataApi(await admitDataPlane(ctx, request, reply));
}

/** The active table `tableId` when the caller's grant reaches it with `permission` (404, 403 otherwise). */
export async function grantedTable(
  ctx: AppContext,
  caller: IntegrationCaller,
  tableId: string,
  permission: TablePermission,
): Promise<GovernedTable> {
  const table = await loadActiveTable(ctx.db, caller.workspaceId, tableId);
  authorizeTable(caller, table, permission);
  return table;
}

export interface GrantedTableRow {
  id: string;
  name: string;
  environment: string;
  mode: GovernedTable['mode'];
  permissions: TablePermission[];
}

/**
 * The active tables the caller's grant names, each with the permissions granted, in its environment
 * (a table the token may not act on is not listed).
 */
export async function grantedTables(ctx: AppContext, caller: IntegrationCaller): Promise<GrantedTableRow[]> {
  const rows: GrantedTableRow[] = [];
  for (const table of await findTables(ctx.db, caller.workspaceId, Object.values(caller.tableIds))) {
    const permissions = (['read', 'write'] as const).filter((permission) => {
      try {
        authorizeTable(caller, table, permission);
        return true;
      } catch (error) {
        if (error instanceof HttpError && error.status === 403) return false;
        throw error;
      }
    });
    if (permissions.length === 0) continue;
    rows.push({
      id: table.id,
      name: table.name,
      environment: table.environmentLabel,
      mode: table.mode,
      permissions,
    });
  }
  return rows.sort((a, b) => a.name.localeCompare(b.name));
}
