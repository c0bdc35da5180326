// A replacement (§3 "definition replaced", §4.7 `replaceId`, `push --replace`) stays in its table's
// environment: one whose connector is in another environment is 404 (§7.2's "replaceId mismatch") naming
// `gds env promote`, which moves a table with promotion's own rules; nothing is written. On every path a
// replacement takes: POST /api/workspace/definitions, POST /api/artifacts (with --connector, and with the
// connector the source's schema picks), its dry run POST /api/artifacts/dry-run (`push --dry-run`), and an
// item of POST /api/artifacts/batch. And a replacement whose
// name or source another table holds is 409 saying which table holds it, not to send the replaceId it sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('a replacement on $engine', ({ engine, postgres, skip }) => {
  let server: TestServer;
  let definer: string;
  let orders: string;
  const connector: Record<string, string> = {};

  const artifact = (name: string, source: string) =>
    [`table: ${name}`, `source: ${source}`, 'columns:', '  - name: id', '  - name: total'].join('\n');
  const body = (env: string | undefined, name = 'orders', source?: string) => ({
    filename: `${name}.yml`,
    mimeType: 'yaml',
    content: artifact(name, source ?? `${env === 'production' ? 'analytics_prod' : 'analytics_dev'}.orders`),
    ...(env === undefined ? {} : { connectorId: connector[env] }),
    replaceId: orders,
  });
  const held = async () =>
    (
      await server.sql<{ environment_label: string; connector_id: string; definition_version: number }>(
        'SELECT environment_label, connector_id, definition_version FROM gds.tables WHERE id = $1',
        [orders],
      )
    )[0];

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({
      jobs: 'manual',
      ...(postgres ? { database: 'postgres' as const } : {}),
    });
    orders = server.table('orders').id;
    for (const c of server.ready.connectors) connector[c.environmentLabel] = c.id;
    definer = (
      await server.issueToken('ADMIN', {
        name: `definer-${engine}`,
        env: '*',
        scopes: ['workspace:write:definition'],
      })
    ).tokens.accessToken;
  });
  afterAll(async () => {
    await server?.close();
  });

  const refusedAsPromotion = (status: number, error: { code: string; message: string }) => {
    expect(status).toBe(404);
    expect(error.code).toBe('replace_environment_mismatch');
    expect(error.message).toContain(`gds env promote ${orders} --to production`);
  };

  it(
    'is 404 on POST /api/workspace/definitions with a connector of another environment',
    needs(skip),
    async () => {
      const before = await held();
      const response = await server.request('POST', '/api/workspace/definitions', {
        token: definer,
        body: body('production'),
      });
      refusedAsPromotion(response.status, response.body.error);
      expect(response.body.error.details).toMatchObject({
        tableId: orders,
        environmentLabel: 'dev',
        connectorEnvironmentLabel: 'production',
      });
      expect(await held()).toEqual(before);
    },
  );

  it(
    'is 404 on POST /api/artifacts, with --connector and with the connector the source picks',
    needs(skip),
    async () => {
      const before = await held();
      const token = server.user('ADMIN').cliToken;
      for (const sent of [body('production'), body(undefined, 'orders', 'analytics_prod.orders')]) {
        const response = await server.request('POST', '/api/artifacts', { token, body: sent });
        refusedAsPromotion(response.status, response.body.error);
      }
      expect(await held()).toEqual(before);
    },
  );

  it(
    'is the same 404 on POST /api/artifacts/dry-run, nothing written; within the environment, what it would do',
    needs(skip),
    async () => {
      const token = server.user('ADMIN').cliToken;
      const before = await held();
      const audited = async () =>
        (await server.sql('SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1', [orders]))[0];
      const auditBefore = await audited();
      const refused = await server.request('POST', '/api/artifacts/dry-run', {
        token,
        body: body('production'),
      });
      refusedAsPromotion(refused.status, refused.body.error);
      const pushed = await server.request('POST', '/api/artifacts', { token, body: body('production') });
      const { request: _dry, requestId: _dryId, ...dryDetails } = refused.body.error.details;
      const { request: _push, requestId: _pushId, ...pushDetails } = pushed.body.error.details;
      expect({ ...refused.body.error, details: dryDetails }).toEqual({
        ...pushed.body.error,
        details: pushDetails,
      });
      const taken = await server.request('POST', '/api/artifacts/dry-run', { token, body: body('dev') });
      expect(taken.status, JSON.stringify(taken.body)).toBe(200);
      expect(taken.body).toMatchObject({
        changed: true,
        tableId: orders,
        state: 'QUARANTINED',
        definitionVersion: (before?.definition_version ?? 0) + 1,
      });
      expect(await held()).toEqual(before);
      expect(await audited()).toEqual(auditBefore);
    },
  );

  it(
    'is refused for the table it names before its artifact is read (§7.2: authorization, then the body)',
    needs(skip),
    async () => {
      const before = await held();
      const malformed = { ...body('production'), content: 'table: [' };
      const token = server.user('ADMIN').cliToken;
      for (const path of ['/api/artifacts', '/api/artifacts/dry-run']) {
        const mismatch = await server.request('POST', path, { token, body: malformed });
        refusedAsPromotion(mismatch.status, mismatch.body.error);
        const unknown = await server.request('POST', path, {
          token,
          body: { ...body('dev'), content: 'table: [', replaceId: 'tbl_none' },
        });
        expect([unknown.status, unknown.body.error.code], path).toEqual([404, 'replace_target_not_found']);
        // A MEMBER, who neither owns customers nor is an admin.
        const member = await server.request('POST', path, {
          token: server.user('MEMBER').cliToken,
          body: { ...body('dev'), content: 'table: [', replaceId: server.table('customers').id },
        });
        expect([member.status, member.body.error.code], path).toEqual([403, 'replace_forbidden']);
      }
      const definitions = await server.request('POST', '/api/workspace/definitions', {
        token: definer,
        body: malformed,
      });
      refusedAsPromotion(definitions.status, definitions.body.error);
      expect(await held()).toEqual(before);
      // The push's refusal is on the audit trail as a refused replacement; its dry run's is not.
      const refusals = await server.sql(
        `SELECT details->>'via' AS via FROM gds.audit_log WHERE table_id = $1 AND action = 'DEFINITION_REPLACE_REFUSED'`,
        [server.table('customers').id],
      );
      expect(refusals).toEqual([{ via: 'push' }]);
    },
  );

  it('is 404 for an item of POST /api/artifacts/batch, nothing written', needs(skip), async () => {
    const before = await held();
    const response = await server.request('POST', '/api/artifacts/batch', {
      token: server.user('ADMIN').cliToken,
      body: { items: [{ definition: body('production') }] },
    });
    expect(response.status).toBe(200);
    const [result] = response.body.results;
    expect(result.definition.changed).toBe(false);
    refusedAsPromotion(result.definition.status, result.definition.error.error);
    expect(await held()).toEqual(before);
  });

  it('still replaces within the environment', needs(skip), async () => {
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: body('dev'),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect((await held())?.environment_label).toBe('dev');
  });

  it(
    'is 409 naming the table that holds the name or the source, not asking for replaceId',
    needs(skip),
    async () => {
      const customers = server.table('customers').id;
      const before = await held();
      for (const [name, source, code, holds] of [
        ['customers', 'analytics_dev.orders', 'name_conflict', `the name 'customers'`],
        ['orders', 'analytics_dev.customers', 'source_conflict', `the source 'analytics_dev.customers'`],
      ] as const) {
        const response = await server.request('POST', '/api/workspace/definitions', {
          token: definer,
          body: body('dev', name, source),
        });
        expect(response.status).toBe(409);
        expect(response.body.error.code).toBe(code);
        expect(response.body.error.details).toMatchObject({ existingId: customers, replaceId: orders });
        const message: string = response.body.error.message;
        expect(message).toContain(`(${customers}) already holds ${holds}`);
        expect(message).not.toMatch(/use replaceId|pass replaceId|--replace/);
      }
      expect(await held()).toEqual(before);
    },
  );
});
