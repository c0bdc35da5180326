// Every real dbt artifact under ../shared/fixtures read as the command that wrote it meant: runs,
// builds, seeds and snapshots rebuild their successful models, seeds and snapshots; docs generate,
// compile, test runs and failed runs built nothing; manifests reduce to what drift detection reads.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { namedTables, readRunResults, reduceManifest } from '../../src/core/dbt-run.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { needs, NO_SHARED_FIXTURES } from '../helpers/skip.js';

const folders = ['real/dbt', 'dbt'].map((f) => join(sharedFixturesDir, f));
const present = folders.filter((f) => existsSync(f));
const files = (suffix: RegExp) =>
  present.flatMap((folder) =>
    readdirSync(folder)
      .filter((name) => suffix.test(name))
      .map((name) => ({ name, path: join(folder, name) })),
  );
const runFiles = files(/run_results.*\.json$/);
const manifestFiles = files(/\.(manifest|catalog)\.json$|-manifest\.json$/);

/** What each file's command meant: the tables it rebuilt (by resource type), or why it is refused. */
const meant: Record<string, Record<string, number> | 'nothing_built' | 'malformed_run_results'> = {
  'a7med_bigquery_1.10.6_generate.run_results.json': 'nothing_built',
  'ashhimself_snowflake_0.20.0rc1_test.run_results.json': 'nothing_built',
  'balboa_snowflake_1.0.4_generate.run_results.json': 'nothing_built',
  'balboa_snowflake_1.3.0_generate.run_results.json': 'nothing_built',
  'balboa_snowflake_1.8.8_generate.run_results.json': 'nothing_built',
  'bozzo_duckdb_1.7.9_build.run_results.json': { model: 3 },
  'dap_v1_0.19.1_run.run_results.json': { model: 8 },
  'dap_v3_0.21.0_build.run_results.json': { model: 8, seed: 3 },
  'dap_v4_1.0.0_build.run_results.json': { model: 5, seed: 3 },
  'dap_v5_1.7.0_build.run_results.json': { model: 35, seed: 3 },
  'dap_v6_1.12.0_generate.run_results.json': 'nothing_built',
  'datavault_postgres_1.4.0_run_error.run_results.json': 'nothing_built',
  'dqmonitor_handmade_test.run_results.json': 'malformed_run_results',
  'manoty_duckdb_1.11.2_run.run_results.json': { model: 14 },
  'manoty_duckdb_1.11.2_test.run_results.json': 'nothing_built',
  'ol_compiled_code.run_results.json': { model: 2 },
  'ol_duckdb.run_results.json': { model: 1 },
  'ol_large.run_results.json': { model: 5 },
  'ol_postgres.run_results.json': { model: 5 },
  'ol_snapshot.run_results.json': { snapshot: 1 },
  'opendatahub_1.5.6_test_fail.run_results.json': 'nothing_built',
  'sfa_1.4.9_generate_snapshots.run_results.json': 'nothing_built',
  'duckdb-v6-run_results.json': { model: 4 },
  'postgres-v4-run_results-all-errors.json': { model: 2 },
  'postgres-v6-run_results-docs-generate.json': 'nothing_built',
};

describe(
  'real dbt run results and manifests',
  needs(present.length === 0 ? NO_SHARED_FIXTURES : undefined),
  () => {
    it('finds run results and manifests in both fixture folders', () => {
      expect(present).toHaveLength(2);
      expect(runFiles.length).toBeGreaterThan(0);
      expect(manifestFiles.length).toBeGreaterThan(0);
    });

    it.each(runFiles.map((f) => [f.name, f.path]))('%s is read as its command meant', (name, path) => {
      const expected = meant[name];
      expect(expected, `${name} has no expectation here: add what its command meant`).toBeDefined();
      const reading = readRunResults(JSON.parse(readFileSync(path, 'utf8')));
      if (typeof expected === 'string') {
        expect(reading).toMatchObject({ ok: false, code: expected });
        if (!reading.ok) expect(reading.message).not.toBe('');
        return;
      }
      expect(reading.ok).toBe(true);
      if (!reading.ok) return;
      const byType: Record<string, number> = {};
      for (const node of reading.built) byType[node.resourceType] = (byType[node.resourceType] ?? 0) + 1;
      expect(byType).toEqual(expected);
    });

    it('names the docs generate command of a generate run', () => {
      const docs = runFiles.find((f) => f.name === 'postgres-v6-run_results-docs-generate.json');
      if (!docs) return;
      const reading = readRunResults(JSON.parse(readFileSync(docs.path, 'utf8')));
      expect(reading).toMatchObject({ ok: false, code: 'nothing_built' });
      if (!reading.ok) expect(reading.message).toContain('dbt docs generate');
    });

    it.each(manifestFiles.map((f) => [f.name, f.path]))(
      '%s reduces to the fields drift detection reads (a catalog is not a manifest)',
      (name, path) => {
        const text = readFileSync(path, 'utf8');
        const reduced = reduceManifest(JSON.parse(text));
        if (name.includes('catalog')) {
          expect(reduced).toBeNull();
          return;
        }
        expect(reduced).not.toBeNull();
        const nodes = Object.values(reduced?.nodes ?? {});
        expect(nodes.length).toBeGreaterThan(0);
        const allowed = ['unique_id', 'resource_type', 'database', 'schema', 'name', 'alias', 'checksum'];
        for (const node of nodes) {
          expect(Object.keys(node).filter((k) => !allowed.includes(k))).toEqual([]);
          expect(['model', 'seed', 'snapshot']).toContain(node.resource_type);
        }
        expect(JSON.stringify(reduced).length).toBeLessThan(text.length);
      },
    );
  },
);

describe('run results gds cannot read', () => {
  it('names the artifact given in their place (a manifest, a catalog)', () => {
    for (const kind of ['manifest/v12', 'catalog/v1', 'sources/v3']) {
      const reading = readRunResults({
        metadata: { dbt_schema_version: `https://schemas.getdbt.com/dbt/${kind}.json` },
        nodes: {},
      });
      expect(reading).toMatchObject({ ok: false, code: 'malformed_run_results' });
      expect(!reading.ok && reading.message, kind).toContain(`it is a dbt ${kind.split('/')[0] ?? ''} (`);
      expect(!reading.ok && reading.message, kind).toContain('target/run_results.json');
    }
  });

  it('a run that built nothing names its command once', () => {
    const reading = readRunResults({
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
      results: [{ status: 'error', unique_id: 'model.p.orders' }],
      args: { which: 'run' },
    });
    expect(!reading.ok && reading.message).toContain('(a dbt run)');
  });

  it('names the version found and the versions read', () => {
    const reading = readRunResults({
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v9.json' },
      results: [],
    });
    expect(reading).toMatchObject({ ok: false, code: 'malformed_run_results' });
    if (!reading.ok) {
      expect(reading.message).toContain('run-results/v9.json');
      expect(reading.message).toContain('v1-v6');
    }
  });
});

describe('run results without args.which', () => {
  const v4 = (results: unknown[]) => ({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v4.json' },
    results,
    elapsed_time: 1,
  });

  it('count a node that ran SQL (message or adapter response) and not one that was only compiled', () => {
    const reading = readRunResults(
      v4([
        { status: 'success', unique_id: 'model.p.built', message: 'CREATE VIEW', adapter_response: {} },
        {
          status: 'success',
          unique_id: 'seed.p.loaded',
          message: null,
          adapter_response: { rows_affected: 3 },
        },
        { status: 'success', unique_id: 'model.p.compiled', message: null, adapter_response: {} },
      ]),
    );
    expect(reading.ok && reading.built.map((b) => b.uniqueId)).toEqual(['model.p.built', 'seed.p.loaded']);
  });

  it('a file whose every success was only compiled built nothing', () => {
    const reading = readRunResults(
      v4([{ status: 'success', unique_id: 'model.p.compiled', message: null, adapter_response: {} }]),
    );
    expect(reading).toMatchObject({ ok: false, code: 'nothing_built' });
  });
});

describe('a dbt Cloud IDE or rpc session that only compiled built nothing', () => {
  const v4 = (args: Record<string, unknown>) => ({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v4.json' },
    results: [
      { status: 'success', unique_id: 'model.p.orders', message: 'OK', adapter_response: { code: 'SELECT' } },
    ],
    elapsed_time: 1,
    args,
  });

  it.each([
    [{ compile: true }, /dbt compile run \(args\.compile true/],
    [{ rpc_method: 'compile_sql' }, /rpc compile_sql/],
    [{ rpc_method: 'run_sql' }, /run_sql/],
    [{ rpc_method: 'cli_args', cli: 'compile --select orders' }, /args\.cli "compile --select orders"/],
    [{ invocation_command: 'dbt docs generate' }, /dbt docs generate run/],
  ])('%j', (args, message) => {
    const reading = readRunResults(v4(args));
    expect(reading).toMatchObject({ ok: false, code: 'nothing_built' });
    expect(!reading.ok && reading.message).toMatch(message);
  });

  it.each([
    [{ rpc_method: 'cli_args', cli: 'run --select orders' }],
    [{ invocation_command: 'dbt build' }],
    [{ which: 'run', compile: true }],
  ])('a session that ran builds: %j', (args) => {
    expect(readRunResults(v4(args))).toMatchObject({ ok: true, built: [{ uniqueId: 'model.p.orders' }] });
  });
});

describe('a microbatch model that built some of its batches (dbt 1.9+)', () => {
  // dbt's NodeStatus "partial success": some batches failed, the others were written, so the table's
  // rows changed and it is rebuilt as far as recertification goes.
  const v6 = (results: unknown[]) => ({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
    results,
    elapsed_time: 1,
    args: { which: 'run' },
  });
  const result = (unique_id: string, status: string) => ({
    status,
    unique_id,
    message: status,
    adapter_response: {},
    batch_results: { successful: [['2026-11-01', '2026-11-02']], failed: [['2026-11-02', '2026-11-03']] },
    relation_name: `"dev"."analytics"."${unique_id.split('.').at(-1) ?? ''}"`,
  });

  it('is a rebuilt table, beside the successful ones', () => {
    const reading = readRunResults(
      v6([
        result('model.p.events', 'partial success'),
        result('model.p.orders', 'success'),
        result('model.p.failed', 'error'),
        result('model.p.downstream', 'skipped'),
      ]),
    );
    expect(reading.ok && reading.built.map((b) => b.uniqueId)).toEqual(['model.p.events', 'model.p.orders']);
  });

  it('alone, is not a run that built nothing', () => {
    expect(readRunResults(v6([result('model.p.events', 'partial success')]))).toMatchObject({
      ok: true,
      built: [{ uniqueId: 'model.p.events', relationName: '"dev"."analytics"."events"' }],
    });
  });
});

describe('versioned models (dbt 1.5+) named without a manifest or a relation_name', () => {
  // dbt builds model.<project>.<name>.v<version> as the relation <name>_v<version> (the balboa 1.8.8
  // manifest: stg_country_populations.v1, .v2, .v3 as stg_country_populations_v1, _v2, _v3). Run results
  // before relation_name (v4, dbt 1.5) name the node only by its unique id.
  const built = (uniqueId: string) => ({ uniqueId, resourceType: 'model' });

  it('each version is its own table, not one table named by the model', () => {
    const naming = namedTables(
      [built('model.shop.orders.v1'), built('model.shop.orders.v2'), built('model.shop.customers')],
      null,
    );
    expect(naming).toEqual({
      ok: true,
      tables: [{ name: 'orders_v1' }, { name: 'orders_v2' }, { name: 'customers' }],
    });
  });

  it('a manifest node still names the table by its alias', () => {
    const node = {
      unique_id: 'model.shop.orders.v2',
      resource_type: 'model',
      name: 'orders',
      alias: 'orders_current',
      schema: 'analytics',
    };
    expect(namedTables([built('model.shop.orders.v2')], { 'model.shop.orders.v2': node })).toEqual({
      ok: true,
      tables: [{ name: 'orders_current', schema: 'analytics' }],
    });
  });
});
