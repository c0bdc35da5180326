// Definitions (§4.7) and the CLI's push path: every status of §7.2 for definitions, the lifecycle rows
// "registered" and "replaced" as the server carries them out (QUARANTINED, auto-baseline job, column
// reconciliation, a schema_change recertification when the table was CERTIFIED), and the baseline job
// profiling the warehouse object for real.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let devConnector: string;
let prodConnector: string;
let definer: string;
let prodDefiner: string;

const connectorId = (name: string) => {
  const found = server.ready.connectors.find((c) => c.name === name);
  if (!found) throw new Error(`no connector ${name}`);
  return found.id;
};

const define = (body: Record<string, unknown>, token = definer) =>
  server.request('POST', '/api/workspace/definitions', { token, body });

const push = (body: Record<string, unknown>, token = server.user('ADMIN').cliToken) =>
  server.request('POST', '/api/artifacts', { token, body });

const yaml = (table: string, columns: string[], source?: string) =>
  [
    `table: ${table}`,
    ...(source ? [`source: ${source}`] : []),
    'columns:',
    ...columns.map((c) => `  - name: ${c}`),
  ].join('\n');

const tableRow = async (id: string) =>
  (
    await server.sql<{
      state: string;
      definition_version: number;
      columns: Array<{ name: string }>;
      active: boolean;
    }>('SELECT state, definition_version, columns, active FROM gds.tables WHERE id = $1', [id])
  )[0];

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  devConnector = connectorId('warehouse-dev');
  prodConnector = connectorId('warehouse-production');
  const management = async (env: string, scopes: string[]) =>
    (await server.issueToken('ADMIN', { name: `m-${env}`, env, scopes: scopes as never })).tokens.accessToken;
  definer = await management('*', ['workspace:write:definition']);
  prodDefiner = await management('production', ['workspace:write:definition']);
});

afterAll(async () => {
  await server?.close();
});

describe('registering a new definition', () => {
  let governanceId: string;
  let jobId: string;

  it('answers 202 with governanceId, trackingUrl and the queued auto-baseline job; the table is QUARANTINED', async () => {
    const response = await define({
      filename: 'products.sql',
      content:
        '-- products, governed\nCREATE OR REPLACE VIEW analytics_dev.products AS\nSELECT id, sku, name, price FROM analytics_dev.products',
      mimeType: 'sql',
      connectorId: devConnector,
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      job: { type: 'gate-baseline-auto', status: 'QUEUED' },
      state: 'QUARANTINED',
    });
    governanceId = response.body.governanceId;
    jobId = response.body.job.id;
    expect(response.body.trackingUrl).toContain(governanceId);
    const row = await tableRow(governanceId);
    expect(row?.state).toBe('QUARANTINED');
    expect(row?.columns.map((c) => c.name)).toEqual(['id', 'sku', 'name', 'price']);
    const [table] = await server.sql('SELECT environment_label, mode, source FROM gds.tables WHERE id = $1', [
      governanceId,
    ]);
    expect(table).toEqual({ environment_label: 'dev', mode: 'MODE_A', source: 'analytics_dev.products' });
    const audit = await server.sql('SELECT action FROM gds.audit_log WHERE table_id = $1', [governanceId]);
    expect(audit.map((a) => a.action)).toEqual(['DEFINITION_REGISTERED']);
  });

  it('shows the job in the table status until it runs; the baseline report profiles the warehouse object', async () => {
    const session = server.user('ADMIN').accessToken;
    const before = await server.request('GET', `/api/tables/${governanceId}/status`, { token: session });
    expect(before.body.activeJobs).toEqual([
      expect.objectContaining({ id: jobId, type: 'gate-baseline-auto', status: 'QUEUED' }),
    ]);
    await server.jobs.startPending();
    const running = await server.request('GET', `/api/tables/${governanceId}/status`, { token: session });
    expect(running.body.activeJobs[0].status).toBe('RUNNING');
    await server.jobs.runPending();
    const after = await server.request('GET', `/api/tables/${governanceId}/status`, { token: session });
    expect(after.body.activeJobs).toEqual([]);
    const [job] = await server.sql('SELECT status, result FROM gds.jobs WHERE id = $1', [jobId]);
    expect(job?.status).toBe('SUCCEEDED');
    expect(job?.result).toMatchObject({
      reportId: jobId,
      source: 'analytics_dev.products',
      rowCount: 3,
      missingColumns: [],
    });
    const name = job?.result.columns.find((c: { name: string }) => c.name === 'name');
    expect(name).toMatchObject({ nullCount: 1, distinctCount: 2 });
    expect(job?.result.columns.find((c: { name: string }) => c.name === 'sku')).toMatchObject({
      nullCount: 0,
      distinctCount: 3,
    });
  });

  it('answers 409 with the spec message on a name collision without replaceId', async () => {
    const response = await define({
      filename: 'customers.yml',
      content: yaml('customers', ['id'], 'analytics_dev.categorydim'),
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(response.status).toBe(409);
    expect(response.body.error.message).toBe("A governance artifact named 'customers' already exists");
    const [held] = await server.sql(
      `SELECT id FROM gds.tables WHERE name = 'customers' AND active AND connector_id = $1`,
      [devConnector],
    );
    expect(response.body.error.details).toMatchObject({ existingId: held?.id });
    const refused = await server.sql(`SELECT details FROM gds.audit_log WHERE action = 'DEFINITION_REFUSED'`);
    expect(refused.at(-1)?.details.refused.status).toBe(409);
  });

  it('answers 409 on a source collision (another name, the same warehouse object)', async () => {
    const response = await define({
      filename: 'clients.yml',
      content: yaml('clients', ['id'], 'analytics_dev.customers'),
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('source_conflict');
    const [held] = await server.sql(
      `SELECT id FROM gds.tables WHERE source = 'analytics_dev.customers' AND active AND connector_id = $1`,
      [devConnector],
    );
    expect(response.body.error.details).toMatchObject({ existingId: held?.id });
    expect(response.body.error.message).toContain('analytics_dev.customers');
  });
  it('answers 409 name_conflict for a name that only looks different: café composed, then café decomposed', async () => {
    const composed = 'caf\u00e9_sales';
    const decomposed = 'CAFE\u0301_sales'; // an E and a combining acute accent, upper case
    const first = await define({
      filename: 'cafe.yml',
      content: yaml(composed, ['product_id'], 'analytics_dev.productsdim'),
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const second = await define({
      filename: 'cafe2.yml',
      content: yaml(decomposed, ['product_id'], 'analytics_dev.productsdim'),
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({
      code: 'name_conflict',
      message: `A governance artifact named '${decomposed}' already exists`,
      details: { existingId: first.body.governanceId },
    });
    const held = await server.sql(`SELECT name FROM gds.tables WHERE active AND name ILIKE 'caf%_sales'`);
    expect(held.map((row) => row.name)).toEqual([composed]);
  });
});

describe('what a definition is refused for', () => {
  it('400 with the parser message and position on a malformed file', async () => {
    const response = await define({
      filename: 'broken.yml',
      content: 'table: broken\ncolumns:\n  - name: [unclosed\n',
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_artifact');
    expect(response.body.error.message).toMatch(/^broken\.yml:\d+(:\d+)?: /);
    expect(response.body.error.details.line).toBeGreaterThanOrEqual(3);
  });

  it('400 Unsupported file type, on definitions (mimeType) and on push (extension)', async () => {
    const defined = await define({
      filename: 'x.csv',
      content: 'a,b',
      mimeType: 'csv',
      connectorId: devConnector,
    });
    expect(defined.status).toBe(400);
    expect(defined.body.error.message).toBe('Unsupported file type');
    const pushed = await push({ filename: 'x.txt', content: 'a,b', connectorId: devConnector });
    expect(pushed.status).toBe(400);
    expect(pushed.body.error.message).toBe('Unsupported file type');
  });

  it('400 when no source is given or declared, even when the file name looks like one', async () => {
    const response = await define({
      filename: 'analytics_dev.categorydim.yml',
      content: yaml('categories', ['category_id']),
      mimeType: 'yaml',
      connectorId: devConnector,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('source_required');
    expect(response.body.error.message).toContain('--source');
  });

  it('400 naming a source that is no warehouse object on the connector', async () => {
    for (const source of ['analytics_dev.nope', 'analytics_staging.customers']) {
      const response = await define({
        filename: 'nope.yml',
        content: yaml('nope', ['id']),
        mimeType: 'yaml',
        connectorId: devConnector,
        source,
      });
      expect(response.status).toBe(400);
      expect(response.body.error.message).toContain(`'${source}'`);
    }
  });

  it('400 for missing fields and unknown fields', async () => {
    expect((await define({ filename: 'a.yml', content: 'x', connectorId: devConnector })).status).toBe(400);
    const unknown = await define({
      filename: 'a.yml',
      content: 'x',
      mimeType: 'yaml',
      connectorId: devConnector,
      extra: 1,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('extra');
  });

  it('404 Connector not found for an unknown connector and for another workspace’s', async () => {
    for (const id of ['con_missing', server.ready.otherWorkspace.connectors[0]?.id ?? '']) {
      const response = await define({
        filename: 'a.yml',
        content: yaml('a', ['id'], 'globex_dev.customers'),
        mimeType: 'yaml',
        connectorId: id,
      });
      expect(response.status).toBe(404);
      expect(response.body.error.message).toBe('Connector not found');
    }
  });

  it('403 when the connector’s environment clashes with an environment-scoped token', async () => {
    const response = await define(
      {
        filename: 'p.yml',
        content: yaml('p', ['id'], 'analytics_dev.categorydim'),
        mimeType: 'yaml',
        connectorId: devConnector,
      },
      prodDefiner,
    );
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('environment_mismatch');
  });

  it('403, not 400, for a refused environment whatever the artifact: authorized before it is read', async () => {
    const orders = server.table('orders');
    const before = await tableRow(orders.id);
    const refused: Array<[string, Record<string, unknown>]> = [
      ['an artifact that does not parse', { content: 'table: [' }],
      ['an artifact with no source', { content: yaml('p', ['id']) }],
      ['a dev table replaced on the production connector', { replaceId: orders.id, content: 'table: [' }],
    ];
    for (const [what, body] of refused) {
      const response = await define(
        {
          filename: 'p.yml',
          content: yaml('p', ['id'], 'analytics_dev.categorydim'),
          mimeType: 'yaml',
          connectorId: body.replaceId === undefined ? devConnector : prodConnector,
          ...body,
        },
        prodDefiner,
      );
      expect(response.status, what).toBe(403);
      expect(response.body.error.code, what).toBe('environment_mismatch');
    }
    expect(await tableRow(orders.id)).toEqual(before);
  });

  it('401 for a session, a CLI token or a DATA-API token; 403 for a MANAGEMENT token without the scope', async () => {
    const body = {
      filename: 'a.yml',
      content: yaml('a', ['id']),
      mimeType: 'yaml',
      connectorId: devConnector,
    };
    const dataApi = await server.issueToken('ADMIN', {
      name: 'd',
      env: '*',
      scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
    });
    const audit = await server.issueToken('ADMIN', {
      name: 'a',
      env: '*',
      scopes: ['workspace:read:audit'] as never,
    });
    for (const token of [
      server.user('OWNER').accessToken,
      server.user('OWNER').cliToken,
      dataApi.tokens.accessToken,
    ]) {
      expect((await define(body, token)).status).toBe(401);
    }
    const missing = await define(body, audit.tokens.accessToken);
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe('missing_scope');
  });

  it('404 for a replaceId that matches nothing', async () => {
    const response = await define({
      filename: 'a.yml',
      content: yaml('a', ['category_id'], 'analytics_dev.categorydim'),
      mimeType: 'yaml',
      connectorId: devConnector,
      replaceId: 'tbl_nothing',
    });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('replace_target_not_found');
  });

  it('never replaces a Mode B table', async () => {
    const crm = server.table('crm_contacts').id;
    const response = await define({
      filename: 'crm.yml',
      content: yaml('crm_contacts', ['email'], 'analytics_dev.categorydim'),
      mimeType: 'yaml',
      connectorId: devConnector,
      replaceId: crm,
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('mode_b_not_replaceable');
    expect((await tableRow(crm))?.state).toBe('CERTIFIED');
  });
});

describe('replacing a definition', () => {
  let governanceId: string;

  beforeAll(async () => {
    const response = await push({
      filename: 'categories.yml',
      content: yaml('categorydim', ['category_id', 'category_name'], 'analytics_dev.categorydim'),
      connectorId: devConnector,
    });
    expect(response.status).toBe(202);
    governanceId = response.body.governanceId;
  });

  it('reconciles columns, bumps the definition version, resets a CERTIFIED table to QUARANTINED and files a schema_change request', async () => {
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [governanceId]);
    const response = await define({
      filename: 'categories.json',
      content: JSON.stringify({
        table: 'categorydim',
        source: 'analytics_dev.categorydim',
        columns: [
          { name: 'category_id', type: 'integer' },
          { name: 'parent_id', type: 'integer' },
        ],
      }),
      mimeType: 'json',
      connectorId: devConnector,
      replaceId: governanceId,
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({
      governanceId,
      state: 'QUARANTINED',
      definitionVersion: 2,
      columns: { added: ['parent_id'], removed: ['category_name'] },
      job: { type: 'gate-baseline-auto', status: 'QUEUED' },
    });
    const row = await tableRow(governanceId);
    expect(row).toMatchObject({ state: 'QUARANTINED', definition_version: 2 });
    expect(row?.columns.map((c) => c.name)).toEqual(['category_id', 'parent_id']);
    const listed = await server.request('GET', '/api/recertification-requests', {
      token: server.user('STEWARD').accessToken,
    });
    expect(listed.body.requests).toEqual([
      expect.objectContaining({ tableId: governanceId, cause: 'schema_change', status: 'OPEN' }),
    ]);
    const [audit] = await server.sql(
      `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'DEFINITION_REPLACED'`,
      [governanceId],
    );
    expect(audit?.details).toMatchObject({
      from: 'CERTIFIED',
      to: 'QUARANTINED',
      columns: { removed: ['category_name'] },
    });
    await server.jobs.runPending();
    const [job] = await server.sql('SELECT result FROM gds.jobs WHERE id = $1', [response.body.job.id]);
    expect(job?.result).toMatchObject({ rowCount: 3, missingColumns: ['parent_id'] });
  });

  it('files no recertification when the replaced table was not CERTIFIED', async () => {
    const response = await push({
      filename: 'categories.yml',
      content: yaml('categorydim', ['category_id', 'category_name'], 'analytics_dev.categorydim'),
      connectorId: devConnector,
      replaceId: governanceId,
    });
    expect(response.status).toBe(202);
    expect(response.body.definitionVersion).toBe(3);
    const [count] = await server.sql(
      'SELECT count(*)::int AS n FROM gds.recertification_requests WHERE table_id = $1',
      [governanceId],
    );
    expect(count?.n).toBe(1);
  });

  it('a replacement declaring what the table holds changes nothing: still CERTIFIED, no request, no audit, no job', async () => {
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [governanceId]);
    const counts = async () =>
      (
        await server.sql<{ requests: number; audits: number; jobs: number }>(
          `SELECT (SELECT count(*)::int FROM gds.recertification_requests WHERE table_id = $1) AS requests,
                  (SELECT count(*)::int FROM gds.audit_log WHERE table_id = $1) AS audits,
                  (SELECT count(*)::int FROM gds.jobs WHERE table_id = $1) AS jobs`,
          [governanceId],
        )
      )[0];
    const before = await counts();
    const held = await server.request('GET', `/api/tables/${governanceId}/definition`, {
      token: server.user('ADMIN').cliToken,
    });
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({
      governanceId,
      state: 'CERTIFIED',
      definitionVersion: 3,
      connectorId: devConnector,
      definition: {
        table: 'categorydim',
        source: 'analytics_dev.categorydim',
        columns: [{ name: 'category_id' }, { name: 'category_name' }],
      },
    });
    const sameReformatted = {
      filename: 'categories.yaml',
      content:
        '# the same definition, written another way\nname: categorydim\ncolumns: [{ name: category_id }, { name: category_name }]\nsource: analytics_dev.categorydim\n',
      mimeType: 'yaml',
      connectorId: devConnector,
      replaceId: governanceId,
    };
    for (const response of [await push(sameReformatted), await define(sameReformatted)]) {
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        governanceId,
        changed: false,
        state: 'CERTIFIED',
        definitionVersion: 3,
      });
    }
    expect(await tableRow(governanceId)).toMatchObject({ state: 'CERTIFIED', definition_version: 3 });
    expect(await counts()).toEqual(before);
  });

  it('403 when the table being replaced is outside an environment-scoped token', async () => {
    const response = await define(
      {
        filename: 'categories.yml',
        content: yaml('categorydim', ['category_id'], 'analytics_prod.customers'),
        mimeType: 'yaml',
        connectorId: prodConnector,
        replaceId: governanceId,
      },
      prodDefiner,
    );
    expect(response.status).toBe(403);
    expect(response.body.error.message).toContain('the table being replaced (categorydim) is in dev');
    expect((await tableRow(governanceId))?.definition_version).toBe(3);
  });

  it('409 when the replacement takes the name of another artifact', async () => {
    const response = await push({
      filename: 'orders.yml',
      content: yaml('orders', ['category_id'], 'analytics_dev.categorydim'),
      connectorId: devConnector,
      replaceId: governanceId,
    });
    expect(response.status).toBe(409);
    // §7.3's "already exists" is the message of a collision without --replace; this one says who holds it.
    expect(response.body.error.code).toBe('name_conflict');
    expect(response.body.error.message).toContain("already holds the name 'orders'");
    expect(response.body.error.details).toMatchObject({ replaceId: governanceId });
    expect((await tableRow(governanceId))?.definition_version).toBe(3);
  });
});

describe('push (POST /api/artifacts)', () => {
  it('takes a session JWT and a CLI token, never a MANAGEMENT token', async () => {
    const response = await push(
      {
        filename: 'stages.yml',
        content: yaml('stages', ['stage_id']),
        connectorId: devConnector,
        source: 'analytics_dev.stg_pipedrive__stages',
      },
      server.user('STEWARD').accessToken,
    );
    expect(response.status).toBe(202);
    expect((await push({ filename: 'x.yml', content: 'x', connectorId: devConnector }, definer)).status).toBe(
      401,
    );
  });

  it('403 when the connector is outside the person’s environment scope', async () => {
    const response = await push(
      {
        filename: 'p.yml',
        content: yaml('prod_orders', ['id'], 'analytics_prod.orders'),
        connectorId: prodConnector,
      },
      server.user('MEMBER').cliToken,
    );
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('environment_mismatch');
  });
});
