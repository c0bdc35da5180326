// The GraphQL door ({origin}/graphql): graphql-js over the schema in src/contract/schema.graphql, each
// field a read of the data plane (data-reads.ts) for the request's DATA-API caller (Table.state and
// Table.contract, management-plane data, are kept for old clients and answer null with wrong_audience). Admission (the
// token, its audience, the rate limit) is the data plane's own, before the body is read: 401 and 429
// are HTTP answers in the contract's error body, as on REST.
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  FieldNode,
  FragmentDefinitionNode,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionNode,
  ValidationContext,
} from 'graphql';
import {
  buildSchema,
  execute,
  getOperationAST,
  GraphQLError,
  Kind,
  parse,
  specifiedRules,
  validate,
} from 'graphql';
import type { IntegrationCaller } from '../auth/caller.js';
import { requireDataApi } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { DOOR_BODY_LIMIT_BYTES, GRAPHQL_PATH } from '../doors.js';
import { HttpError, unauthorized } from '../errors.js';
import { chargeDataPlane, dataApiCaller } from '../records/access.js';
import type { PageRequest } from './data-reads.js';
import { DataReads } from './data-reads.js';
import type { TableRecord } from '../../contract/types.js';

/**
 * Root fields one request may ask for. Each root field that reads the data plane (not `__typename`,
 * `__schema`, `__type`) is one request of the token's rate limit, as the REST call it stands for: the
 * request's admission counted the first, the rest are counted before it runs.
 */
export const MAX_ROOT_FIELDS = 10;

/**
 * Tokens a query may hold: graphql-js stops parsing past them, before validation, whose cost grows with the
 * square of a query's fragments (10,000 tokens of fragments took ~440 ms to parse and validate, 1,000 ~20 ms).
 * The largest query a client sends, the full introspection query GraphiQL and code generators ask, is 184
 * tokens; ten root fields each selecting every field of this schema are about 300.
 */
export const MAX_QUERY_TOKENS = 1_000;

let schema: GraphQLSchema | undefined;

/** The schema of src/contract/schema.graphql (read once). */
export function graphqlSchema(): GraphQLSchema {
  schema ??= buildSchema(readFileSync(new URL('../../contract/schema.graphql', import.meta.url), 'utf8'));
  return schema;
}

interface GraphqlBody {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

export function graphqlRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post(
    GRAPHQL_PATH,
    {
      bodyLimit: DOOR_BODY_LIMIT_BYTES,
      onRequest: async (request, reply) => {
        request.caller = await dataApiCaller(ctx, request, reply);
      },
    },
    async (request, reply) => answer(ctx, requireDataApi(await callerOf(ctx, request)), request, reply),
  );
}

async function answer(
  ctx: AppContext,
  caller: IntegrationCaller,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const body = (request.body ?? {}) as GraphqlBody;
  if (typeof body.query !== 'string' || body.query.trim() === '')
    return refuse(reply, 'Send a JSON body {"query": "…", "variables": {…}}: query is missing.');
  if (body.variables != null && (typeof body.variables !== 'object' || Array.isArray(body.variables)))
    return refuse(reply, 'variables must be a JSON object.');
  if (body.operationName != null && typeof body.operationName !== 'string')
    return refuse(reply, 'operationName must be a string.');
  let document;
  try {
    document = parse(body.query, { maxTokens: MAX_QUERY_TOKENS });
  } catch (error) {
    return refuse(reply, tooManyTokens(error) ? TOO_MANY_TOKENS : (error as GraphQLError).message);
  }
  const problems = validate(graphqlSchema(), document, [
    ...specifiedRules,
    rootFieldLimit,
    oneResponseNamePerField,
  ]);
  if (problems.length > 0) return reply.code(400).send({ errors: problems.map((p) => p.toJSON()) });
  // The operation that runs: its reads count against the rate limit as REST requests would (graphql-js
  // answers an operation it cannot pick with an error of its own, reading nothing).
  const operation = getOperationAST(document, (body.operationName ?? undefined) as string | undefined);
  if (operation !== null && operation !== undefined) {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of document.definitions)
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    const reads = rootFields(operation.selectionSet.selections, (name) => fragments.get(name), {
      dataOnly: true,
    });
    await chargeDataPlane(ctx, caller, reply, reads - 1);
  }
  const reads = new DataReads(ctx, caller);
  const result = await execute({
    schema: graphqlSchema(),
    document,
    rootValue: {
      tables: () => reads.tables(),
      table: async (args: { id: string }) => ({ ...(await reads.table(args.id)), ...managementOnly }),
      records: async (args: PageRequest) => {
        const page = await reads.records(args);
        return { ...page, records: page.records.map(asRecord) };
      },
      record: async (args: { tableId: string; id: string }) =>
        asRecord(await reads.record(args.tableId, args.id)),
    },
    variableValues: (body.variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: (body.operationName ?? undefined) as string | undefined,
  });
  return reply.code(200).send({
    ...(result.data === undefined ? {} : { data: result.data }),
    ...(result.errors === undefined ? {} : { errors: result.errors.map(describe) }),
  });
}

/**
 * Table.state and Table.contract, kept (nullable, deprecated) so that old queries still validate: a table's
 * lifecycle state and semantic contract are certification data, the management plane's (spec §1), which the
 * DATA-API tokens this door takes do not read, as on REST (GET …/status and …/semantic-contract are 401
 * `wrong_audience` for them). Each is null with a field error; the rest of the query answers.
 */
const managementOnly = {
  state: () => {
    throw unauthorized(
      'wrong_audience',
      "Table.state is the table's lifecycle state, management-plane data a DATA-API token does not read; a member reads it with gds status <table>.",
    );
  },
  contract: () => {
    throw unauthorized(
      'wrong_audience',
      "Table.contract is the table's semantic contract, management-plane data a DATA-API token does not read; a member reads it with GET /api/tables/{tableId}/semantic-contract.",
    );
  },
};

/** The schema's Record: the id, and every value (the id included) under `values`. */
const asRecord = (record: TableRecord) => ({ id: record.id, values: record });

const TOO_MANY_TOKENS = `A query may hold at most ${MAX_QUERY_TOKENS.toLocaleString('en-US')} tokens (names, punctuation, values); this one holds more. Split it into several requests.`;

/** graphql-js's own refusal past maxTokens ("Document contains more that N tokens"). */
const tooManyTokens = (error: unknown) =>
  error instanceof GraphQLError && error.message.includes(` ${MAX_QUERY_TOKENS} tokens`);

function refuse(reply: FastifyReply, message: string) {
  return reply.code(400).send({ errors: [{ message }] });
}

/** A refused read carries the data plane's code and status; anything else is not described. */
function describe(error: GraphQLError) {
  const cause = error.originalError;
  if (cause instanceof HttpError) {
    if (cause.status >= 500) throw cause;
    return {
      message: cause.message,
      ...(error.path === undefined ? {} : { path: error.path }),
      extensions: { code: cause.code, status: cause.status },
    };
  }
  if (cause !== undefined && !(cause instanceof GraphQLError)) throw cause;
  return error.toJSON();
}

/**
 * The root fields of a selection counted as executed: the fields of its fragments (spread or inline) too,
 * each spread as often as it is spread; `dataOnly` leaves out the introspection fields (`__typename`,
 * `__schema`, `__type`), which read nothing of the data plane. Counting stops past MAX_ROOT_FIELDS, so a
 * fragment spread a thousand times costs no more than the limit to count; a fragment within its own
 * spreading (a cycle, which graphql-js's own rule refuses) is not entered again.
 */
function rootFields(
  selections: readonly SelectionNode[],
  fragment: (name: string) => FragmentDefinitionNode | null | undefined,
  options: { dataOnly: boolean },
): number {
  const count = (within: readonly SelectionNode[], seen: number, entered: ReadonlySet<string>): number => {
    let total = seen;
    for (const selection of within) {
      if (total > MAX_ROOT_FIELDS) break;
      if (selection.kind === Kind.FIELD) {
        if (!options.dataOnly || !selection.name.value.startsWith('__')) total += 1;
      } else if (selection.kind === Kind.INLINE_FRAGMENT)
        total = count(selection.selectionSet.selections, total, entered);
      else {
        const name = selection.name.value;
        const spread = entered.has(name) ? undefined : fragment(name);
        if (spread !== null && spread !== undefined)
          total = count(spread.selectionSet.selections, total, new Set([...entered, name]));
      }
    }
    return total;
  };
  return count(selections, 0, new Set());
}

/** At most MAX_ROOT_FIELDS root fields in each operation (aliases and fragments' fields included). */
function rootFieldLimit(context: ValidationContext) {
  return {
    OperationDefinition(node: OperationDefinitionNode) {
      const fields = rootFields(node.selectionSet.selections, (name) => context.getFragment(name), {
        dataOnly: false,
      });
      if (fields > MAX_ROOT_FIELDS)
        context.reportError(
          new GraphQLError(
            `A request may ask for at most ${MAX_ROOT_FIELDS} root fields (its fragments' included); this one asks for more.`,
            { nodes: [node] },
          ),
        );
    },
  };
}

/**
 * Below the root, each field once a selection set: the fields there take no arguments, so an alias could only
 * repeat the same value, and `records { records { a1: values … a9999: values } }` would answer each record
 * thousands of times (70 MB from a 600 KB query) under one request of the rate limit. Fields met through
 * fragments (spread or inline) on the same object count with the selection set's own.
 */
function oneResponseNamePerField(context: ValidationContext) {
  const collect = (
    selections: readonly SelectionNode[],
    names: Map<string, Set<string>>,
    entered: Set<string>,
  ): void => {
    for (const selection of selections) {
      if (selection.kind === Kind.FIELD) {
        const field = selection.name.value;
        const responses = names.get(field) ?? new Set<string>();
        responses.add(selection.alias?.value ?? field);
        names.set(field, responses);
      } else if (selection.kind === Kind.INLINE_FRAGMENT)
        collect(selection.selectionSet.selections, names, entered);
      else {
        // A fragment adds the same names however often it is spread: each is entered once (no cycle, and
        // fragments spreading each other twice over cost no more than their text).
        const name = selection.name.value;
        const fragment = entered.has(name) ? undefined : context.getFragment(name);
        entered.add(name);
        if (fragment !== null && fragment !== undefined)
          collect(fragment.selectionSet.selections, names, entered);
      }
    }
  };
  return {
    Field(node: FieldNode) {
      if (node.selectionSet === undefined) return;
      const names = new Map<string, Set<string>>();
      collect(node.selectionSet.selections, names, new Set());
      for (const [field, responses] of names)
        if (responses.size > 1)
          context.reportError(
            new GraphQLError(
              `Field "${field}" is asked for under ${responses.size} names (${[...responses].slice(0, 3).join(', ')}${responses.size > 3 ? ', …' : ''}) within "${node.name.value}": below the root, ask for each field once.`,
              { nodes: [node] },
            ),
          );
    },
  };
}
