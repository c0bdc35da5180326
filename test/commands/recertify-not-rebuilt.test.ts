// `gds recertify` of a dbt run in which some models failed or were skipped: their tables were not rebuilt, so
// they are not signalled, and gds says which (stderr; under --json one warning line, code not_rebuilt, with
// each node and dbt's status), while stdout carries the outcomes of the tables signalled as before. With the
// real run results of a dbt 1.0 build (../shared/fixtures, one model errored) and a dbt 1.8 build written here.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { recertifyEnv, startRecertifyServer } from '../helpers/recertify-runs.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';

describe('recertify of a run with failed and skipped models', () => {
  let server: TestServer;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    ({ server, token } = await startRecertifyServer());
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-unbuilt-'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: recertifyEnv(dir, server.url, token),
    });

  it(
    'a dbt 1.0 build whose one model errored: the others signalled, that one named on stderr',
    needs(noSharedFixtures),
    async () => {
      const file = join(sharedFixturesDir, 'real/dbt/dap_v4_1.0.0_build.run_results.json');
      const r = await gds(['recertify', '--run-results', file, '--env', 'dev', '--json']);
      expect(r.code, r.stderr).toBe(0);
      const response = JSON.parse(r.stdout) as { outcomes: Array<{ table: string; outcome: string }> };
      expect(response.outcomes.map((o) => o.table)).not.toContain('test_insert_overwrite');
      expect(response.outcomes).toContainEqual(
        expect.objectContaining({ table: 'customers', outcome: 'recert_filed' }),
      );
      // Two warning lines: this one, and that dbt 1.0's run results name no relation (no --manifest given).
      const lines = r.stderr.trimEnd().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { warning: { code: string } }).warning.code)).toEqual([
        'not_rebuilt',
        'unnamed_relations',
      ]);
      expect(JSON.parse(lines[0] ?? '')).toEqual({
        warning: {
          code: 'not_rebuilt',
          message: expect.stringContaining('model.jaffle_shop.test_insert_overwrite (error)'),
          details: { notRebuilt: [{ uniqueId: 'model.jaffle_shop.test_insert_overwrite', status: 'error' }] },
        },
      });

      const human = await gds(['recertify', '--run-results', file, '--env', 'dev']);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stderr).toContain(
        '1 model, seed or snapshot of the run was not rebuilt (model.jaffle_shop.test_insert_overwrite (error)): its table is not signalled.',
      );
    },
  );

  it('a build that failed part-way: errored and skipped models named, tests and passing models not', async () => {
    const result = (status: string, uniqueId: string, relation: string | null) => ({
      status,
      unique_id: uniqueId,
      message: status === 'success' ? 'SELECT 3' : null,
      adapter_response: {},
      relation_name: relation,
    });
    const file = join(dir, 'run_results.json');
    await writeFile(
      file,
      JSON.stringify({
        metadata: {
          dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
          dbt_version: '1.8.0',
          invocation_id: 'inv-unbuilt',
        },
        results: [
          result('success', 'seed.shop.raw_orders', '"dev"."analytics_dev"."raw_orders"'),
          result('success', 'model.shop.customers', '"dev"."analytics_dev"."customers"'),
          result('error', 'model.shop.orders', '"dev"."analytics_dev"."orders"'),
          result('fail', 'test.shop.unique_customers_id', null),
          result('skipped', 'model.shop.order_items', '"dev"."analytics_dev"."order_items"'),
          result('skipped', 'snapshot.shop.orders_snapshot', '"dev"."snapshots"."orders_snapshot"'),
        ],
        elapsed_time: 3,
        args: { which: 'build' },
      }),
    );
    const r = await gds(['recertify', '--run-results', file, '--env', 'dev', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const response = JSON.parse(r.stdout) as { outcomes: Array<{ table: string; outcome: string }> };
    // orders is governed (QUARANTINED in the seed), but its model failed: it is not signalled.
    expect(response.outcomes.map((o) => o.table)).toEqual(['raw_orders', 'customers']);
    const warning = (JSON.parse(r.stderr.trimEnd()) as { warning: { details: unknown } }).warning;
    expect(warning.details).toEqual({
      notRebuilt: [
        { uniqueId: 'model.shop.orders', status: 'error' },
        { uniqueId: 'model.shop.order_items', status: 'skipped' },
        { uniqueId: 'snapshot.shop.orders_snapshot', status: 'skipped' },
      ],
    });
  });
});

describe('recertify of run results that name no relation (v1-v4, dbt up to 1.5)', () => {
  let server: TestServer;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    ({ server, token } = await startRecertifyServer());
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-unnamed-'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: recertifyEnv(dir, server.url, token),
    });

  it(
    'without --manifest, one warning: an aliased model may match no table; with it, none',
    needs(noSharedFixtures),
    async () => {
      const run = join(sharedFixturesDir, 'real/dbt/ol_postgres.run_results.json');
      const bare = await gds(['recertify', '--run-results', run, '--env', 'dev', '--json']);
      expect(bare.code, bare.stderr).toBe(0);
      const lines = bare.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] ?? '')).toEqual({
        warning: {
          code: 'unnamed_relations',
          message: expect.stringContaining('Pass --manifest target/manifest.json'),
        },
      });
      const manifest = join(sharedFixturesDir, 'real/dbt/ol_postgres.manifest.json');
      const named = await gds([
        'recertify',
        '--run-results',
        run,
        '--manifest',
        manifest,
        '--env',
        'dev',
        '--json',
      ]);
      expect(named.code, named.stderr).toBe(0);
      expect(named.stderr).toBe('');
    },
  );
});
