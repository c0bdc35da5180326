// The MCP door ({origin}/mcp): the Model Context Protocol over Streamable HTTP with the official SDK,
// stateless (a server and a transport per POST, JSON answers, no session). Its tools are reads of the data
// plane (data-reads.ts) for the request's DATA-API caller; admission (the token, its audience, the rate
// limit) is the data plane's own, before the body is read: 401 and 429 are HTTP answers, as on REST.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import { requireDataApi } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { DOOR_BODY_LIMIT_BYTES, MCP_PATH } from '../doors.js';
import { badRequest, HttpError } from '../errors.js';
import { dataApiCaller } from '../records/access.js';
import { DataReads, MAX_PAGE } from './data-reads.js';

/** The tools, as tools/list names them (docs/doors.md lists them too). */
export const MCP_TOOLS = ['list_tables', 'describe_table', 'list_records', 'get_record'] as const;

export function mcpRoutes(app: FastifyInstance, ctx: AppContext): void {
  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    request.caller = await dataApiCaller(ctx, request, reply);
  };
  app.post(MCP_PATH, { onRequest: admit, bodyLimit: DOOR_BODY_LIMIT_BYTES }, async (request, reply) => {
    // One message a request: a JSON-RPC batch would be many reads under the one rate-limit unit its request
    // took (the MCP revision of 2025-06-18 has no batches; the SDK's transport still takes up to 100).
    if (Array.isArray(request.body))
      return reply.code(400).send({
        jsonrpc: '2.0',
        error: {
          code: -32600,
          message:
            'Invalid Request: send one JSON-RPC message a request (no batches); each is one request of the rate limit.',
        },
        id: null,
      });
    const reads = new DataReads(ctx, requireDataApi(await callerOf(ctx, request)));
    const server = mcpServer(reads, request.log);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    // The SDK writes the answer itself; the headers set so far (request id, rate limit) go with it.
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } finally {
      request.handled?.();
    }
  });
  // No server-to-client stream: the server is stateless (the transport's spec lets it answer 405).
  app.get(MCP_PATH, { onRequest: admit }, async (_request, reply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST requests.' },
        id: null,
      }),
  );
}

function mcpServer(reads: DataReads, log: FastifyBaseLogger): McpServer {
  const result = (read: () => Promise<object>) => toolResult(read, log);
  const server = new McpServer({ name: 'gds', version: '0.1.0' });
  const tableId = z.string().describe('The table id (tbl_…), as list_tables shows it');
  // Each tool takes only its own arguments, as REST refuses an unknown query parameter: one dropped in
  // silence (`first`, `page`) would answer a page other than the one asked for. tools/list says so
  // (additionalProperties: false).
  server.registerTool(
    'list_tables',
    {
      description:
        'The tables this token grants: id, name, environment, custody mode and the permissions (read, write).',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true },
    },
    async () => result(async () => ({ tables: await reads.tables() })),
  );
  server.registerTool(
    'describe_table',
    {
      description:
        'A table the token grants: its id, name, environment, custody mode and columns (name, type, required).',
      inputSchema: z.strictObject({ tableId }),
      annotations: { readOnlyHint: true },
    },
    async (args) => result(() => reads.table(args.tableId)),
  );
  server.registerTool(
    'list_records',
    {
      description: `A page of a table's records by key: pass the previous page's nextCursor as cursor. At most ${MAX_PAGE} a page; total on the first page only.`,
      inputSchema: z.strictObject({
        tableId,
        // Its range is checked by the read, so a refusal is the data plane's invalid_query, not the SDK's text.
        limit: z
          .number()
          .optional()
          .describe(`Records on the page, an integer from 1 to ${MAX_PAGE} (default 50)`),
        cursor: z.string().optional().describe("The previous page's nextCursor"),
        search: z.string().optional().describe('Text the record holds in a text column'),
      }),
      annotations: { readOnlyHint: true },
    },
    async (args) =>
      result(() => {
        const { limit } = args;
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE))
          throw badRequest('invalid_query', `limit must be an integer from 1 to ${MAX_PAGE}; got ${limit}.`, {
            parameter: 'limit',
          });
        return reads.records({
          tableId: args.tableId,
          first: limit,
          after: args.cursor,
          search: args.search,
        });
      }),
  );
  server.registerTool(
    'get_record',
    {
      description: 'One record of a table, by its id.',
      inputSchema: z.strictObject({ tableId, recordId: z.string().describe('The record id') }),
      annotations: { readOnlyHint: true },
    },
    async (args) => result(() => reads.record(args.tableId, args.recordId)),
  );
  return server;
}

/**
 * A tool's answer as JSON text and structured content; a refused read (403, 404, 400) is a tool error with
 * the data plane's code and message. Any other failure is logged and answered as `internal_error` with no
 * detail: the SDK would put the error's own message (a database's, with its SQL) in the tool's answer.
 */
async function toolResult(read: () => Promise<object>, log: FastifyBaseLogger): Promise<CallToolResult> {
  try {
    const value = await read();
    return {
      content: [{ type: 'text', text: JSON.stringify(value) }],
      structuredContent: value as Record<string, unknown>,
    };
  } catch (error) {
    const refused = error instanceof HttpError && error.status < 500;
    if (!refused) log.error({ err: error }, 'MCP tool failed');
    const answer = refused
      ? { code: error.code, message: error.message }
      : { code: 'internal_error', message: 'The server failed; see its log.' };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: answer }) }] };
  }
}
