// The GraphQL and MCP doors ({origin}/graphql, {origin}/mcp): real clients (a GraphQL POST, the MCP SDK's
// client over Streamable HTTP) read what a DATA-API token grants, under the data plane's scopes,
// environment check and rate limit; every other credential is 401, as on REST's table endpoints.
import { readFileSync } from 'node:fs';
import { getIntrospectionQuery } from 'graphql';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_TOOLS } from '../../src/server/doors/mcp.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';
import { createModeBTable } from '../helpers/records.js';

let server: TestServer;
let reader: string;
let crm: string;
const refused: Record<string, string | undefined> = {};

beforeAll(async () => {
  server = await startTestServer();
  crm = server.table('crm_contacts').id;
  const issued = await server.issueToken('OWNER', {
    name: 'doors',
    env: 'dev',
    scopes: [{ tableId: crm, permissions: ['read'] }],
  });
  reader = issued.tokens.accessToken;
  refused['no token'] = undefined;
  refused['tf_ client token'] = issued.clientToken;
  refused['session JWT'] = server.user('OWNER').accessToken;
  refused['cli_ token'] = server.user('OWNER').cliToken;
  refused['MANAGEMENT token'] = (
    await server.issueToken('OWNER', { name: 'mgmt', env: '*', scopes: ['workspace:read:audit'] })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

async function graphql(
  token: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
  on: TestServer = server,
) {
  return on.request('POST', `${on.origin}/graphql`, {
    ...(token === undefined ? {} : { token }),
    body: { query, ...(variables ? { variables } : {}) },
  });
}

async function mcpClient(token: string, on: TestServer = server): Promise<Client> {
  const client = new Client({ name: 'doors-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${on.origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/** A tool's structured answer (the SDK's client types it loosely). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into answers freely
const structured = (answer: unknown): any => (answer as { structuredContent: unknown }).structuredContent;

describe('the doors’ base URLs', () => {
  it('are published in the ready file: REST under the stage, GraphQL and MCP at the origin', () => {
    expect(server.ready.doors).toEqual({
      rest: `${server.origin}/v1`,
      graphql: `${server.origin}/graphql`,
      mcp: `${server.origin}/mcp`,
    });
    expect(server.ready.baseUrl).toBe(server.ready.doors.rest);
  });

  it('GraphQL and MCP have no stage segment: under the stage they are not served', async () => {
    const staged = await server.request('POST', '/graphql', {
      token: reader,
      body: { query: '{ tables { id } }' },
    });
    expect(staged.status).toBe(404);
  });
});

describe('GraphQL', () => {
  it('lists the granted tables, a table’s columns, records by cursor and one record', async () => {
    const tables = await graphql(reader, '{ tables { id name environment mode permissions } }');
    expect(tables.status).toBe(200);
    expect(tables.body).toEqual({
      data: {
        tables: [
          { id: crm, name: 'crm_contacts', environment: 'dev', mode: 'MODE_B', permissions: ['read'] },
        ],
      },
    });
    expect(tables.headers.get('x-ratelimit-limit')).not.toBeNull();

    const table = await graphql(
      reader,
      'query($id: ID!) { table(id: $id) { name columns { name type required } } }',
      {
        id: crm,
      },
    );
    const rest = await server.request('GET', `/api/tables/${crm}/columns`, { token: reader });
    expect(table.body.data.table).toEqual({ name: 'crm_contacts', columns: rest.body.columns });

    const page = `query($t: ID!, $after: String) { records(tableId: $t, first: 2, after: $after) { records { id values } nextCursor total } }`;
    const first = await graphql(reader, page, { t: crm });
    expect(first.body.errors).toBeUndefined();
    const all = await server.request('GET', `/api/tables/${crm}/records?limit=100`, { token: reader });
    expect(first.body.data.records.total).toBe(all.body.total);
    expect(first.body.data.records.records).toHaveLength(2);
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const answer = await graphql(reader, page, { t: crm, after });
      seen.push(...answer.body.data.records.records.map((r: { id: string }) => r.id));
      after = answer.body.data.records.nextCursor;
    } while (after !== null);
    expect(seen).toEqual(all.body.records.map((r: { id: string }) => r.id));

    const one = await graphql(
      reader,
      'query($t: ID!, $id: ID!) { record(tableId: $t, id: $id) { id values } }',
      {
        t: crm,
        id: seen[0],
      },
    );
    expect(one.body.data.record).toEqual({ id: seen[0], values: all.body.records[0] });
  });

  it('a DATA-API token reads no lifecycle state or contract (management plane): null and wrong_audience 401 for those fields, the rest answers', async () => {
    const answer = await graphql(
      reader,
      'query($id: ID!) { tables { id } table(id: $id) { name state columns { name } contract { grain meaning certifiedAt } } }',
      { id: crm },
    );
    expect(answer.status).toBe(200);
    expect(answer.body.data.tables).toEqual([{ id: crm }]);
    const rest = await server.request('GET', `/api/tables/${crm}/columns`, { token: reader });
    expect(answer.body.data.table).toEqual({
      name: 'crm_contacts',
      state: null,
      columns: rest.body.columns.map((c: { name: string }) => ({ name: c.name })),
      contract: null,
    });
    const errors = [...answer.body.errors].sort((a, b) => a.path.join('.').localeCompare(b.path.join('.')));
    expect(errors).toMatchObject([
      { path: ['table', 'contract'], extensions: { code: 'wrong_audience', status: 401 } },
      { path: ['table', 'state'], extensions: { code: 'wrong_audience', status: 401 } },
    ]);
    // crm_contacts is certified with a live contract; none of it reaches the DATA-API token, as on REST.
    expect(JSON.stringify(answer.body)).not.toMatch(/CERTIFIED|grain/);
    for (const path of [`/api/tables/${crm}/status`, `/api/tables/${crm}/semantic-contract`]) {
      const refusedRest = await server.request('GET', path, { token: reader });
      expect(refusedRest.status, path).toBe(401);
      expect(refusedRest.body.error.code, path).toBe('wrong_audience');
    }
  });

  it('keeps state and contract in the schema for old clients: nullable and deprecated', async () => {
    const answer = await graphql(
      reader,
      '{ __type(name: "Table") { fields(includeDeprecated: true) { name isDeprecated deprecationReason type { kind } } } }',
    );
    const fields = Object.fromEntries(
      answer.body.data.__type.fields.map((f: { name: string }) => [f.name, f]),
    );
    for (const name of ['state', 'contract']) {
      expect(fields[name], name).toMatchObject({
        isDeprecated: true,
        type: { kind: expect.not.stringMatching(/NON_NULL/) },
      });
      expect(fields[name].deprecationReason, name).toMatch(/DATA-API/);
    }
    expect(fields.columns.isDeprecated).toBe(false);
  });

  it('a table outside the grant is an error with the data plane’s code and status, not data', async () => {
    const customers = server.table('customers').id;
    const answer = await graphql(reader, 'query($id: ID!) { table(id: $id) { name } }', { id: customers });
    expect(answer.status).toBe(200);
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors[0]).toMatchObject({
      path: ['table'],
      extensions: { code: 'table_not_in_scope', status: 403 },
    });
    const unknown = await graphql(reader, '{ record(tableId: "tbl_nope", id: "x") { id } }');
    expect(unknown.body.errors[0].extensions).toEqual({ code: 'table_not_found', status: 404 });
  });

  it('pages at most 100 records, as REST’s limit: first 100 is served, 0 and 101 are the data plane’s invalid_query', async () => {
    const page = 'query($t: ID!, $n: Int) { records(tableId: $t, first: $n) { records { id } } }';
    const most = await graphql(reader, page, { t: crm, n: 100 });
    expect(most.status).toBe(200);
    const rest = await server.request('GET', `/api/tables/${crm}/records?limit=100`, { token: reader });
    expect(most.body.data.records.records).toHaveLength(rest.body.records.length);
    for (const n of [0, 101]) {
      const refusedPage = await graphql(reader, page, { t: crm, n });
      expect(refusedPage.body.data, String(n)).toBeNull();
      expect(refusedPage.body.errors[0]).toMatchObject({
        path: ['records'],
        message: expect.stringContaining('first must be an integer from 1 to 100'),
        extensions: { code: 'invalid_query', status: 400 },
      });
    }
  });

  it('a query that does not parse or asks for a field that does not exist is 400', async () => {
    expect((await graphql(reader, '{ tables { ')).status).toBe(400);
    const unknown = await graphql(reader, '{ tables { secret } }');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toContain('secret');
    const many = `{ ${Array.from({ length: 11 }, (_, i) => `t${i}: tables { id }`).join(' ')} }`;
    expect((await graphql(reader, many)).status).toBe(400);
  });

  it('counts the root fields of fragments, spread or inline, against the limit of 10', async () => {
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `t${i}: tables { id }`).join(' ');
    const inline = await graphql(reader, `{ ... on Query { ${fields(30)} } }`);
    expect(inline.status).toBe(400);
    expect(inline.body.errors[0].message).toContain('at most 10 root fields');
    const spread = await graphql(reader, `query { ...F } fragment F on Query { ${fields(6)} }`);
    expect(spread.status).toBe(200);
    const twice = await graphql(
      reader,
      `query { ...F ...G } fragment F on Query { ${fields(6)} } fragment G on Query { ...F }`,
    );
    expect(twice.status).toBe(400);
    // A fragment spreading itself is refused by graphql-js's own rule, not counted forever.
    const cycle = await graphql(reader, 'query { ...F } fragment F on Query { tables { id } ...F }');
    expect(cycle.status).toBe(400);
    expect(cycle.body.errors.map((e: { message: string }) => e.message).join(' ')).toContain('F');
  });

  it('answers each record once: below the root a field is asked for under one name; the body and tokens are bounded', async () => {
    const records = (selection: string, fragments = '') =>
      graphql(
        reader,
        `query($t: ID!) { records(tableId: $t, first: 100) { records { ${selection} } } } ${fragments}`,
        { t: crm },
      );
    const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: values`).join(' ');
    const amplified = await records(aliases);
    expect(amplified.status).toBe(400);
    expect(amplified.body.data).toBeUndefined();
    expect(amplified.body.errors[0].message).toContain('Field "values" is asked for under 100 names');
    // Through fragments, spread or inline, as well; a field asked twice under its own name is still one.
    const spread = await records('values ...V', 'fragment V on Record { again: values }');
    expect(spread.status).toBe(400);
    expect((await records('id ... on Record { other: id }')).status).toBe(400);
    const plain = await records('id values id ...V ...V', 'fragment V on Record { values }');
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    // The schema's introspection, as GraphiQL and code generators ask it, is served.
    const introspection = await graphql(reader, getIntrospectionQuery({ descriptions: true }));
    expect(introspection.status).toBe(200);
    expect(introspection.body.data.__schema.queryType.name).toBe('Query');
    // A body over 256 KB is 413 before it is parsed.
    const big = await graphql(reader, `{ tables { id } } # ${'x'.repeat(300 * 1024)}`);
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
  });

  it('refuses a query of more than 1,000 tokens before validating it, in the shape of a syntax error', async () => {
    const syntax = await graphql(reader, '{ tables { id }');
    expect(syntax.status).toBe(400);
    // 250 fragments, each spread once: validation compares them pair by pair.
    const fragments = Array.from({ length: 250 }, (_, i) => `fragment f${i} on Query { __typename }`);
    const spreads = Array.from({ length: 250 }, (_, i) => `...f${i}`);
    for (const query of [
      `{ ${'__typename '.repeat(1_001)} }`,
      `{ ${spreads.join(' ')} } ${fragments.join(' ')}`,
    ]) {
      const refused = await graphql(reader, query);
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({
        errors: [{ message: expect.stringContaining('at most 1,000 tokens') }],
      });
      expect(Object.keys(refused.body.errors[0])).toEqual(Object.keys(syntax.body.errors[0]));
    }
    // 110 fragments of tables' ids: 996 tokens, answered.
    const named = Array.from({ length: 110 }, (_, i) => `fragment f${i} on GrantedTable { id }`);
    const within = `{ tables { ${named.map((_, i) => `...f${i}`).join(' ')} } } ${named.join(' ')}`;
    const atTheLimit = await graphql(reader, within);
    expect(atTheLimit.status, JSON.stringify(atTheLimit.body)).toBe(200);
  });

  it.each(Object.keys(refused))('refuses a %s with 401, as the data plane does', async (caller) => {
    const answer = await graphql(refused[caller], '{ tables { id } }');
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toMatch(/^[a-z_]+$/);
    expect(answer.body.data).toBeUndefined();
  });
});

describe('MCP', () => {
  it('the SDK’s client lists the tools and reads the granted table’s columns, records and one record', async () => {
    const client = await mcpClient(reader);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toEqual([...MCP_TOOLS]);

      const granted = structured(await client.callTool({ name: 'list_tables', arguments: {} }));
      expect(granted.tables.map((t: { id: string }) => t.id)).toEqual([crm]);

      const described = structured(
        await client.callTool({ name: 'describe_table', arguments: { tableId: crm } }),
      );
      const rest = await server.request('GET', `/api/tables/${crm}/columns`, { token: reader });
      // The table as the data plane knows it: no lifecycle state, no semantic contract (management plane).
      expect(described).toEqual({
        id: crm,
        name: 'crm_contacts',
        environment: 'dev',
        mode: 'MODE_B',
        columns: rest.body.columns,
      });
      const describeTool = tools.tools.find((t) => t.name === 'describe_table');
      expect(describeTool?.description).not.toMatch(/contract|state/i);

      const page = structured(
        await client.callTool({ name: 'list_records', arguments: { tableId: crm, limit: 2 } }),
      );
      expect(page.records).toHaveLength(2);
      expect(typeof page.nextCursor).toBe('string');
      const next = structured(
        await client.callTool({
          name: 'list_records',
          arguments: { tableId: crm, limit: 2, cursor: page.nextCursor },
        }),
      );
      expect(next.records[0].id).not.toBe(page.records[0].id);

      const record = structured(
        await client.callTool({
          name: 'get_record',
          arguments: { tableId: crm, recordId: page.records[0].id },
        }),
      );
      expect(record).toEqual(page.records[0]);

      const outside = await client.callTool({
        name: 'describe_table',
        arguments: { tableId: server.table('customers').id },
      });
      expect(outside.isError).toBe(true);
      expect(JSON.stringify(outside.content)).toContain('table_not_in_scope');

      // A limit out of range is refused as REST and GraphQL refuse it: invalid_query, in the data plane's shape.
      for (const limit of [0, 101, 2.5]) {
        const refusedLimit = await client.callTool({
          name: 'list_records',
          arguments: { tableId: crm, limit },
        });
        expect(refusedLimit.isError, String(limit)).toBe(true);
        const [text] = refusedLimit.content as Array<{ text: string }>;
        expect(JSON.parse(text?.text ?? '')).toMatchObject({
          error: {
            code: 'invalid_query',
            message: expect.stringContaining('limit must be an integer from 1 to 100'),
          },
        });
      }
      const most = await client.callTool({ name: 'list_records', arguments: { tableId: crm, limit: 100 } });
      expect(most.isError).toBeFalsy();
      expect(structured(most).records.length).toBeGreaterThan(2);
    } finally {
      await client.close();
    }
  });

  it.each(Object.keys(refused))('refuses a %s with 401 before any MCP message is read', async (caller) => {
    const token = refused[caller];
    const answer = await server.request('POST', `${server.origin}/mcp`, {
      ...(token === undefined ? {} : { token }),
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toMatch(/^[a-z_]+$/);
    if (token !== undefined) await expect(mcpClient(token)).rejects.toThrow(/401/);
  });
});

describe('an id longer than 100 characters, at every door', () => {
  it('is the unknown id’s 404 at GraphQL and MCP, said back cut; REST’s router refuses the path (414)', async () => {
    const long = `tbl_${'\u001b[31m'.repeat(2)}${'x'.repeat(200_000)}`;
    const token = (
      await server.issueToken('OWNER', {
        name: 'long ids',
        env: 'dev',
        scopes: [{ tableId: crm, permissions: ['read'] }],
      })
    ).tokens.accessToken;
    const fields = [
      'table(id: $t) { id }',
      'records(tableId: $t) { total }',
      'record(tableId: $t, id: "rec_1") { id }',
    ];
    const answer = await graphql(
      token,
      `query($t: ID!) { ${fields.map((f, i) => `f${i}: ${f}`).join(' ')} }`,
      { t: long },
    );
    expect(answer.status).toBe(200);
    // Root fields are non-null: graphql-js answers the first refusal, whichever field it is.
    for (const error of answer.body.errors)
      expect(error.extensions).toEqual({ code: 'table_not_found', status: 404 });
    expect(answer.body.errors[0].message).toContain('(200,014 characters)');
    expect(answer.body.errors[0].message).not.toContain('\u001b');
    expect(JSON.stringify(answer.body).length).toBeLessThan(2_000);
    const record = await graphql(token, `query($r: ID!) { record(tableId: "${crm}", id: $r) { id } }`, {
      r: `rec_${'y'.repeat(5_000)}`,
    });
    expect(record.body.errors[0].extensions).toEqual({ code: 'record_not_found', status: 404 });
    expect(JSON.stringify(record.body).length).toBeLessThan(1_000);

    const client = await mcpClient(token);
    try {
      for (const [name, args, code] of [
        ['describe_table', { tableId: long }, 'table_not_found'],
        ['list_records', { tableId: long }, 'table_not_found'],
        ['get_record', { tableId: crm, recordId: `rec_${'y'.repeat(5_000)}` }, 'record_not_found'],
      ] as const) {
        const refusedCall = await client.callTool({ name, arguments: args });
        expect(refusedCall.isError, name).toBe(true);
        const [text] = refusedCall.content as Array<{ text: string }>;
        expect(JSON.parse(text!.text).error.code, name).toBe(code);
        expect(text!.text.length, name).toBeLessThan(1_000);
      }
    } finally {
      await client.close();
    }
    // REST: a path segment that long is refused by the router, before any route, with the path's start only.
    const rest = await server.request('GET', `/api/tables/${'x'.repeat(5_000)}/records`, { token });
    expect(rest.status).toBe(414);
    expect(JSON.stringify(rest.body).length).toBeLessThan(1_000);
    // An id of 100 characters is looked up: the unknown table's own 404.
    const hundred = await graphql(token, `{ table(id: "${'t'.repeat(100)}") { id } }`);
    expect(hundred.body.errors[0].extensions).toEqual({ code: 'table_not_found', status: 404 });
    expect(hundred.body.errors[0].message).toContain('t'.repeat(100));
  });
});

describe('every door refuses a dead or foreign token alike', () => {
  const dead: Record<string, string> = {};
  let orphanIssuer: string;

  beforeAll(async () => {
    const grant = { env: 'dev', scopes: [{ tableId: crm, permissions: ['read' as const] }] };
    const revoked = await server.issueToken('OWNER', { name: 'revoked', ...grant });
    const revoke = await server.request('POST', '/api/integration/tokens/revoke', {
      token: server.user('OWNER').cliToken,
      body: { token: revoked.clientToken },
    });
    expect(revoke.status).toBe(200);
    dead['revoked DATA-API token'] = revoked.tokens.accessToken;
    server.clock.advance(-61 * 60_000);
    try {
      dead['expired DATA-API token'] = (
        await server.issueToken('OWNER', { name: 'expired', ...grant })
      ).tokens.accessToken;
    } finally {
      server.clock.reset();
    }
    // Issued by a member who then leaves the workspace (the token outlives its owner's membership).
    orphanIssuer = server.user('ADMIN').userId;
    dead['orphaned DATA-API token'] = (
      await server.issueToken('ADMIN', { name: 'orphaned', ...grant })
    ).tokens.accessToken;
    dead['MANAGEMENT token'] = (
      await server.issueToken('OWNER', { name: 'mgmt-parity', env: '*', scopes: ['workspace:read:members'] })
    ).tokens.accessToken;
  });

  /** Each door's answer to the token: REST's records, a GraphQL query, an MCP message. */
  async function doors(token: string) {
    const rest = await server.request('GET', `/api/tables/${crm}/records?limit=1`, { token });
    const graphqlAnswer = await graphql(token, '{ tables { id } }');
    const mcp = await server.request('POST', `${server.origin}/mcp`, {
      token,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tables', arguments: {} } },
    });
    return { rest, graphql: graphqlAnswer, mcp };
  }

  it.each([
    ['revoked DATA-API token', 'token_revoked'],
    ['expired DATA-API token', undefined],
    ['orphaned DATA-API token', 'token_revoked'],
    ['MANAGEMENT token', 'wrong_audience'],
  ] as const)(
    'a %s: 401 with the same code at REST, GraphQL and MCP, and nothing read',
    async (kind, code) => {
      const orphaned = kind === 'orphaned DATA-API token';
      if (orphaned)
        await server.sql('UPDATE gds.memberships SET active = false WHERE user_id = $1', [orphanIssuer]);
      try {
        const answers = await doors(dead[kind] ?? '');
        const rest = answers.rest.body.error.code;
        if (code !== undefined) expect(rest).toBe(code);
        for (const [door, answer] of Object.entries(answers)) {
          expect(answer.status, door).toBe(401);
          expect(answer.body.error.code, door).toBe(rest);
          expect(answer.body.data, door).toBeUndefined();
          expect(answer.body.result, door).toBeUndefined();
        }
      } finally {
        if (orphaned)
          await server.sql('UPDATE gds.memberships SET active = true WHERE user_id = $1', [orphanIssuer]);
      }
    },
  );

  it('the orphaned token’s owner back in the workspace: every door serves it again (the refusal was the membership)', async () => {
    for (const [door, answer] of Object.entries(await doors(dead['orphaned DATA-API token'] ?? '')))
      expect(answer.status, door).toBe(200);
  });
});

describe('MCP, one message a request', () => {
  it('refuses a JSON-RPC batch (400, -32600): one request of the rate limit is one read', async () => {
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'list_records', arguments: { tableId: crm, limit: 1 } },
    });
    const headers = { accept: 'application/json, text/event-stream' };
    const batch = await server.request('POST', `${server.origin}/mcp`, {
      token: reader,
      headers,
      body: [call(1), call(2)],
    });
    expect(batch.status).toBe(400);
    expect(batch.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
    expect(batch.body.error.message).toContain('no batches');
    const one = await server.request('POST', `${server.origin}/mcp`, {
      token: reader,
      headers,
      body: call(3),
    });
    expect(one.status).toBe(200);
  });
});

describe('MCP, a bounded body', () => {
  it('refuses a body over 256 KB with 413 before the SDK reads it; a tool call under it is served', async () => {
    const headers = { accept: 'application/json, text/event-stream' };
    const call = (search: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_records', arguments: { tableId: crm, limit: 1, search } },
    });
    const over = await server.request('POST', `${server.origin}/mcp`, {
      token: reader,
      headers,
      body: call('x'.repeat(300 * 1024)),
    });
    expect(over.status).toBe(413);
    expect(over.body.error.code).toBe('payload_too_large');
    const under = await server.request('POST', `${server.origin}/mcp`, {
      token: reader,
      headers,
      body: call('x'.repeat(100 * 1024)),
    });
    expect(under.status).toBe(200);
    expect(under.body.result.isError).toBeFalsy();
  });
});

describe('the doors take the arguments REST takes, and refuse the ones it refuses', () => {
  let counts: string;
  let countsReader: string;

  beforeAll(async () => {
    // A table without a text column: a search matches no row of it.
    counts = await createModeBTable(server, 'door_counts', [{ name: 'n', type: 'integer', required: true }]);
    countsReader = (
      await server.issueToken('OWNER', {
        name: 'door-counts',
        env: 'dev',
        scopes: [{ tableId: counts, permissions: ['read'] }],
      })
    ).tokens.accessToken;
    const write = await server.issueToken('OWNER', {
      name: 'door-counts-write',
      env: 'dev',
      scopes: [{ tableId: counts, permissions: ['write'] }],
    });
    for (const n of [1, 2]) {
      const created = await server.request('POST', `/api/tables/${counts}/records`, {
        token: write.tokens.accessToken,
        body: { n },
      });
      expect(created.status).toBe(201);
    }
  });

  it('an empty search is invalid_query at every door, not a listing of no rows', async () => {
    const rest = await server.request('GET', `/api/tables/${counts}/records?search=`, {
      token: countsReader,
    });
    expect(rest.status).toBe(400);
    expect(rest.body.error.code).toBe('invalid_query');
    const answer = await graphql(
      countsReader,
      'query($t: ID!) { records(tableId: $t, search: "") { records { id } total } }',
      { t: counts },
    );
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors[0]).toMatchObject({
      path: ['records'],
      message: expect.stringContaining('search'),
      extensions: { code: 'invalid_query', status: 400 },
    });
    const client = await mcpClient(countsReader);
    try {
      const listed = await client.callTool({
        name: 'list_records',
        arguments: { tableId: counts, search: '' },
      });
      expect(listed.isError).toBe(true);
      const [text] = listed.content as Array<{ text: string }>;
      expect(JSON.parse(text?.text ?? '')).toMatchObject({ error: { code: 'invalid_query' } });
      // Without the search, both rows.
      const all = structured(await client.callTool({ name: 'list_records', arguments: { tableId: counts } }));
      expect(all.total).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('MCP refuses an argument its tool does not take (as REST an unknown parameter), and says so in tools/list', async () => {
    const client = await mcpClient(countsReader);
    try {
      // `first` (GraphQL's name) or `page` (REST's) would otherwise be dropped: a first page of 50, not of 1.
      for (const extra of [{ first: 1 }, { page: 2 }]) {
        const listed = await client.callTool({
          name: 'list_records',
          arguments: { tableId: counts, ...extra },
        });
        const [name] = Object.keys(extra);
        expect(listed.isError, name).toBe(true);
        expect(JSON.stringify(listed.content), name).toContain(name);
        expect(listed.structuredContent, name).toBeUndefined();
      }
      const described = await client.callTool({
        name: 'describe_table',
        arguments: { tableId: counts, recordId: 'rec_x' },
      });
      expect(described.isError).toBe(true);
      const { tools } = await client.listTools();
      for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
      // A tool that takes no argument is still called without any.
      const bare = await server.request('POST', `${server.origin}/mcp`, {
        token: countsReader,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tables' } },
      });
      expect(bare.body.result.structuredContent.tables.map((t: { id: string }) => t.id)).toEqual([counts]);
    } finally {
      await client.close();
    }
  });
});

describe('one rate limit for every door', () => {
  it('counts a token’s REST, GraphQL and MCP requests in one window', async () => {
    const limited = await startTestServer({ rateLimit: 3 });
    try {
      const table = limited.table('crm_contacts').id;
      const token = (
        await limited.issueToken('OWNER', {
          name: 'l',
          env: 'dev',
          scopes: [{ tableId: table, permissions: ['read'] }],
        })
      ).tokens.accessToken;
      expect((await limited.request('GET', `/api/tables/${table}/records?limit=1`, { token })).status).toBe(
        200,
      );
      const query = { query: '{ tables { id } }' };
      expect(
        (await limited.request('POST', `${limited.origin}/graphql`, { token, body: query })).status,
      ).toBe(200);
      const mcp = await limited.request('POST', `${limited.origin}/mcp`, {
        token,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      });
      expect(mcp.status).toBe(200);
      const over = await limited.request('POST', `${limited.origin}/graphql`, { token, body: query });
      expect(over.status).toBe(429);
      expect(over.body.error.code).toBe('rate_limited');
      expect(over.headers.get('retry-after')).not.toBeNull();
    } finally {
      await limited.close();
    }
  });
});

describe('GraphQL, one request of the rate limit per read', () => {
  it('counts each root field that reads (aliases, fragments) as the REST request it stands for; 429 past the limit', async () => {
    const limited = await startTestServer({ rateLimit: 6 });
    try {
      const table = limited.table('crm_contacts').id;
      const token = (
        await limited.issueToken('OWNER', {
          name: 'pages',
          env: 'dev',
          scopes: [{ tableId: table, permissions: ['read'] }],
        })
      ).tokens.accessToken;
      const post = (query: string) =>
        limited.request('POST', `${limited.origin}/graphql`, {
          token,
          body: { query, variables: { t: table } },
        });
      // Three pages, one by alias, one through a fragment: three requests, as three REST pages would be.
      const three = await post(
        'query($t: ID!) { a: records(tableId: $t, first: 1) { total } b: records(tableId: $t, first: 1) { total } ...F __typename } fragment F on Query { record: records(tableId: $t, first: 1) { total } }',
      );
      expect(three.status, JSON.stringify(three.body)).toBe(200);
      expect(Object.keys(three.body.data)).toEqual(['a', 'b', 'record', '__typename']);
      expect(three.headers.get('x-ratelimit-remaining')).toBe('3');
      // Introspection reads nothing of the data plane: the request's own one.
      const typename = await post('{ __typename }');
      expect(typename.headers.get('x-ratelimit-remaining')).toBe('2');
      // Two left, three reads asked: refused before any is served, as REST's 429.
      const over = await post(
        'query($t: ID!) { a: records(tableId: $t) { total } b: records(tableId: $t) { total } c: table(id: $t) { name } }',
      );
      expect(over.status).toBe(429);
      expect(over.body.error.code).toBe('rate_limited');
      expect(over.body.data).toBeUndefined();
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
      const rest = await limited.request('GET', `/api/tables/${table}/records?limit=1`, { token });
      expect(rest.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('the doors’ failures leak nothing of the database', () => {
  it('a NUL or unpaired surrogate is invalid_input in the door’s shape; a failed read is internal_error, no SQL', async () => {
    // The contract lists no 500: this server is made to fail one on purpose.
    const own = await startTestServer({ contractCheck: false });
    try {
      const orders = own.table('orders').id;
      const token = (
        await own.issueToken('OWNER', {
          name: 'leaks',
          env: 'dev',
          scopes: [{ tableId: orders, permissions: ['read'] }],
        })
      ).tokens.accessToken;
      const tool = async (name: string, args: Record<string, unknown>) => {
        const answer = await own.request('POST', `${own.origin}/mcp`, {
          token,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
        });
        expect(answer.status).toBe(200);
        expect(answer.body.result.isError).toBe(true);
        const [content] = answer.body.result.content as Array<{ text: string }>;
        return JSON.parse(content?.text ?? '') as { error: { code: string; message: string } };
      };
      for (const args of [
        { tableId: orders, search: 'a\u0000b' },
        { tableId: orders, cursor: '\ud800' },
      ]) {
        const refused = await tool('list_records', args);
        expect(refused.error.code, JSON.stringify(args)).toBe('invalid_input');
        expect(refused.error.message).not.toMatch(/byte sequence|UTF8"|sqlstate/i);
      }
      expect((await tool('get_record', { tableId: orders, recordId: 'r\u0000' })).error.code).toBe(
        'invalid_input',
      );
      const query = 'query($t: ID!, $s: String) { records(tableId: $t, search: $s) { total } }';
      for (const search of ['a\u0000b', 'x\udc00']) {
        const graphql = await own.request('POST', `${own.origin}/graphql`, {
          token,
          body: { query, variables: { t: orders, s: search } },
        });
        expect(graphql.status).toBe(200);
        expect(graphql.body.errors[0]).toMatchObject({
          path: ['records'],
          extensions: { code: 'invalid_input', status: 400 },
        });
      }

      // The warehouse object now fails when read (a division by zero in a view of the same columns).
      const [table] = await own.sql('SELECT source FROM gds.tables WHERE id = $1', [orders]);
      const source = String(table?.source);
      await own.sql(`ALTER TABLE ${source} RENAME TO orders_kept`);
      const schema = source.split('.')[0] ?? '';
      await own.sql(
        `CREATE VIEW ${source} AS SELECT id, order_id, customer_id, amount / 0 AS amount, status, ordered_on FROM ${schema}.orders_kept`,
      );
      const rest = await own.request('GET', `/api/tables/${orders}/records`, { token });
      expect(rest.status).toBe(500);
      const failed = await tool('list_records', { tableId: orders });
      expect(failed.error).toEqual({ code: 'internal_error', message: 'The server failed; see its log.' });
      const graphql = await own.request('POST', `${own.origin}/graphql`, {
        token,
        body: { query, variables: { t: orders } },
      });
      expect(graphql.status).toBe(500);
      expect(JSON.stringify(graphql.body)).not.toMatch(/division|orders_kept|SELECT/i);
    } finally {
      await own.close();
    }
  });
});

describe('the doors’ contracts beside openapi.yaml', () => {
  it('the GraphQL schema is src/contract/schema.graphql, and docs/doors.md lists the MCP tools', async () => {
    const sdl = readFileSync(new URL('../../src/contract/schema.graphql', import.meta.url), 'utf8');
    const introspected = await graphql(reader, '{ __type(name: "Query") { fields { name } } }');
    const fields = introspected.body.data.__type.fields.map((f: { name: string }) => f.name);
    expect(fields).toEqual(['tables', 'table', 'records', 'record']);
    for (const field of fields) expect(sdl).toMatch(new RegExp(`^ {2}${field}[(:]`, 'm'));
    const doc = readFileSync(new URL('../../docs/doors.md', import.meta.url), 'utf8');
    for (const tool of MCP_TOOLS) expect(doc).toContain(`\`${tool}\``);
  });
});

describe('the doors on PostgreSQL', needs(noPostgres), () => {
  let pg: TestServer;

  beforeAll(async () => {
    pg = await startTestServer({ database: 'postgres' });
  });

  afterAll(async () => {
    await pg?.close();
  });

  it('GraphQL and the MCP SDK read a stored and a warehouse table; other credentials are 401', async () => {
    const stored = pg.table('crm_contacts').id;
    const warehouse = pg.table('orders').id;
    const issued = await pg.issueToken('OWNER', {
      name: 'doors-pg',
      env: 'dev',
      scopes: [stored, warehouse].map((tableId) => ({ tableId, permissions: ['read' as const] })),
    });
    const token = issued.tokens.accessToken;
    const query = `query ($id: ID!) { records(tableId: $id, first: 2) { records { id } nextCursor total } }`;
    for (const id of [stored, warehouse]) {
      const rest = await pg.request('GET', `/api/tables/${id}/records?limit=2`, { token });
      const answer = await graphql(token, query, { id }, pg);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.data.records.records.map((r: { id: string }) => r.id)).toEqual(
        rest.body.records.map((r: { id: string }) => r.id),
      );
    }
    const client = await mcpClient(token, pg);
    try {
      const page = structured(
        await client.callTool({ name: 'list_records', arguments: { tableId: warehouse, limit: 2 } }),
      );
      expect(page.records).toHaveLength(2);
    } finally {
      await client.close();
    }
    const management = (
      await pg.issueToken('OWNER', { name: 'm', env: '*', scopes: ['workspace:read:audit'] })
    ).tokens.accessToken;
    for (const other of [issued.clientToken, pg.user('OWNER').accessToken, management]) {
      expect((await graphql(other, '{ tables { id } }', undefined, pg)).status).toBe(401);
      await expect(mcpClient(other, pg)).rejects.toMatchObject({ code: 401 });
    }
  });
});
