// The recertification signal (§4.8) with the real dbt artifacts of ../shared/fixtures/dbt and a v5 run
// written here: outcomes per table (recert_filed on a CERTIFIED table, not_certified, silent
// not_governed), drift from manifest checksums, environment resolution, and every status of §7.2.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../../src/core/artifact-bounds.js';
import { readSharedFixture } from '../../helpers/fixtures.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { noSharedFixtures } from '../../helpers/skip.js';

let server: TestServer;
let anyEnv: string;
let devOnly: string;
const ids: Record<string, string> = {};

// The fixture's run and manifest as built into analytics_dev, the schema the tables here are over (dbt wrote
// them in main): a rebuilt relation signals only a table over it, never one of its name in another schema.
const intoAnalyticsDev = (text: string, schema: string) =>
  text
    .replaceAll(`\\"${schema}\\"`, '\\"analytics_dev\\"')
    .replaceAll(`"schema": "${schema}"`, '"schema": "analytics_dev"');
const duckdbRun = () =>
  JSON.parse(intoAnalyticsDev(readSharedFixture('dbt/duckdb-v6-run_results.json'), 'main'));
const duckdbManifest = () =>
  JSON.parse(intoAnalyticsDev(readSharedFixture('dbt/duckdb-v12-manifest.json'), 'main'));
/** The run_results.json of a dbt 1.5 run (schema v5) with these results. */
const v5Run = (results: object[]) => ({
  metadata: {
    dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v5.json',
    dbt_version: '1.5.0',
  },
  results,
  elapsed_time: 1.5,
});

const signal = (body: unknown, token = anyEnv) =>
  server.request('POST', '/api/workspace/recertify', { token, body });

const tableState = async (name: string) =>
  (
    await server.sql<{ state: string; data_version: number; definition_checksum: string | null }>(
      'SELECT state, data_version, definition_checksum FROM gds.tables WHERE id = $1',
      [ids[name]],
    )
  )[0];

const openRequests = (name: string) =>
  server.sql<{ cause: string; details: Record<string, unknown> }>(
    `SELECT cause, details FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN' ORDER BY created_at`,
    [ids[name]],
  );

/** Registers a governed Mode A table through the push path, then sets its state directly. */
async function govern(name: string, state: string): Promise<void> {
  const devConnector = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;
  const response = await server.request('POST', '/api/artifacts', {
    token: server.user('ADMIN').cliToken,
    body: {
      filename: `${name}.yml`,
      content: `table: ${name}\nsource: analytics_dev.${name}\ncolumns:\n  - name: ${name === 'categorydim' ? 'category_id' : name === 'productsdim' ? 'product_id' : 'stage_id'}\n`,
      connectorId: devConnector,
    },
  });
  expect(response.status).toBe(202);
  ids[name] = response.body.governanceId;
  await server.sql('UPDATE gds.tables SET state = $2 WHERE id = $1', [ids[name], state]);
}

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  await govern('categorydim', 'CERTIFIED');
  await govern('productsdim', 'QUARANTINED');
  await govern('stg_pipedrive__stages', 'CERTIFIED');
  const issue = async (env: string, scope: string) =>
    (await server.issueToken('ADMIN', { name: `r-${env}`, env, scopes: [scope] as never })).tokens
      .accessToken;
  anyEnv = await issue('*', 'workspace:write:recertify');
  devOnly = await issue('dev', 'workspace:write:recertify');
});

afterAll(async () => {
  await server?.close();
});

describe('tables', () => {
  it('files a recertification for a CERTIFIED table, bumps data versions, and is silent on names it does not govern', async () => {
    const before = await tableState('categorydim');
    const response = await signal({
      tables: ['CategoryDim', { name: 'productsdim', schema: 'analytics_dev' }, 'no_such_table'],
      environmentLabel: 'dev',
      evidence: { kind: 'dbt', runId: 'run-42', summary: { models: 3 } },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      environmentLabel: 'dev',
      submitted: 3,
      governed: 2,
      outcomes: [
        {
          table: 'CategoryDim',
          outcome: 'recert_filed',
          driftDetected: false,
          // Set CERTIFIED above without its view: the signal found it missing and published it.
          certifiedView: expect.objectContaining({
            name: 'certified_dev.categorydim',
            health: 'missing',
            republished: true,
          }),
        },
        { table: 'productsdim', schema: 'analytics_dev', outcome: 'not_certified', driftDetected: false },
        { table: 'no_such_table', outcome: 'not_governed', driftDetected: false },
      ],
    });
    expect((await tableState('categorydim'))?.data_version).toBe((before?.data_version ?? 0) + 1);
    expect((await tableState('categorydim'))?.state).toBe('CERTIFIED');
    expect((await tableState('productsdim'))?.data_version).toBe(1);
    expect((await openRequests('categorydim')).map((r) => r.cause)).toEqual(['ingest']);
    expect(await openRequests('productsdim')).toEqual([]);
    const audit = await server.sql(
      `SELECT table_id, details FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL' ORDER BY seq`,
    );
    // One entry per governed table, written in table-id order (the order their rows are locked in).
    expect(audit.map((a) => a.table_id)).toEqual([ids.categorydim, ids.productsdim].sort());
    expect(audit.find((a) => a.table_id === ids.categorydim)?.details).toMatchObject({
      trigger: 'PIPELINE_RUN',
      evidence: { kind: 'dbt', runId: 'run-42', summary: { models: 3 } },
      environmentLabel: 'dev',
    });
  });

  it('stamps a given trigger; a Mode B table of the same name is not governed by the signal', async () => {
    const response = await signal({
      tables: ['categorydim', 'crm_contacts'],
      environmentLabel: 'dev',
      trigger: 'MANUAL_BACKFILL',
    });
    expect(response.body.outcomes.map((o: { outcome: string }) => o.outcome)).toEqual([
      'recert_filed',
      'not_governed',
    ]);
    const [audit] = await server.sql(
      `SELECT details FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL' ORDER BY seq DESC LIMIT 1`,
    );
    expect(audit?.details.trigger).toBe('MANUAL_BACKFILL');
  });

  it('signals a table named twice in one batch once, into its one open request', async () => {
    const count = async () =>
      (
        await server.sql<{ n: number }>(
          `SELECT signal_count AS n FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
          [ids.categorydim],
        )
      ).map((r) => r.n);
    const [before = 0] = await count();
    const response = await signal({ tables: ['categorydim', 'CATEGORYDIM'], environmentLabel: 'dev' });
    expect(response.body).toMatchObject({ submitted: 2, governed: 2 });
    expect(response.body.outcomes.map((o: { table: string }) => o.table)).toEqual([
      'categorydim',
      'CATEGORYDIM',
    ]);
    expect(await openRequests('categorydim')).toHaveLength(1);
    expect(await count()).toEqual([before + 1]);
  });

  it('matches only tables of the resolved environment', async () => {
    const response = await signal({ tables: ['categorydim'], environmentLabel: 'production' });
    expect(response.body).toMatchObject({ environmentLabel: 'production', governed: 0 });
    expect(response.body.outcomes[0].outcome).toBe('not_governed');
  });

  it('detects drift from a changed definitionHash', async () => {
    await signal({
      tables: [{ name: 'stg_pipedrive__stages', definitionHash: 'a1' }],
      environmentLabel: 'dev',
    });
    const changed = await signal({
      tables: [{ name: 'stg_pipedrive__stages', definitionHash: 'b2' }],
      environmentLabel: 'dev',
    });
    expect(changed.body.outcomes[0]).toEqual({
      table: 'stg_pipedrive__stages',
      outcome: 'recert_filed',
      driftDetected: true,
      certifiedView: expect.objectContaining({ health: 'published', republished: false }),
    });
    expect((await openRequests('stg_pipedrive__stages')).map((r) => r.cause)).toEqual(['ingest', 'drift']);
  });
});

describe('runResults', () => {
  it('takes the successful models of a dbt v6 run, resolved through the v12 manifest', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const response = await signal({
      runResults: duckdbRun(),
      manifest: duckdbManifest(),
      environmentLabel: 'dev',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ environmentLabel: 'dev', submitted: 4, governed: 2 });
    expect(response.body.outcomes).toEqual([
      {
        table: 'categorydim',
        schema: 'analytics_dev',
        outcome: 'recert_filed',
        driftDetected: false,
        certifiedView: expect.objectContaining({ health: 'published' }),
      },
      { table: 'productsdim', schema: 'analytics_dev', outcome: 'not_certified', driftDetected: false },
      { table: 'userdim', schema: 'analytics_dev', outcome: 'not_governed', driftDetected: false },
      { table: 'fact_userproducts', schema: 'analytics_dev', outcome: 'not_governed', driftDetected: false },
    ]);
    const manifest = duckdbManifest();
    expect((await tableState('categorydim'))?.definition_checksum).toBe(
      manifest.nodes['model.new_project.categorydim'].checksum.checksum,
    );
    const [audit] = await server.sql(
      `SELECT details FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL' AND table_id = $1 ORDER BY seq DESC LIMIT 1`,
      [ids.categorydim],
    );
    expect(audit?.details.runResults).toMatchObject({
      schemaVersion: 6,
      invocationId: 'e3531b20-c442-4cbf-99cc-ba17377c7f3d',
      manifestUsed: true,
    });
  });

  it('reports drift when the manifest checksum of a governed model changed since the last signal', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const manifest = duckdbManifest();
    manifest.nodes['model.new_project.categorydim'].checksum.checksum = 'edited-model-sql';
    const response = await signal({ runResults: duckdbRun(), manifest, environmentLabel: 'dev' });
    expect(response.body.outcomes[0]).toEqual({
      table: 'categorydim',
      schema: 'analytics_dev',
      outcome: 'recert_filed',
      driftDetected: true,
      certifiedView: expect.objectContaining({ health: 'published' }),
    });
    expect((await openRequests('categorydim')).at(-1)?.cause).toBe('drift');
  });

  it('ignores a bad manifest and still answers from the run results', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    // Nested deeper than any body may be (§4.8: a bad manifest is ignored and never fails the call).
    let deep: unknown = {};
    for (let i = 0; i < 200; i++) deep = { deep };
    for (const manifest of ['not a manifest', { nodes: 7 }, null, { nodes: {}, deep }]) {
      const response = await signal({ runResults: duckdbRun(), manifest, environmentLabel: 'dev' });
      expect(response.status).toBe(200);
      expect(response.body.outcomes[0]).toEqual({
        table: 'categorydim',
        schema: 'analytics_dev',
        outcome: 'recert_filed',
        driftDetected: false,
        certifiedView: expect.objectContaining({ health: 'published' }),
      });
    }
  });

  it('answers a docs-generate run 400 nothing_built (it rebuilt no table) and files nothing', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const run = JSON.parse(readSharedFixture('dbt/postgres-v6-run_results-docs-generate.json'));
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.recertification_requests');
    const response = await signal({ runResults: run, environmentLabel: 'dev' });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('nothing_built');
    expect(response.body.error.message).toContain('dbt docs generate');
    const compile = await signal({
      runResults: { ...run, args: { which: 'compile' } },
      environmentLabel: 'dev',
    });
    expect(compile.status).toBe(400);
    expect(compile.body.error.code).toBe('nothing_built');
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.recertification_requests')).toEqual(before);
  });

  it('counts seeds and snapshots as rebuilt tables, and matches models by relation name', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const run = JSON.parse(
      intoAnalyticsDev(
        readSharedFixture('dbt/postgres-v6-run_results-docs-generate.json'),
        'public_pipedrive_analytics',
      ),
    );
    run.args = { which: 'build' };
    run.results.push(
      { status: 'success', unique_id: 'seed.shop.categorydim' },
      { status: 'success', unique_id: 'snapshot.shop.productsdim' },
    );
    const response = await signal({ runResults: run, environmentLabel: 'dev' });
    expect(response.status).toBe(200);
    expect(response.body.submitted).toBe(10);
    const governed = response.body.outcomes
      .filter((o: { outcome: string }) => o.outcome !== 'not_governed')
      .map((o: { table: string }) => o.table)
      .sort();
    expect(governed).toEqual(['categorydim', 'productsdim', 'stg_pipedrive__stages']);
  });

  it('reads a v5 run: only successful models count', async () => {
    const v5 = v5Run([
      {
        status: 'success',
        unique_id: 'model.shop.categorydim',
        relation_name: '"warehouse"."analytics_dev"."categorydim"',
      },
      {
        status: 'error',
        unique_id: 'model.shop.productsdim',
        relation_name: '"warehouse"."analytics"."productsdim"',
      },
      { status: 'pass', unique_id: 'test.shop.not_null_categorydim_category_id', relation_name: null },
    ]);
    const response = await signal({ runResults: v5, environmentLabel: 'dev' });
    expect(response.body).toMatchObject({ submitted: 1, governed: 1 });
    expect(response.body.outcomes[0].table).toBe('categorydim');
  });

  it("names a table by its relation, in the quoting of the run's warehouse (BigQuery and Databricks backticks)", async () => {
    // An aliased model: its unique id says stg_categories, its relation (the governed table) categorydim.
    const run = (relationName: string) => ({
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
        dbt_version: '1.8.0',
      },
      results: [{ status: 'success', unique_id: 'model.shop.stg_categories', relation_name: relationName }],
      elapsed_time: 1,
      args: { which: 'run' },
    });
    for (const relation of [
      '`my-project-42`.`analytics_dev`.`categorydim`',
      '`analytics_dev`.`categorydim`',
      '"warehouse"."analytics_dev"."categorydim"',
      'WAREHOUSE.ANALYTICS_DEV.CATEGORYDIM',
    ]) {
      const response = await signal({ runResults: run(relation), environmentLabel: 'dev' });
      expect(response.status, relation).toBe(200);
      expect(response.body.outcomes, relation).toMatchObject([{ table: 'categorydim' }]);
      expect(response.body.governed, relation).toBe(1);
    }
  });

  it('reads the v4 run (no relation_name) by unique id; a v4 run whose models all errored built nothing (400)', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const v4 = JSON.parse(readSharedFixture('dbt/postgres-v4-run_results-all-errors.json'));
    const accepted = await signal({ runResults: v4, environmentLabel: 'dev' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.outcomes.map((o: { table: string }) => o.table)).toEqual([
      'customer_order_rank',
      'order_dynamics',
    ]);
    v4.results = v4.results.map((r: object) => ({ ...r, status: 'error' }));
    const failed = await signal({ runResults: v4, environmentLabel: 'dev' });
    expect(failed.status).toBe(400);
    expect(failed.body.error.code).toBe('nothing_built');
  });

  it('recognises a raw run-results body by shape; naming no environment, it needs an environment-scoped token', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const raw = await signal(duckdbRun(), devOnly);
    expect(raw.status).toBe(200);
    expect(raw.body).toMatchObject({ environmentLabel: 'dev', submitted: 4, governed: 2 });
    const agnostic = await signal(duckdbRun(), anyEnv);
    expect(agnostic.status).toBe(400);
    expect(agnostic.body.error.code).toBe('environment_required');
  });

  it('reads a top-level environmentLabel of a raw run-results body as in the wrapped body', async () => {
    const raw = v5Run([
      {
        status: 'success',
        unique_id: 'model.shop.categorydim',
        relation_name: '"dw"."analytics_dev"."categorydim"',
      },
    ]);
    const requestsBefore = await openRequests('categorydim');
    const versionBefore = (await tableState('categorydim'))?.data_version;
    const mismatch = await signal({ ...raw, environmentLabel: 'production' }, devOnly);
    expect(mismatch.status).toBe(403);
    expect(mismatch.body.error.code).toBe('environment_mismatch');
    expect((await tableState('categorydim'))?.data_version).toBe(versionBefore);
    const notAString = await signal({ ...raw, environmentLabel: 5 }, anyEnv);
    expect(notAString.status).toBe(400);
    expect(notAString.body.error).toMatchObject({
      code: 'invalid_request',
      details: { field: 'environmentLabel' },
    });
    const unknown = await signal({ ...raw, environmentLabel: 'qa' }, anyEnv);
    expect(unknown.body.error.code).toBe('unknown_environment');
    expect((await tableState('categorydim'))?.data_version).toBe(versionBefore);
    expect(await openRequests('categorydim')).toEqual(requestsBefore);
    for (const token of [anyEnv, devOnly]) {
      const named = await signal({ ...raw, environmentLabel: 'dev' }, token);
      expect(named.status).toBe(200);
      expect(named.body).toMatchObject({ environmentLabel: 'dev', submitted: 1, governed: 1 });
      expect(named.body.outcomes[0]).toMatchObject({ table: 'categorydim', outcome: 'recert_filed' });
    }
    const unnamed = await signal(raw, anyEnv);
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.code).toBe('environment_required');
  });

  it('names a model whose manifest node has an empty alias and name by its relation, else its unique id', async () => {
    const manifest = {
      nodes: {
        'model.shop.categorydim': {
          unique_id: 'model.shop.categorydim',
          resource_type: 'model',
          alias: '',
          name: '',
          schema: '',
        },
      },
    };
    for (const relation of [{ relation_name: '"dw"."analytics_dev"."categorydim"' }, {}]) {
      const runResults = v5Run([{ status: 'success', unique_id: 'model.shop.categorydim', ...relation }]);
      const response = await signal({ runResults, manifest, environmentLabel: 'dev' });
      expect(response.status, JSON.stringify(relation)).toBe(200);
      expect(response.body, JSON.stringify(relation)).toMatchObject({ submitted: 1, governed: 1 });
      expect(response.body.outcomes[0]).toMatchObject({ table: 'categorydim', outcome: 'recert_filed' });
    }
  });

  it('ignores a manifest whose node names the model in text no database holds (NUL, a lone surrogate)', async () => {
    // §4.8: a bad manifest is ignored and never fails the call. Before, a NUL in the alias or checksum of
    // the rebuilt model's node reached the database: 400 invalid_input, nothing filed.
    const runResults = v5Run([
      {
        status: 'success',
        unique_id: 'model.shop.categorydim',
        relation_name: '"dw"."analytics_dev"."categorydim"',
      },
    ]);
    const node = (fields: object) => ({
      nodes: {
        'model.shop.categorydim': { resource_type: 'model', name: 'categorydim', ...fields },
      },
    });
    for (const manifest of [
      node({ alias: 'category\u0000dim' }),
      node({ checksum: { name: 'sha256', checksum: 'ab\u0000cd' } }),
      node({ alias: 'category\uD800dim' }),
      { nodes: { 'model.shop.categorydim\u0000': { resource_type: 'model', alias: 'x' } } },
    ]) {
      const response = await signal({ runResults, manifest, environmentLabel: 'dev' });
      expect(response.status, JSON.stringify(manifest)).toBe(200);
      expect(response.body.outcomes).toEqual([
        expect.objectContaining({ table: 'categorydim', outcome: 'recert_filed', driftDetected: false }),
      ]);
    }
  });

  it('leaves out only the manifest nodes in such text: the others still name their tables', async () => {
    const runResults = v5Run([
      { status: 'success', unique_id: 'model.shop.category_model' },
      { status: 'success', unique_id: 'model.shop.broken' },
    ]);
    const manifest = {
      nodes: {
        // dbt names the relation by its alias: the model category_model builds categorydim.
        'model.shop.category_model': { resource_type: 'model', name: 'category_model', alias: 'categorydim' },
        'model.shop.broken': { resource_type: 'model', name: 'broken', alias: 'bro\u0000ken' },
      },
    };
    const response = await signal({ runResults, manifest, environmentLabel: 'dev' });
    expect(response.status).toBe(200);
    expect(response.body.outcomes).toContainEqual(
      expect.objectContaining({ table: 'categorydim', outcome: 'recert_filed' }),
    );
  });

  it('answers 400 nothing_built when no successful result names a table, and files nothing', async () => {
    const runResults = v5Run([
      { status: 'success', unique_id: 'model' },
      { status: 'success', unique_id: 'seed.shop' },
      { status: 'error', unique_id: 'model.shop.categorydim' },
    ]);
    const before = await server.sql('SELECT count(*)::int AS n FROM gds.recertification_requests');
    const versionBefore = (await tableState('categorydim'))?.data_version;
    for (const manifest of [undefined, { nodes: {} }]) {
      const response = await signal({ runResults, manifest, environmentLabel: 'dev' });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('nothing_built');
      expect(response.body.error.message).toContain('built nothing');
      expect(response.body.error.message).toContain('"seed.shop"');
    }
    expect(await server.sql('SELECT count(*)::int AS n FROM gds.recertification_requests')).toEqual(before);
    expect((await tableState('categorydim'))?.data_version).toBe(versionBefore);
  });
});

describe('refusals (§7.2)', () => {
  it('401 for a DATA-API token, a session or a CLI token; 403 for a MANAGEMENT token without the scope', async () => {
    const dataApi = await server.issueToken('ADMIN', {
      name: 'd',
      env: '*',
      scopes: [{ tableId: server.table('crm_contacts').id, permissions: ['read'] }],
    });
    const certifier = await server.issueToken('ADMIN', {
      name: 'c',
      env: '*',
      scopes: ['workspace:write:certify'] as never,
    });
    const body = { tables: ['categorydim'], environmentLabel: 'dev' };
    for (const token of [
      dataApi.tokens.accessToken,
      server.user('OWNER').accessToken,
      server.user('OWNER').cliToken,
    ]) {
      expect((await signal(body, token)).status).toBe(401);
    }
    const missing = await signal(body, certifier.tokens.accessToken);
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe('missing_scope');
  });

  it('403 when the body names another environment than the token’s; the token’s own is used when none is named', async () => {
    const mismatch = await signal({ tables: ['categorydim'], environmentLabel: 'production' }, devOnly);
    expect(mismatch.status).toBe(403);
    const own = await signal({ tables: ['categorydim'] }, devOnly);
    expect(own.status).toBe(200);
    expect(own.body.environmentLabel).toBe('dev');
  });

  it('403, not 400, when the body names another environment, whatever else the body gets wrong', async () => {
    const wrong: unknown[] = [
      { tables: [] },
      { tables: 'categorydim' },
      { tables: Array.from({ length: 501 }, (_, i) => `t${i}`) },
      { tables: ['categorydim'], runResults: {} },
      {},
      { runResults: { metadata: {}, results: [1] } },
      { tables: ['categorydim'], trigger: '' },
      { tables: ['categorydim'], bogus: 1 },
    ];
    for (const body of wrong) {
      const response = await signal({ ...(body as object), environmentLabel: 'production' }, devOnly);
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(403);
      expect(response.body.error.code).toBe('environment_mismatch');
    }
  });

  it('400 without environmentLabel for an environment-agnostic token, and for an unconfigured environment', async () => {
    const missing = await signal({ tables: ['categorydim'] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('environmentLabel');
    const unknown = await signal({ tables: ['categorydim'], environmentLabel: 'qa' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('unknown_environment');
  });

  it('400 for neither or both of tables / runResults, and for invalid tables arrays', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const cases: unknown[] = [
      { environmentLabel: 'dev' },
      { tables: ['a'], runResults: duckdbRun(), environmentLabel: 'dev' },
      { tables: [], environmentLabel: 'dev' },
      { tables: [5], environmentLabel: 'dev' },
      { tables: [{ schema: 'x' }], environmentLabel: 'dev' },
      { tables: 'categorydim', environmentLabel: 'dev' },
      { tables: Array.from({ length: 501 }, (_, i) => `t${i}`), environmentLabel: 'dev' },
    ];
    const codes = [];
    for (const body of cases) {
      const response = await signal(body);
      expect(response.status).toBe(400);
      codes.push(response.body.error.code);
    }
    expect(codes.at(-1)).toBe('too_many_tables');
    const atLimit = await signal({
      tables: Array.from({ length: 500 }, (_, i) => `t${i}`),
      environmentLabel: 'dev',
    });
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.submitted).toBe(500);
  });

  it('400 for malformed run results', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const noResults = { metadata: duckdbRun().metadata };
    const v7 = {
      ...duckdbRun(),
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v7.json' },
    };
    for (const runResults of [noResults, v7, 'run', { metadata: {}, results: [1] }]) {
      const response = await signal({ runResults, environmentLabel: 'dev' });
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('malformed_run_results');
    }
    const newer = await signal({ runResults: v7, environmentLabel: 'dev' });
    expect(newer.body.error.message).toContain('(v7)');
    expect(newer.body.error.message).toContain('gds reads v1-v6');
  });

  it('takes a body of exactly 25 MB (26,214,400 bytes) and answers 413 to one byte more, filing nothing', async () => {
    // Run results whose one result carries what dbt writes beside it (compiled SQL): the padding is there.
    const sized = (bytes: number) => {
      const result = { status: 'success', unique_id: 'model.shop.categorydim', compiled_code: '' };
      const body = { runResults: v5Run([result]), environmentLabel: 'dev' };
      result.compiled_code = 'x'.repeat(bytes - JSON.stringify(body).length);
      expect(Buffer.byteLength(JSON.stringify(body))).toBe(bytes);
      return body;
    };
    const before = await tableState('categorydim');
    const over = await signal(sized(REQUEST_BODY_LIMIT_BYTES + 1));
    expect(over.status).toBe(413);
    expect(await tableState('categorydim')).toEqual(before);
    const at = await signal(sized(REQUEST_BODY_LIMIT_BYTES));
    expect(at.status).toBe(200);
    expect(at.body.submitted).toBe(1);
  });

  it('413 for a body over 25 MB', async () => {
    const filler = 'x'.repeat(25 * 1024 * 1024);
    const response = await signal({
      tables: ['categorydim'],
      environmentLabel: 'dev',
      evidence: { summary: filler },
    });
    expect(response.status).toBe(413);
  });
});

describe('a rebuilt relation whose name another table’s source also ends in', () => {
  it('signals the table of that relation, not an older table over another schema’s relation of that name', async () => {
    // raw.shipments (registered first, as raw_shipments) and the dbt model shipments (analytics_dev.shipments)
    // are two relations; a run that rebuilt the model says nothing about raw.shipments.
    await server.sql(`CREATE SCHEMA IF NOT EXISTS raw`);
    await server.sql(`CREATE TABLE raw.shipments (id integer)`);
    await server.sql(`CREATE TABLE analytics_dev.shipments (id integer)`);
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ('con_raw', $1, 'raw-dev', 'postgres', 'ACTIVE', 'dev', 'raw', now())`,
      [server.ready.workspaceId],
    );
    const register = async (name: string, source: string, connectorId: string) => {
      const response = await server.request('POST', '/api/artifacts', {
        token: server.user('ADMIN').cliToken,
        body: {
          filename: `${name}.yml`,
          content: `table: ${name}\nsource: ${source}\ncolumns:\n  - name: id\n`,
          connectorId,
        },
      });
      expect(response.status).toBe(202);
      return response.body.governanceId as string;
    };
    const dev = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
    const raw = await register('raw_shipments', 'raw.shipments', 'con_raw');
    const model = await register('shipments', 'analytics_dev.shipments', dev);
    const run = {
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
      results: [
        {
          status: 'success',
          unique_id: 'model.shop.shipments',
          relation_name: '"dev"."analytics_dev"."shipments"',
        },
      ],
      elapsed_time: 1,
      args: { which: 'run' },
    };
    const versions = async () =>
      Object.fromEntries(
        (
          await server.sql<{ id: string; data_version: number }>(
            'SELECT id, data_version FROM gds.tables WHERE id = ANY($1)',
            [[raw, model]],
          )
        ).map((r) => [r.id, Number(r.data_version)]),
      );
    const before = await versions();
    const manifest = {
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
      nodes: {
        'model.shop.shipments': {
          unique_id: 'model.shop.shipments',
          resource_type: 'model',
          schema: 'analytics_dev',
          name: 'shipments',
          alias: 'shipments',
        },
      },
    };
    for (const body of [{ runResults: run }, { runResults: run, manifest }]) {
      const response = await signal({ ...body, environmentLabel: 'dev' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ governed: 1, outcomes: [{ table: 'shipments' }] });
    }
    const after = await versions();
    expect(after[model]).toBe((before[model] ?? 0) + 2);
    expect(after[raw]).toBe(before[raw]);
  });

  it('a run that rebuilt both relations of that name signals both tables', async () => {
    const [rawId, modelId] = (
      await server.sql<{ id: string }>(
        "SELECT id FROM gds.tables WHERE name IN ('raw_shipments', 'shipments') AND active ORDER BY name",
      )
    ).map((r) => r.id);
    const versions = async () =>
      (
        await server.sql<{ data_version: number }>(
          'SELECT data_version FROM gds.tables WHERE id = ANY($1) ORDER BY name',
          [[rawId, modelId]],
        )
      ).map((r) => Number(r.data_version));
    const before = await versions();
    const response = await signal({
      runResults: {
        metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
        results: [
          {
            status: 'success',
            unique_id: 'model.shop.shipments',
            relation_name: '"dev"."analytics_dev"."shipments"',
          },
          {
            status: 'success',
            unique_id: 'model.ingest.shipments',
            relation_name: '"dev"."raw"."shipments"',
          },
        ],
        elapsed_time: 1,
        args: { which: 'run' },
      },
      environmentLabel: 'dev',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ submitted: 2, governed: 2 });
    expect(await versions()).toEqual(before.map((v) => v + 1));
  });

  it('a relation with no table of its own does not take the table over its namesake in another schema', async () => {
    // Only analytics_dev.parcels is governed (as parcels). The run rebuilt raw.parcels first, then the model
    // over analytics_dev.parcels: the table hears of its own relation's rebuild, with that model's definition,
    // and raw.parcels is not governed.
    await server.sql(`CREATE TABLE analytics_dev.parcels (id integer)`);
    const dev = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
    const registered = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: {
        filename: 'parcels.yml',
        content: 'table: parcels\nsource: analytics_dev.parcels\ncolumns:\n  - name: id\n',
        connectorId: dev,
      },
    });
    expect(registered.status).toBe(202);
    const node = (id: string, schema: string, checksum: string) => ({
      unique_id: id,
      resource_type: 'model',
      database: 'dev',
      schema,
      name: 'parcels',
      alias: 'parcels',
      checksum: { name: 'sha256', checksum },
    });
    const response = await signal({
      runResults: {
        metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
        results: [
          { status: 'success', unique_id: 'model.ingest.parcels', relation_name: '"dev"."raw"."parcels"' },
          {
            status: 'success',
            unique_id: 'model.shop.parcels',
            relation_name: '"dev"."analytics_dev"."parcels"',
          },
        ],
        elapsed_time: 1,
        args: { which: 'run' },
      },
      manifest: {
        metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
        nodes: {
          'model.ingest.parcels': node('model.ingest.parcels', 'raw', 'c-raw'),
          'model.shop.parcels': node('model.shop.parcels', 'analytics_dev', 'c-shop'),
        },
      },
      environmentLabel: 'dev',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ submitted: 2, governed: 1 });
    expect(response.body.outcomes.map((o: { outcome: string }) => o.outcome === 'not_governed')).toEqual([
      true,
      false,
    ]);
    const [table] = await server.sql<{ definition_checksum: string | null; data_version: number }>(
      "SELECT definition_checksum, data_version FROM gds.tables WHERE name = 'parcels' AND active",
    );
    expect(table?.definition_checksum).toBe('c-shop');
  });
});
