// POST /api/artifacts/batch (src/server/routes/artifact-batch.ts), on PGlite and PostgreSQL: many tables'
// definitions, gate1.yml and contract intents in one request, each step answered as its single write would
// answer it (POST /api/artifacts, PUT .../gate1, PATCH .../semantic-contract): the same writes, the same
// refusals per role and environment, the same If-Match and ownership rules, an item stopping at its first
// failed step (as gds's table-by-table writes do), one item failing leaving the others written; only a
// person's session or CLI token may call it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const GATE1 = 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: 0 }\n';
const GATE1_V2 = 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0.1, fail: 0.2 }\n';
const INTENT = { grainType: 'ONE_PER_ENTITY', grainKeyColumns: ['id'] };
const ROLES = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'] as const;

describe.each(ENGINES)('POST /api/artifacts/batch on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let admin: string;
  const connector: Record<string, string> = {};
  const schemaOf: Record<string, string> = { dev: 'analytics_dev', production: 'analytics_prod' };

  const definition = (name: string, env: string, extra: Record<string, unknown> = {}) => ({
    filename: `${name}.json`,
    mimeType: 'json',
    content: JSON.stringify({
      table: name,
      source: `${schemaOf[env]}.${name}`,
      columns: [
        { name: 'id', type: 'integer', required: true },
        { name: 'label', type: 'text' },
      ],
    }),
    connectorId: connector[env],
    project: 'batch@test',
    ...extra,
  });
  const batch = (token: string | undefined, items: unknown[]) =>
    server.request('POST', '/api/artifacts/batch', { ...(token ? { token } : {}), body: { items } });

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer(postgres ? { database: 'postgres' } : {});
    admin = server.user('ADMIN').cliToken;
    for (const env of ['dev', 'production'])
      connector[env] = server.ready.connectors.find((c) => c.environmentLabel === env)?.id ?? '';
    const names = [
      ...['ab_1', 'ab_2', 'ab_3', 'ab_4', 'ab_5'].map((n) => ['dev', n]),
      ...ROLES.flatMap((role) =>
        ['dev', 'production'].flatMap((env) => [
          [env, `${role.toLowerCase()}_${env}_single`],
          [env, `${role.toLowerCase()}_${env}_batch`],
        ]),
      ),
    ];
    for (const [env, name] of names)
      await server.sql(`CREATE TABLE ${schemaOf[env ?? 'dev']}.${name} (id integer, label text)`);
  });

  afterAll(async () => {
    await server?.close();
  });

  async function tableId(name: string): Promise<string> {
    const [row] = await server.sql<{ id: string }>(`SELECT id FROM gds.tables WHERE name = $1 AND active`, [
      name,
    ]);
    return row?.id ?? '';
  }

  it(
    'registers each item with its gate1.yml and intent in one request; the same batch again changes nothing',
    needs(skip),
    async () => {
      const names = ['ab_1', 'ab_2', 'ab_3'];
      const first = await batch(
        admin,
        names.map((name) => ({
          definition: definition(name, 'dev'),
          gate1: { content: GATE1, version: 0 },
          intent: { request: INTENT },
        })),
      );
      expect(first.status).toBe(200);
      expect(first.body.results).toHaveLength(3);
      for (const [index, result] of (first.body.results as Array<Record<string, unknown>>).entries()) {
        expect(result).toMatchObject({
          index,
          tableId: await tableId(names[index] ?? ''),
          definition: { status: 202, changed: true, version: 1 },
          gate1: { status: 200, changed: true, version: 1 },
          contract: { status: 200, changed: true },
        });
      }
      for (const name of names) {
        const id = await tableId(name);
        const [row] = await server.sql<{ project: string }>(`SELECT project FROM gds.tables WHERE id = $1`, [
          id,
        ]);
        expect(row?.project).toBe('batch@test');
        const gate1 = await server.request('GET', `/api/tables/${id}/gate1`, { token: admin });
        expect(gate1.body).toMatchObject({ version: 1, content: GATE1 });
        const contract = await server.request('GET', `/api/tables/${id}/semantic-contract`, { token: admin });
        expect(contract.body.contract).toMatchObject({
          grainType: 'ONE_PER_ENTITY',
          grainKeyColumns: ['id'],
        });
      }

      const revisions = (first.body.results as Array<{ contract: { version: number } }>).map(
        (r) => r.contract.version,
      );
      const again = await batch(
        admin,
        await Promise.all(
          names.map(async (name, index) => ({
            definition: definition(name, 'dev', { replaceId: await tableId(name) }),
            definitionVersion: 1,
            gate1: { content: GATE1, version: 1 },
            intent: { request: INTENT, revision: revisions[index] },
          })),
        ),
      );
      expect(again.status).toBe(200);
      for (const result of again.body.results as Array<Record<string, unknown>>)
        expect(result).toMatchObject({
          definition: { status: 200, changed: false, version: 1 },
          gate1: { status: 200, changed: false, version: 1 },
          contract: { status: 200, changed: false },
        });
    },
  );

  it(
    'one item failing leaves the others written: a bad gate1.yml, a stale If-Match, another project’s table, an empty item',
    needs(skip),
    async () => {
      const other = await batch(admin, [
        { definition: definition('ab_4', 'dev', { project: 'other@test' }) },
      ]);
      expect(other.body.results[0].definition).toMatchObject({ status: 202, changed: true });
      const answer = await batch(admin, [
        {
          definition: definition('ab_5', 'dev'),
          gate1: { content: 'patternChecks: nope\n' },
          intent: { request: INTENT },
        },
        {
          definition: definition('ab_1', 'dev', {
            content: definition('ab_1', 'dev').content.replace('label', 'name'),
          }),
          definitionVersion: 7,
          gate1: { content: GATE1_V2 },
        },
        {
          definition: definition('ab_1', 'dev', {
            replaceId: await tableId('ab_1'),
            content: definition('ab_1', 'dev').content.replace('"text"', '"varchar"'),
          }),
          definitionVersion: 7,
        },
        { definition: definition('ab_4', 'dev', { replaceId: await tableId('ab_4') }) },
        {},
        { tableId: await tableId('ab_2'), gate1: { content: GATE1_V2, version: 1 } },
      ]);
      expect(answer.status).toBe(200);
      const [bad, collision, stale, owned, empty, gateOnly] = answer.body.results as Array<
        Record<string, unknown>
      >;
      expect(bad).toMatchObject({
        definition: { status: 202, changed: true },
        gate1: { status: 400, changed: false, error: { error: { code: 'invalid_gate1' } } },
      });
      // As gds's table-by-table writes: the intent is not written over a gate1.yml that was not.
      expect(bad?.contract).toBeUndefined();
      const contract = await server.request('GET', `/api/tables/${await tableId('ab_5')}/semantic-contract`, {
        token: admin,
      });
      expect(contract.status).toBe(404);
      expect(contract.body.error.code).toBe('contract_not_found');
      expect(collision).toMatchObject({ tableId: null, definition: { status: 409, changed: false } });
      expect(collision?.gate1).toBeUndefined();
      expect(stale).toMatchObject({
        tableId: null,
        definition: { status: 412, error: { error: { code: 'precondition_failed' } } },
      });
      expect(owned).toMatchObject({
        tableId: null,
        definition: { status: 409, error: { error: { code: 'owned_elsewhere' } } },
      });
      expect(empty).toMatchObject({
        tableId: null,
        definition: { status: 400, error: { error: { code: 'invalid_request' } } },
      });
      expect(gateOnly).toMatchObject({
        tableId: await tableId('ab_2'),
        gate1: { status: 200, changed: true, version: 2 },
      });
      expect(gateOnly?.definition).toBeUndefined();
      // What the failed steps would have written is not there; the others are.
      expect(
        (await server.request('GET', `/api/tables/${await tableId('ab_5')}/gate1`, { token: admin })).status,
      ).toBe(404);
      const [one] = await server.sql<{ columns: unknown }>(`SELECT columns FROM gds.tables WHERE id = $1`, [
        await tableId('ab_1'),
      ]);
      expect(JSON.stringify(one?.columns)).not.toContain('varchar');
      const [four] = await server.sql<{ project: string }>(`SELECT project FROM gds.tables WHERE id = $1`, [
        await tableId('ab_4'),
      ]);
      expect(four?.project).toBe('other@test');
    },
  );

  it.each(ROLES)(
    'a %s CLI token meets each step as its single write would, in dev and in production',
    async (role) => {
      if (skip !== undefined) return;
      const token = server.user(role).cliToken;
      for (const env of ['dev', 'production']) {
        const prefix = `${role.toLowerCase()}_${env}`;
        const single: Record<string, number> = {};
        const registered = await server.request('POST', '/api/artifacts', {
          token,
          body: definition(`${prefix}_single`, env),
        });
        single.definition = registered.status;
        if (registered.status === 202) {
          const id = registered.body.tableId as string;
          single.gate1 = (
            await server.request('PUT', `/api/tables/${id}/gate1`, {
              token,
              body: { content: GATE1 },
              headers: { 'if-match': '0' },
            })
          ).status;
          if (single.gate1 === 200)
            single.contract = (
              await server.request('PATCH', `/api/tables/${id}/semantic-contract`, { token, body: INTENT })
            ).status;
        }
        const answer = await batch(token, [
          {
            definition: definition(`${prefix}_batch`, env),
            gate1: { content: GATE1, version: 0 },
            intent: { request: INTENT },
          },
        ]);
        expect(answer.status).toBe(200);
        const result = answer.body.results[0] as Record<string, { status: number } | undefined>;
        const batched: Record<string, number> = { definition: result.definition?.status ?? 0 };
        if (result.gate1 !== undefined) batched.gate1 = result.gate1.status;
        if (result.contract !== undefined) batched.contract = result.contract.status;
        expect(batched, `${role} in ${env}`).toEqual(single);
      }
    },
  );

  it(
    'only a person’s session or CLI token may call it: none, MANAGEMENT and DATA-API tokens are 401',
    needs(skip),
    async () => {
      const management = await server.issueToken('OWNER', {
        name: 'batch-management',
        env: '*',
        scopes: ['workspace:write:definition'] as never,
      });
      const data = await server.issueToken('OWNER', {
        name: 'batch-data',
        env: 'dev',
        scopes: [{ tableId: await tableId('ab_1'), permissions: ['read', 'write'] }],
      });
      const item = { definition: definition('ab_3', 'dev') };
      for (const token of [
        undefined,
        management.tokens.accessToken,
        data.tokens.accessToken,
        management.clientToken,
      ]) {
        const answer = await batch(token, [item]);
        expect(answer.status).toBe(401);
      }
      expect(
        (
          await server.request('POST', '/api/artifacts/batch', {
            token: server.user('OWNER').accessToken,
            body: { items: [] },
          })
        ).status,
      ).toBe(400);
    },
  );
});
