// `gds plan` on the real jaffle-shop project (../shared/fixtures, copied), run in the test process: a pull request's
// `--select state:modified+ --state prod/` plans only the changed model and what reads from it; a selection
// that matches nothing warns and exits 0 (exit 2 with --strict), as `dbt ls` does; the human plan lists the
// rules each table gets, implied ones included.
import { cp, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');

let server: TestServer;
let dir: string;
let project: string;
let prod: string;
let connector: string;
let childMap: Record<string, string[]>;

const gds = (args: string[]): Promise<CliResult> =>
  runInProcess(args, { env: serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')) });
const plan = (...args: string[]) =>
  gds(['plan', '--dbt', project, '--connector', connector, '--schema', 'analytics_dev', ...args]);
const tables = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { table?: string }).table)
    // The last line is the {"summary"}.
    .filter((table) => table !== undefined)
    .sort();

/** The tests `plan --json` mapped for stg_orders. */
const stgOrdersMapped = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { table?: string; mappedTests?: Array<{ test: string }> })
    .find((l) => l.table === 'stg_orders')
    ?.mappedTests?.map((t) => t.test);

beforeAll(async () => {
  if (noSharedFixtures !== undefined) return;
  server = await startTestServer();
  connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dbt-select-'));
  project = join(dir, 'jaffle');
  prod = join(dir, 'prod-artifacts');
  await cp(JAFFLE, project, { recursive: true });
  await mkdir(prod);
  const text = await readFile(join(project, 'target', 'manifest.json'), 'utf8');
  await writeFile(join(prod, 'manifest.json'), text);
  // The pull request changes stg_payments' SQL.
  const manifest = JSON.parse(text) as {
    nodes: Record<string, { raw_code: string }>;
    child_map: Record<string, string[]>;
  };
  childMap = manifest.child_map;
  const node = manifest.nodes['model.jaffle_dbt.stg_payments'];
  if (!node) throw new Error('the fixture has no stg_payments');
  node.raw_code += '\n-- a pull request';
  // selectors.yml as dbt writes it into the manifest (no default: the other tests select as they say).
  (manifest as unknown as { selectors: unknown }).selectors = {
    staging_orders: {
      name: 'staging_orders',
      definition: { union: [{ method: 'fqn', value: 'stg_orders', parents: true }] },
    },
  };
  await writeFile(join(project, 'target', 'manifest.json'), JSON.stringify(manifest));
  // The project's relations in the dev warehouse schema: plan refuses a source the connector does not read.
  for (const declaration of (await loadDbtProject(project, {})).declarations) {
    const columns = declaration.columns.map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
    await server.sql(`CREATE TABLE IF NOT EXISTS analytics_dev."${declaration.name}" (${columns})`);
  }
});

afterAll(async () => {
  await server?.close();
});

describe('gds plan --select as dbt ls resolves it', needs(noSharedFixtures), () => {
  it('state:modified with --state plans only the changed model; state:modified+ adds what reads from it', async () => {
    const only = await plan('--select', 'state:modified', '--state', prod, '--json');
    expect(only.stderr).toBe('');
    expect(only.code).toBe(0);
    expect(tables(only.stdout)).toEqual(['stg_payments']);
    const downstream = new Set<string>();
    const pending = ['model.jaffle_dbt.stg_payments'];
    while (pending.length > 0)
      for (const child of childMap[pending.pop() as string] ?? [])
        if (child.startsWith('model.') && !downstream.has(child)) {
          downstream.add(child);
          pending.push(child);
        }
    const plus = await plan('--select', 'state:modified+', '--state', prod, '--json');
    expect(plus.code).toBe(0);
    expect(tables(plus.stdout)).toEqual(
      ['stg_payments', ...[...downstream].map((id) => id.split('.').at(-1) ?? '')].sort(),
    );
    expect(downstream.size).toBeGreaterThan(0);
    const missing = await plan('--select', 'state:modified', '--json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--state DIR');
  });

  it('a selection that matches nothing warns and exits 0; --strict keeps exit 2', async () => {
    const r = await plan('--select', 'nothing_here');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('--select nothing_here matches no enabled model, seed or snapshot');
    expect(r.stdout).toContain('Plan: 0 to create, 0 to change, 0 unchanged, 0 to remove.');
    const strict = await plan('--select', 'nothing_here', '--strict');
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('nothing_here');
  });

  it('--selector NAME plans what the selector of selectors.yml selects; an unknown name, or with --select, is exit 2', async () => {
    const r = await plan('--selector', 'staging_orders', '--json');
    expect(r.code).toBe(0);
    expect(tables(r.stdout)).toEqual(['raw_orders', 'stg_orders']);
    const unknown = await plan('--selector', 'nope');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no selector "nope"');
    expect(unknown.stderr).toContain('staging_orders');
    const both = await plan('--selector', 'staging_orders', '--select', 'stg_payments');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('takes no --select or --exclude');
  });

  it('--exclude of a test and --indirect-selection (or DBT_INDIRECT_SELECTION) leave out the tests dbt would not run', async () => {
    type Line = {
      table?: string;
      mappedTests?: Array<{ test: string }>;
      notMappedTests?: Array<{ test: string; reason: string; excluded?: boolean }>;
    };
    const stgOrders = (stdout: string) =>
      stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line)
        .find((l) => l.table === 'stg_orders');
    const relationship =
      'test.jaffle_dbt.relationships_stg_orders_customer_id__customer_id__ref_stg_customers_.430bf21500';
    const eager = stgOrders((await plan('--select', 'stg_orders', '--json')).stdout);
    expect(eager?.mappedTests?.map((t) => t.test)).toContain(relationship);
    for (const run of [
      () => plan('--select', 'stg_orders', '--indirect-selection', 'cautious', '--json', '--strict'),
      () =>
        runInProcess(
          [
            'plan',
            '--dbt',
            project,
            '--connector',
            connector,
            '--schema',
            'analytics_dev',
            '--select',
            'stg_orders',
            '--json',
            '--strict',
          ],
          {
            env: {
              ...serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')),
              DBT_INDIRECT_SELECTION: 'cautious',
            },
          },
        ),
    ]) {
      const r = await run();
      // A test the selection leaves out is no failure of --strict: dbt does not run it either.
      expect(r.code).toBe(0);
      const line = stgOrders(r.stdout);
      expect(line?.mappedTests?.map((t) => t.test)).not.toContain(relationship);
      expect(line?.notMappedTests).toContainEqual({
        test: relationship,
        reason: expect.stringMatching(/^excluded by the selection: .*indirect selection cautious/) as string,
        excluded: true,
      });
    }
    const excluded = await plan('--select', 'stg_orders', '--exclude', 'test_name:accepted_values');
    expect(excluded.code).toBe(0);
    expect(excluded.stdout).toMatch(
      /not mapped: test\.jaffle_dbt\.accepted_values_stg_orders_status\S*: excluded by the selection/,
    );
    const bad = await plan('--select', 'stg_orders', '--indirect-selection', 'lazy');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('lazy');
  });

  it("dbt_project.yml's flags: indirect_selection applies under --indirect-selection and DBT_INDIRECT_SELECTION", async () => {
    const relationship =
      'test.jaffle_dbt.relationships_stg_orders_customer_id__customer_id__ref_stg_customers_.430bf21500';
    const file = join(project, 'dbt_project.yml');
    const written = await readFile(file, 'utf8');
    const mapped = stgOrdersMapped;
    try {
      await writeFile(file, `${written}\nflags:\n  indirect_selection: cautious\n`);
      const cautious = await plan('--select', 'stg_orders', '--json');
      expect(cautious.code).toBe(0);
      expect(mapped(cautious.stdout)).not.toContain(relationship);
      const flag = await plan('--select', 'stg_orders', '--indirect-selection', 'eager', '--json');
      expect(mapped(flag.stdout)).toContain(relationship);
    } finally {
      await writeFile(file, written);
    }
  });

  it("profiles.yml's config: indirect_selection applies from DBT_PROFILES_DIR or --profiles-dir; its credentials are never shown", async () => {
    const relationship =
      'test.jaffle_dbt.relationships_stg_orders_customer_id__customer_id__ref_stg_customers_.430bf21500';
    const profilesDir = join(dir, 'dbt-profiles');
    await mkdir(profilesDir, { recursive: true });
    await writeFile(
      join(profilesDir, 'profiles.yml'),
      'jaffle_dbt:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n      password: s3cret-pw\nconfig:\n  indirect_selection: cautious\n',
    );
    const planned = stgOrdersMapped;
    const args = ['plan', '--dbt', project, '--connector', connector, '--schema', 'analytics_dev'];
    const env = serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config'));
    const byVariable = await runInProcess([...args, '--select', 'stg_orders', '--json'], {
      env: { ...env, DBT_PROFILES_DIR: profilesDir },
    });
    expect(byVariable.code).toBe(0);
    expect(planned(byVariable.stdout)).not.toContain(relationship);
    const byFlag = await plan('--select', 'stg_orders', '--profiles-dir', profilesDir, '--json');
    expect(byFlag.code).toBe(0);
    expect(planned(byFlag.stdout)).not.toContain(relationship);
    // DBT_INDIRECT_SELECTION comes first, as in dbt.
    const variable = await runInProcess([...args, '--select', 'stg_orders', '--json'], {
      env: { ...env, DBT_PROFILES_DIR: profilesDir, DBT_INDIRECT_SELECTION: 'eager' },
    });
    expect(planned(variable.stdout)).toContain(relationship);
    for (const r of [byVariable, byFlag, variable])
      expect(`${r.stdout}${r.stderr}`).not.toContain('s3cret-pw');
    // Without it, eager (the fixture's dbt_project.yml has no flags:).
    expect(planned((await plan('--select', 'stg_orders', '--json')).stdout)).toContain(relationship);
  });

  it('result: (the run_results.json of --state), access: and config.KEY: select as dbt does', async () => {
    // target/ holds the run_results.json of the dbt run that built every model.
    const views = await plan(
      '--select',
      'result:success,config.materialized:view',
      '--state',
      join(project, 'target'),
      '--json',
    );
    expect(views.code).toBe(0);
    expect(tables(views.stdout)).toEqual(['stg_customers', 'stg_orders', 'stg_payments']);
    const staging = await plan(
      '--select',
      'access:protected,config.docs.show:true',
      '--exclude',
      'path:models/marts',
      '--json',
    );
    expect(staging.code).toBe(0);
    expect(tables(staging.stdout)).toEqual(['stg_customers', 'stg_orders', 'stg_payments']);
    // prod/ holds a manifest only: no run to compare with.
    const none = await plan('--select', 'result:error+', '--state', prod);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('run_results.json');
  });

  it('file: and a bare file name select the model; the plan lists every rule, implied ones included', async () => {
    const r = await plan('--select', 'stg_orders.sql', '--select', 'file:stg_customers.sql');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('+ create stg_orders');
    expect(r.stdout).toContain('+ create stg_customers');
    expect(r.stdout).toMatch(/^ {2}rules:$/m);
    expect(r.stdout).toMatch(/^ {4}grain key \(order_id\): no value twice$/m);
    expect(r.stdout).toMatch(/^ {4}status: may be NULL in any share of rows \(no not_null test/m);
  });
});
