// Ids named in request bodies (token scopes, a revoked token, definitions' connectorId and replaceId, a batch
// item's table, a bulk update's record, a promotion's environment, connector and replaceId, a bundle's
// connector, a Gate 3 baseline) are bounded as path ids are (MAX_ID_LENGTH, input-rule.ts checkIds): one too
// long to be an id is the route's usual not-found answer, said back cut (no control characters, a short
// answer); one at the bound is still looked up.
import { describe, expect, it } from 'vitest';
import { MAX_ID_LENGTH } from '../../src/server/ids.js';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import type { TestResponse, TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const ESC = '\u001b';
/** An id of `length` characters, with a terminal escape near its start (within what a cut echo keeps). */
const idOf = (length: number) => `x_${ESC}[31m${'y'.repeat(length - 7)}`;
const LONG = idOf(5_000);
const AT_BOUND = idOf(MAX_ID_LENGTH);

const SQL = 'CREATE OR REPLACE VIEW analytics_dev.long_ids AS SELECT 1 AS id';

interface Case {
  name: string;
  /** The request naming `id` in its body, and the answer's status and error code where it names nothing. */
  send(server: TestServer, id: string): Promise<TestResponse>;
  status: number;
  code: string;
  /** Where the error is in the answer (a batch item's step); the answer's `error` otherwise. */
  errorOf?(body: unknown): { code: string; message: string } | undefined;
}

const token = async (server: TestServer, scopes: Parameters<TestServer['issueToken']>[1]['scopes']) =>
  (await server.issueToken('OWNER', { name: 'body ids', env: 'dev', scopes })).tokens.accessToken;

const owner = (server: TestServer) => server.user('OWNER').accessToken;

const CASES: Case[] = [
  {
    name: 'tokens issue: a scope’s tableId',
    send: (s, id) =>
      s.request('POST', '/api/integration/tokens', {
        token: owner(s),
        body: { name: 'x', env: 'dev', scopes: [{ tableId: id, permissions: ['read'] }] },
      }),
    status: 404,
    code: 'table_not_found',
  },
  {
    name: 'short-lived tokens: a scope’s tableId',
    send: (s, id) =>
      s.request('POST', '/api/integration/short-lived-tokens', {
        token: owner(s),
        body: { scopes: [{ tableId: id, permissions: ['read'] }] },
      }),
    status: 404,
    code: 'table_not_found',
  },
  {
    name: 'tokens revoke: a token id',
    send: (s, id) =>
      s.request('POST', '/api/integration/tokens/revoke', { token: owner(s), body: { token: id } }),
    status: 404,
    code: 'token_not_found',
  },
  ...(
    [
      ['definitions', '/api/workspace/definitions'],
      ['push', '/api/artifacts'],
      ['push --dry-run', '/api/artifacts/dry-run'],
    ] as const
  ).flatMap(([what, path]) =>
    (['connectorId', 'replaceId'] as const).map((field): Case => ({
      name: `${what}: ${field}`,
      send: async (s, id) =>
        s.request('POST', path, {
          token: what === 'definitions' ? await token(s, ['workspace:write:definition']) : owner(s),
          body: {
            filename: 'long_ids.sql',
            content: SQL,
            mimeType: 'sql',
            connectorId: s.ready.connectors[0]!.id,
            [field]: id,
          },
        }),
      status: 404,
      code: field === 'connectorId' ? 'connector_not_found' : 'replace_target_not_found',
    })),
  ),
  ...(['gate1', 'contract'] as const).map((step): Case => ({
    name: `artifacts batch: an item’s tableId (its ${step} step)`,
    send: (s, id) =>
      s.request('POST', '/api/artifacts/batch', {
        token: owner(s),
        body: {
          items: [
            step === 'gate1'
              ? { tableId: id, gate1: { content: 'patternChecks: []\n' } }
              : { tableId: id, intent: { request: { meaning: 'x' } } },
          ],
        },
      }),
    status: 200,
    code: 'table_not_found',
    errorOf: (body) => {
      type Step = { error?: { error: { code: string; message: string } } };
      const [item] = (body as { results: Array<{ tableId: string | null } & Record<string, Step>> }).results;
      expect(item?.tableId === null || (item?.tableId ?? '').length <= MAX_ID_LENGTH).toBe(true);
      return item?.[step]?.error?.error;
    },
  })),
  {
    name: 'bulk update: a record id',
    send: async (s, id) => {
      const crm = s.table('crm_contacts').id;
      return s.request('POST', `/api/tables/${crm}/bulk-update`, {
        token: await token(s, [{ tableId: crm, permissions: ['write'] }]),
        body: { records: [{ id, data: { company: 'x' } }] },
      });
    },
    status: 404,
    code: 'record_not_found',
  },
  ...(
    [
      ['to', 'environment_not_found'],
      ['connectorId', 'connector_not_found'],
      ['replaceId', 'replace_target_not_found'],
    ] as const
  ).map(([field, code]): Case => ({
    name: `env promote: ${field}`,
    send: (s, id) =>
      s.request('POST', `/api/tables/${s.table('orders').id}/promotions`, {
        token: owner(s),
        body: { to: 'staging', [field]: id },
      }),
    status: 404,
    code,
  })),
  {
    name: 'bundle import: connectorId',
    send: async (s, id) => {
      const bundle = await s.request('GET', `/api/tables/${s.table('orders').id}/bundle`, {
        token: owner(s),
      });
      return s.request('POST', '/api/bundles', {
        token: owner(s),
        body: { ...bundle.body, connectorId: id },
      });
    },
    status: 404,
    code: 'connector_not_found',
  },
  {
    name: 'gate run: a Gate 3 baseline',
    send: (s, id) =>
      s.request('POST', `/api/tables/${s.table('orders').id}/gate-runs`, {
        token: owner(s),
        body: { gate: 3, baseline: id },
      }),
    status: 404,
    code: 'baseline_not_found',
  },
];

const errorIn = (c: Case, answer: TestResponse) =>
  c.errorOf ? c.errorOf(answer.body) : (answer.body as { error?: { code: string; message: string } }).error;

describe.each(ENGINES)('an id in a request body on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });

  it.each(CASES)(
    '$name: 5,000 characters are the usual not-found answer, said back cut',
    needs(skip),
    async (c) => {
      const answer = await c.send(server(), LONG);
      const text = JSON.stringify(answer.body);
      expect(answer.status, text.slice(0, 300)).toBe(c.status);
      expect(errorIn(c, answer)?.code).toBe(c.code);
      expect(errorIn(c, answer)?.message).toContain('(5,000 characters)');
      expect(text.length).toBeLessThan(2_000);
      expect(text).not.toContain(ESC);
      expect(text).not.toMatch(/\\u00[01][0-9a-f]/);
    },
  );

  it.each(CASES)(`$name: ${MAX_ID_LENGTH} characters are still looked up`, needs(skip), async (c) => {
    const answer = await c.send(server(), AT_BOUND);
    expect(answer.status).toBe(c.status);
    expect(errorIn(c, answer)?.code).toBe(c.code);
    expect(errorIn(c, answer)?.message).not.toContain('characters)');
  });

  it(
    'a table’s project change: a `previous` too long to be a project is 400, not said back',
    needs(skip),
    async () => {
      const answer = await server().request('PUT', `/api/tables/${server().table('orders').id}/project`, {
        token: owner(server()),
        body: { project: 'shop', previous: LONG },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'previous' } });
      expect(JSON.stringify(answer.body).length).toBeLessThan(2_000);
    },
  );
});
