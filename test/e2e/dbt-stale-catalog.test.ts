// A column removed from (and another added to) a model's SQL, the project built again (`dbt build` writes a
// new manifest.json) but `dbt docs generate` not run since: target/catalog.json still lists the columns the
// relation had. gds reads that model's columns from its compiled SQL, not from the older catalog, so `plan
// --json` says the definition (and gate1.yml's per-column rules) change, `apply` writes them, and the next
// plan is empty; but after only dbt compile (its run_results.json says the view was not rebuilt), the
// catalog's columns are the relation's and nothing changes. The real jaffle-shop project (../shared/fixtures,
// copied; its catalog is already older than its manifest, its run_results.json of a dbt run newer), gds run
// in the test process against the reference server on PGlite.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
import { jsonLines, linesWhere } from './generated-project.js';

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const SCHEMA = 'analytics_dev';

let server: TestServer;
let dir: string;
let project: string;

const gds = (args: string[]): Promise<CliResult> =>
  runInProcess(args, { env: serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')) });
const onDev = () => ['--dbt', project, '--connector', 'warehouse-dev', '--schema', SCHEMA];

/** The columns the service holds in stg_orders' definition. */
async function heldColumns(): Promise<string[]> {
  const [row] = await server.sql<{ id: string }>(
    'SELECT id FROM gds.tables WHERE workspace_id = $1 AND name = $2 AND active',
    [server.ready.workspaceId, 'stg_orders'],
  );
  const definition = await server.request('GET', `/api/tables/${row?.id ?? ''}/definition`, {
    token: server.user('ADMIN').cliToken,
  });
  return (definition.body as { definition: { columns: Array<{ name: string }> } }).definition.columns.map(
    (c) => c.name,
  );
}

beforeAll(async () => {
  if (noSharedFixtures !== undefined) return;
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-stale-catalog-'));
  project = join(dir, 'jaffle');
  await cp(JAFFLE, project, { recursive: true });
  for (const declaration of (await loadDbtProject(project, {})).declarations) {
    const columns = declaration.columns.map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
    await server.sql(`CREATE TABLE ${SCHEMA}."${declaration.name}" (${columns})`);
  }
});

afterAll(async () => {
  await server?.close();
});

/** target/ of the copied project, and the file of stg_orders' DDL that dbt run wrote there. */
const targetFile = (name: string) => join(project, 'target', name);
const STG_ORDERS_DDL = 'run/jaffle_dbt/models/staging/stg_orders.sql';

/**
 * stg_orders' SQL without order_date, as dbt compile (`-s stg_orders` when `only`) writes it: a new manifest
 * and a run_results.json of the compile, its results' messages and adapter responses empty. `ddl`: target/run's
 * DDL of the new SQL too, as an earlier dbt run of it wrote it. Gives back what restores the three files.
 */
async function compileWithoutOrderDate(options: {
  only?: boolean;
  ddl?: boolean;
}): Promise<() => Promise<void>> {
  const files = ['manifest.json', 'run_results.json', STG_ORDERS_DDL].map(targetFile);
  const texts = await Promise.all(files.map((path) => readFile(path, 'utf8')));
  const restore = async () => {
    await Promise.all(files.map((path, i) => writeFile(path, texts[i] ?? '')));
  };
  const manifest = JSON.parse(texts[0] ?? '') as {
    metadata: { generated_at: string };
    nodes: Record<string, { compiled_code: string }>;
  };
  const node = manifest.nodes['model.jaffle_dbt.stg_orders'];
  if (node === undefined) throw new Error('the fixture has no stg_orders');
  node.compiled_code = node.compiled_code.replace(/\n\s*order_date,/, '');
  const now = new Date().toISOString();
  manifest.metadata.generated_at = now;
  const run = JSON.parse(texts[1] ?? '') as {
    metadata: { generated_at: string };
    args: { which: string };
    results: Array<Record<string, unknown>>;
  };
  run.metadata.generated_at = now;
  run.args.which = 'compile';
  if (options.only === true)
    run.results = run.results.filter((r) => r['unique_id'] === 'model.jaffle_dbt.stg_orders');
  for (const result of run.results) Object.assign(result, { message: null, adapter_response: {} });
  await Promise.all([
    writeFile(files[0] ?? '', JSON.stringify(manifest)),
    writeFile(files[1] ?? '', JSON.stringify(run)),
    ...(options.ddl === true
      ? [
          writeFile(
            files[2] ?? '',
            `\n  create view "jaffle_dbt"."main"."stg_orders__dbt_tmp" as (\n    ${node.compiled_code}\n  );`,
          ),
        ]
      : []),
  ]);
  return restore;
}

/** `gds plan --json` of the project, which changes nothing as the catalog's columns are kept: its stderr. */
async function planKeepingCatalog(): Promise<string> {
  const plan = await gds(['plan', ...onDev(), '--json']);
  expect(plan.code, plan.stderr).toBe(0);
  expect(jsonLines(plan.stdout).at(-1)).toMatchObject({ summary: { create: 0, replace: 0, remove: 0 } });
  expect(plan.stderr).toContain('not rebuilt since the catalog');
  return plan.stderr;
}

describe('a model whose columns changed since dbt docs generate', needs(noSharedFixtures), () => {
  it('after dbt compile only (run_results.json says so), keeps the catalog: no change is planned', async () => {
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    // The SQL changes and dbt compile writes a new manifest and a run_results.json of the compile; the view
    // is not rebuilt, so the warehouse (and the catalog) still have order_date, as target/run's DDL.
    const restore = await compileWithoutOrderDate({});
    try {
      const stderr = await planKeepingCatalog();
      expect(stderr).toContain('model.jaffle_dbt.stg_orders: catalog.json');
      expect(stderr).toContain('dbt compile');
    } finally {
      await restore();
    }
  });

  it('after dbt run then dbt compile (target/run holds the build of its new SQL), is planned from its compiled SQL', async () => {
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    // dbt run -s stg_orders rebuilds the view of the new SQL (writing target/run's DDL of it), then dbt compile
    // -s stg_orders writes a run_results.json of the compile alone: the warehouse no longer has order_date,
    // though the last command only compiled the model.
    const restore = await compileWithoutOrderDate({ only: true, ddl: true });
    try {
      const plan = await gds(['plan', ...onDev(), '--json']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(linesWhere(jsonLines(plan.stdout), ['action', 'replace'], 'table', 'changes')).toEqual([
        ['stg_orders', { definition: true, gate1: true, contract: false }],
      ]);
      expect(plan.stderr).toContain('target/run holds its build of this SQL');
      expect(plan.stderr).not.toContain('not rebuilt since the catalog');
    } finally {
      await restore();
    }
  });

  it('after a dbt run that failed then dbt compile (logs/dbt.log says so), keeps the catalog: no change is planned', async () => {
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    // dbt run -s stg_orders writes target/run's DDL of the new SQL, then the warehouse refuses it: the view
    // keeps order_date. dbt's file log says so, as dbt 1.x writes it; dbt compile -s stg_orders follows.
    const restore = await compileWithoutOrderDate({ only: true, ddl: true });
    const id = 'model.jaffle_dbt.stg_orders';
    const ddl = await readFile(targetFile(STG_ORDERS_DDL), 'utf8');
    await mkdir(join(project, 'logs'), { recursive: true });
    await writeFile(
      join(project, 'logs', 'dbt.log'),
      [
        `\u001b[0m10:00:01.000001 [debug] [Thread-1 (]: Began running node ${id}`,
        `\u001b[0m10:00:01.000002 [info ] [Thread-1 (]: 1 of 1 START sql view model main.stg_orders ..... [RUN]`,
        `\u001b[0m10:00:01.000003 [debug] [Thread-1 (]: Writing runtime sql for node "${id}"`,
        // The DDL dbt wrote to target/run, as it logs it next (its query comment first).
        `\u001b[0m10:00:01.000004 [debug] [Thread-1 (]: On ${id}: /* {"app": "dbt", "node_id": "${id}"} */`,
        ddl,
        `\u001b[0m10:00:01.000005 [debug] [Thread-1 (]: Runtime Error in model stg_orders (models/staging/stg_orders.sql)`,
        `\u001b[0m10:00:01.000006 [error] [Thread-1 (]: 1 of 1 ERROR creating sql view model main.stg_orders ..... [\u001b[31mERROR\u001b[0m in 0.02s]`,
        `\u001b[0m10:00:01.000007 [debug] [Thread-1 (]: Finished running node ${id}`,
        `\u001b[0m10:00:09.000001 [debug] [Thread-1 (]: Began running node ${id}`,
        `\u001b[0m10:00:09.000002 [debug] [Thread-1 (]: Finished running node ${id}`,
        '',
      ].join('\n'),
    );
    try {
      expect(await planKeepingCatalog()).toContain(
        "target/run's build of this SQL is of a dbt run that failed",
      );
    } finally {
      await rm(join(project, 'logs'), { recursive: true, force: true });
      await restore();
    }
  });

  it('is planned from its compiled SQL: the definition changes, apply writes it, the next plan is empty', async () => {
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    expect(await heldColumns()).toEqual(['order_id', 'customer_id', 'order_date', 'status']);

    // The team drops order_date from stg_orders and adds channel; dbt build rebuilds the view and writes a
    // new manifest (a later generated_at); catalog.json is left as the last dbt docs generate wrote it.
    const path = join(project, 'target/manifest.json');
    const manifest = JSON.parse(await readFile(path, 'utf8')) as {
      metadata: { generated_at: string };
      nodes: Record<string, { compiled_code: string; raw_code: string }>;
    };
    const node = manifest.nodes['model.jaffle_dbt.stg_orders'];
    if (node === undefined) throw new Error('the fixture has no stg_orders');
    node.compiled_code = node.compiled_code
      .replace(/\n\s*order_date,/, '')
      .replace('status\n', "status,\n 'web' as channel\n");
    node.raw_code = node.compiled_code;
    manifest.metadata.generated_at = new Date().toISOString();
    await writeFile(path, JSON.stringify(manifest));
    await server.sql(`ALTER TABLE ${SCHEMA}.stg_orders DROP COLUMN order_date`);
    await server.sql(`ALTER TABLE ${SCHEMA}.stg_orders ADD COLUMN channel text`);

    const plan = await gds(['plan', ...onDev(), '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(linesWhere(jsonLines(plan.stdout), ['action', 'replace'], 'table', 'changes')).toEqual([
      ['stg_orders', { definition: true, gate1: true, contract: false }],
    ]);
    expect(plan.stderr).toContain('model.jaffle_dbt.stg_orders: catalog.json');
    expect(plan.stderr).toContain('order_date');

    const applied = await gds(['apply', ...onDev(), '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await heldColumns()).toEqual(['order_id', 'customer_id', 'status', 'channel']);
    const again = await gds(['plan', ...onDev(), '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout).at(-1)).toMatchObject({ summary: { create: 0, replace: 0, remove: 0 } });
  });
});
