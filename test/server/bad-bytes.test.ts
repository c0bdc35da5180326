// Bad bytes are 400s. Every string field of every request body in src/contract/openapi.yaml,
// every string query parameter and the path's ids get a NUL, a lone surrogate (text fast-check generates
// around them) and, for number fields, an out-of-range number; the server must answer 4xx, never 500.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadContract } from '../../src/server/contract.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
const contract = loadContract() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
let tokens: { person: string; management: string; data: string };
let crm: string;

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
}
interface Operation {
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; schema?: Schema }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

function resolve(schema: Schema | undefined): Schema {
  if (!schema) return {};
  if (schema.$ref) return resolve(contract.components.schemas[schema.$ref.split('/').pop() ?? '']);
  return schema;
}

/** Each property of a body schema (alternatives included), with whether it is a string or a number. */
function fields(schema: Schema | undefined): Array<{ field: string; kind: 'string' | 'number' }> {
  const s = resolve(schema);
  const out: Array<{ field: string; kind: 'string' | 'number' }> = [];
  for (const alternative of [...(s.oneOf ?? []), ...(s.anyOf ?? [])]) out.push(...fields(alternative));
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    const p = resolve(property);
    const types = [p.type ?? []].flat();
    if (types.includes('string') || resolve(p.items).type === 'string')
      out.push({ field: name, kind: 'string' });
    if (types.includes('integer') || types.includes('number')) out.push({ field: name, kind: 'number' });
  }
  return out;
}

interface Case {
  method: string;
  path: string;
  where: 'body' | 'query' | 'path';
  field: string;
  kind: 'string' | 'number';
}

function cases(): Case[] {
  const all: Case[] = [];
  for (const [path, item] of Object.entries(contract.paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const m = method.toUpperCase();
      const body = op.requestBody?.content?.['application/json']?.schema;
      for (const f of fields(body)) all.push({ method: m, path, where: 'body', ...f });
      for (const p of op.parameters ?? []) {
        if (p.in === 'query') all.push({ method: m, path, where: 'query', field: p.name, kind: 'string' });
        if (p.in === 'path') all.push({ method: m, path, where: 'path', field: p.name, kind: 'string' });
      }
    }
  }
  return all;
}

function tokenFor(path: string): string {
  if (/\/(records|bulk-update|import)/.test(path)) return tokens.data;
  if (/^\/api\/workspace\/(definitions|recertify)/.test(path)) return tokens.management;
  return tokens.person;
}

/** Percent-encodes text; a lone surrogate (which has no UTF-8) as the bytes a careless encoder sends. */
function encodeText(text: string): string {
  return text
    .split(/([\uD800-\uDFFF])/)
    .map((part) =>
      /^[\uD800-\uDFFF]$/.test(part)
        ? `%${[0xe0 | (part.charCodeAt(0) >> 12), 0x80 | ((part.charCodeAt(0) >> 6) & 0x3f), 0x80 | (part.charCodeAt(0) & 0x3f)].map((b) => b.toString(16).toUpperCase()).join('%')}`
        : encodeURIComponent(part),
    )
    .join('');
}

function fill(path: string, bad?: { field: string; value: string }): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (bad?.field === name) return encodeText(bad.value);
    if (name === 'tableId') return crm;
    if (name === 'key') return 'gate_mode';
    return `${name}_missing`;
  });
}

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  crm = server.table('crm_contacts').id;
  tokens = {
    person: server.user('OWNER').cliToken,
    management: (
      await server.issueToken('OWNER', {
        name: 'all',
        env: '*',
        scopes: ['workspace:read:audit', 'workspace:write:definition', 'workspace:write:recertify'] as never,
      })
    ).tokens.accessToken,
    data: (
      await server.issueToken('OWNER', {
        name: 'rw',
        env: '*',
        scopes: [{ tableId: crm, permissions: ['read', 'write'] }],
      })
    ).tokens.accessToken,
  };
});

afterAll(async () => {
  await server?.close();
});

const badText = fc
  .tuple(
    fc.string({ maxLength: 8 }),
    fc.constantFrom('\u0000', '\uD800', '\uDFFF', 'a\uDBFFb'),
    fc.string({ maxLength: 8 }),
  )
  .map(([a, bad, b]) => `${a}${bad}${b}`);
const badNumber = fc.constantFrom(1e308, -1e308, 2 ** 63, 1.2e29);

describe('every input of the contract', () => {
  /** One call with `value` in the case's field; a 5xx (or a client-side failure) is recorded. */
  async function probe(c: Case, value: string | number, failures: string[]): Promise<void> {
    const bad = { field: c.field, value: String(value) };
    const url =
      fill(c.path, c.where === 'path' ? bad : undefined) +
      (c.where === 'query' ? `?${c.field}=${encodeText(String(value))}` : '');
    const hasBody = c.method !== 'GET' && c.method !== 'DELETE';
    const response = await server.request(c.method, url, {
      token: tokenFor(c.path),
      ...(hasBody ? { body: c.where === 'body' ? { [c.field]: value } : {} } : {}),
    });
    if (response.status >= 500) {
      failures.push(
        `${c.method} ${c.path} ${c.where}.${c.field}=${JSON.stringify(value)}: ${response.status} ${JSON.stringify(response.body)}`,
      );
    }
  }

  it('answers 4xx, never 500, to a NUL, a lone surrogate or an over-range number in any field', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const c of all) {
      await fc.assert(
        fc.asyncProperty(c.kind === 'number' ? badNumber : badText, async (value) => {
          try {
            await probe(c, value, failures);
          } catch (error) {
            failures.push(`${c.method} ${c.path} ${c.where}.${c.field}: ${String(error)}`);
          }
        }),
        { numRuns: 3 },
      );
    }
    expect(failures).toEqual([]);
  }, 300_000);
});

describe('the reproductions of the probe', () => {
  it('answers 400 to a NUL in a token name, a rejection reason, an audit filter and a search; 404 in a path id', async () => {
    const person = server.user('OWNER').cliToken;
    const answers = await Promise.all([
      server.request('POST', '/api/integration/tokens', {
        token: person,
        body: { name: 'ci\u0000', env: '*', scopes: [{ tableId: crm, permissions: ['read'] }] },
      }),
      server.request('POST', `/api/tables/${crm}/reject`, { token: person, body: { reason: 'no\u0000' } }),
      server.request('GET', '/api/workspace/audit-log?eventType=%00', { token: person }),
      server.request('GET', `/api/tables/${crm}/records?search=%00`, { token: tokens.data }),
      server.request('GET', `/api/tables/tbl_%00/status`, { token: person }),
      server.request('GET', `/api/tables?name=${encodeText('\uD800x')}`, { token: person }),
    ]);
    expect(answers.slice(0, 4).map((a) => a.status)).toEqual([400, 400, 400, 400]);
    // A path id that breaks the rule names nothing; bytes that are not UTF-8 in a query decode to U+FFFD.
    expect(answers[4]?.status).toBe(404);
    expect(answers[5]?.status).toBeLessThan(500);
  });

  it('answers 400, never 500, to a body nested 100,000 levels deep (second probe: the stack overflowed)', async () => {
    const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const raw = (path: string, token: string, body: string) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error: { code: string; message: string } },
      }));
    const answers = await Promise.all([
      raw(
        `/api/tables/${crm}/records`,
        tokens.data,
        `{"email":"d@x.y","full_name":"x","company":${deep(100_000)}}`,
      ),
      raw(
        `/api/tables/${crm}/records`,
        tokens.data,
        `{"email":"d@x.y","full_name":"x","x":${deep(100_000)}}`,
      ),
      raw(`/api/tables/${crm}/bulk-update`, tokens.data, `{"records":[{"data":${deep(100_000)}}]}`),
      raw(
        '/api/workspace/recertify',
        tokens.management,
        `{"tables":["crm_contacts"],"environmentLabel":"dev","evidence":${deep(100_000)}}`,
      ),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error.message).toContain('nesting deeper than 128 levels');
      // What to do about it, not the advice of a bad character.
      expect(answer.body.error.message).toMatch(/: no request needs that deep a value\.$/);
    }
  });

  it('refuses an integer out of the exact range with 400 invalid_record; the table stays checkable', async () => {
    for (const score of [1e308, 1.2e29, 2 ** 63]) {
      const response = await server.request('POST', `/api/tables/${crm}/records`, {
        token: tokens.data,
        body: { email: 'big@example.com', full_name: 'Big', score },
      });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_record');
      expect(response.body.error.details.invalid).toEqual([{ column: 'score', expected: 'integer' }]);
    }
    const stored = await server.sql(
      `SELECT count(*)::int AS n FROM gds.records WHERE data->>'email' = 'big@example.com'`,
    );
    expect(stored[0].n).toBe(0);
  });

  it('answers 409 naming the missing columns when a Mode A table’s warehouse object drifted', async () => {
    const customers = server.table('customers');
    const [{ source }] = await server.sql('SELECT source FROM gds.tables WHERE id = $1', [customers.id]);
    const read = (
      await server.issueToken('OWNER', {
        name: 'reader',
        env: '*',
        scopes: [{ tableId: customers.id, permissions: ['read'] }],
      })
    ).tokens.accessToken;
    const [schema, name] = String(source).split('.');
    await server.sql(`ALTER TABLE "${schema}"."${name}" RENAME COLUMN signup_date TO signed_up`);
    const response = await server.request('GET', `/api/tables/${customers.id}/records?search=a`, {
      token: read,
    });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('schema_drift');
    expect(response.body.error.details.missingColumns).toEqual(['signup_date']);
    expect(response.body.error.message).toContain('signup_date');
  });

  it('refuses an artifact that is not UTF-8 (400 naming the offset) and registers nothing', async () => {
    const connectorId = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id;
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('OWNER').cliToken,
      body: {
        filename: 'lat.yml',
        content: 'table: lat\uFFFD\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n',
        connectorId,
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('artifact_not_utf8');
    expect(response.body.error.details.offset).toBe(10);
    const tables = await server.sql(`SELECT count(*)::int AS n FROM gds.tables WHERE name LIKE 'lat%'`);
    expect(tables[0].n).toBe(0);
  });

  it('refuses a JSON body whose bytes are not UTF-8 (400 naming the byte), instead of storing U+FFFD', async () => {
    const post = (path: string, token: string, body: Buffer) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
        body,
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { error: { code: string; message: string; details: unknown } },
      }));
    const latin1 = (json: string) => Buffer.from(json, 'latin1'); // "é" as the one byte 0xE9
    const record = latin1('{"email":"rene@example.com","full_name":"Ren\u00e9e","company":"Caf\u00e9"}');
    const answers = await Promise.all([
      post(`/api/tables/${crm}/records`, tokens.data, record),
      post(`/api/tables/${crm}/reject`, tokens.person, latin1('{"reason":"d\u00e9j\u00e0 vu"}')),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe('invalid_input');
      expect(answer.body.error.message).toMatch(/^The body is not UTF-8: byte \d+ is 0x(E9|E0)/);
    }
    expect(answers[0]?.body.error.details).toEqual({ where: 'body', byteOffset: record.indexOf(0xe9) });
    const stored = await server.sql(
      `SELECT count(*)::int AS n FROM gds.records WHERE data->>'email' = 'rene@example.com'`,
    );
    expect(stored[0].n).toBe(0);
    // The same record as UTF-8 is taken: only the bytes were refused.
    const utf8 = await post(
      `/api/tables/${crm}/records`,
      tokens.data,
      Buffer.from('{"email":"rene@example.com","full_name":"Renée","company":"Café"}', 'utf8'),
    );
    expect(utf8.status).toBe(201);
  });
});
