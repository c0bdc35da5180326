// The service's three doors (spec §1, §4): REST under its stage, GraphQL and MCP at the origin. Each
// publishes its own base URL: the ready file, the start-up banner and the dashboard show them.
import type { AppContext } from './context.js';

/**
 * The body of a GraphQL or MCP request, at most: a query of the GraphQL schema or an MCP tool call is a few
 * kilobytes (the full introspection query is about 2 KB). REST's reads take their arguments in the URL,
 * which Node bounds at 16 KB; the server's 25 MB (for recertify's run results) would let one request of the
 * rate limit parse, validate and search with megabytes.
 */
export const DOOR_BODY_LIMIT_BYTES = 256 * 1024;

export const GRAPHQL_PATH = '/graphql';
export const MCP_PATH = '/mcp';

export interface Doors {
  /** `{origin}/{stage}`: the REST paths (`/api/…`) begin here. */
  rest: string;
  graphql: string;
  mcp: string;
}

/** The doors' base URLs on an origin of the server: the listening one unless told. */
export function doorsOf(ctx: AppContext, origin = ctx.baseUrl()): Doors {
  return { rest: `${origin}/${ctx.stage}`, graphql: `${origin}${GRAPHQL_PATH}`, mcp: `${origin}${MCP_PATH}` };
}
