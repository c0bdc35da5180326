// The "done when" of a dbt project gds can be trusted with, checked as a user would on the real jaffle-shop
// project (../shared/fixtures, copied), gds run in the test process against the reference server on PGlite
// and PostgreSQL: a second project with the same dbt `name:` on another connector of the environment
// creates its own tables and its --prune leaves the first's; a table registered by hand on a model's source
// is `! owned elsewhere`, apply refuses it (exit 6) and --adopt takes it; nullable columns holding NULLs
// pass `gate run`; a second `unique` test is enforced beside the grain key; `@model` selects what dbt's own
// graph (the manifest's child_map and parent_map) says; a table pushed by hand under the project's file name
// is never pruned on that name alone; with --env the two projects keep their own tables; and a third project of
// the name on B's connector, in its own schema, neither replaces nor prunes B's.
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { ENGINES } from '../helpers/engines.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const SCHEMA = 'analytics_dev';

interface Manifest {
  nodes: Record<string, Record<string, unknown>>;
  child_map: Record<string, string[]>;
  parent_map: Record<string, string[]>;
}

const lines = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

const tablesOf = (stdout: string) =>
  lines(stdout)
    .map((l) => l['table'])
    .filter((t): t is string => typeof t === 'string')
    .sort();

/** Project B: jaffle's three staging models as b_*, in schema `own_b`, still `name: jaffle_dbt`. */
function projectB(manifest: Manifest): Manifest {
  const nodes: Manifest['nodes'] = {};
  for (const model of ['stg_customers', 'stg_orders', 'stg_payments']) {
    const node = manifest.nodes[`model.jaffle_dbt.${model}`] ?? {};
    const renamed = JSON.parse(JSON.stringify(node).replaceAll(model, `b_${model}`)) as Record<
      string,
      unknown
    >;
    nodes[`model.jaffle_dbt.b_${model}`] = {
      ...renamed,
      schema: 'own_b',
      depends_on: { nodes: [], macros: [] },
    };
  }
  return { nodes, child_map: {}, parent_map: {} };
}

describe.each(ENGINES)('a dbt project gds can be trusted with, on $engine', ({ postgres, skip }) => {
  const skipped = skip ?? noSharedFixtures;
  let server: TestServer;
  let dir: string;
  let a: string;
  let b: string;
  let manifest: Manifest;

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')),
      cwd: dir,
    });
  const onA = () => ['--dbt', a, '--connector', 'warehouse-dev', '--schema', SCHEMA];
  const onB = () => ['--dbt', b, '--connector', 'dbt-b'];
  const editA = async (change: (manifest: Manifest) => void) => {
    const path = join(a, 'target/manifest.json');
    const held = JSON.parse(await readFile(path, 'utf8')) as Manifest;
    change(held);
    await writeFile(path, JSON.stringify(held));
  };
  const held = async () =>
    lines((await gds(['list', '--json'])).stdout).map((t) => [t['name'], t['project'] ?? null] as const);

  beforeAll(async () => {
    if (skipped !== undefined) return;
    server = await startTestServer(postgres ? { database: 'postgres' } : {});
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dbt-ownership-'));
    a = join(dir, 'a');
    b = join(dir, 'b');
    await cp(JAFFLE, a, { recursive: true });
    manifest = JSON.parse(await readFile(join(a, 'target/manifest.json'), 'utf8')) as Manifest;
    for (const declaration of (await loadDbtProject(a, {})).declarations) {
      const columns = declaration.columns.map((c) => `"${c.name.toLowerCase()}" text`).join(', ');
      await server.sql(`CREATE TABLE ${SCHEMA}."${declaration.name}" (${columns})`);
    }
    // A second connector of dev reading schema own_b, where project B's relations are.
    await cp(JAFFLE, b, { recursive: true, filter: (path) => !path.endsWith('catalog.json') });
    await writeFile(join(b, 'target/manifest.json'), JSON.stringify(projectB(manifest)));
    await server.sql('CREATE SCHEMA own_b');
    for (const model of ['stg_customers', 'stg_orders', 'stg_payments'])
      await server.sql(`CREATE TABLE own_b.b_${model} AS SELECT * FROM ${SCHEMA}.${model}`);
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ('con_e2e_dbt_b', $1, 'dbt-b', 'postgres', 'ACTIVE', 'dev', 'own_b', now())`,
      [server.ready.workspaceId],
    );
  });

  afterAll(async () => {
    await server?.close();
  });

  describe('checked from outside', { ...needs(skipped), timeout: 300_000 }, () => {
    it('two projects with one name on two connectors: the second creates its own, its --prune leaves the first’s', async () => {
      const first = await gds(['apply', ...onA(), '--prune', '--yes', '--json']);
      expect(first.code, first.stderr).toBe(0);
      const created = (lines(first.stdout).at(-1)?.['summary'] as { create: number }).create;
      expect(created).toBeGreaterThan(10);

      const plan = await gds(['plan', ...onB(), '--json']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(lines(plan.stdout).at(-1)).toMatchObject({ summary: { create: 3, remove: 0 } });
      const applied = await gds(['apply', ...onB(), '--prune', '--yes']);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stderr).not.toContain('remove');
      const owners = await held();
      expect(owners.filter(([, project]) => project === 'jaffle_dbt@con_e2e_dbt_b').map(([n]) => n)).toEqual([
        'b_stg_customers',
        'b_stg_orders',
        'b_stg_payments',
      ]);
      expect(
        owners.filter(([, project]) => project !== null && project !== 'jaffle_dbt@con_e2e_dbt_b'),
      ).toHaveLength(created);
    });

    it('a table registered by hand on a model’s source: ! owned elsewhere, apply refuses (exit 6), --adopt takes it', async () => {
      await server.sql(`CREATE TABLE ${SCHEMA}.hand_orders AS SELECT * FROM ${SCHEMA}.stg_orders`);
      const file = join(dir, 'hand_orders.json');
      await writeFile(
        file,
        JSON.stringify({
          table: 'hand_orders',
          source: `${SCHEMA}.hand_orders`,
          columns: [{ name: 'order_id', type: 'text' }],
        }),
      );
      expect((await gds(['push', file, '--connector', 'warehouse-dev'])).code).toBe(0);
      await editA((held) => {
        const node = held.nodes['model.jaffle_dbt.stg_orders'] ?? {};
        held.nodes['model.jaffle_dbt.hand_orders'] = {
          ...(JSON.parse(JSON.stringify(node).replaceAll('stg_orders', 'hand_orders')) as object),
          depends_on: node['depends_on'],
        };
      });
      const plan = await gds(['plan', ...onA()]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/! owned elsewhere hand_orders \(analytics_dev\.hand_orders, tbl_\w+\)/);
      expect(plan.stdout).toContain('pass --adopt hand_orders');

      const refused = await gds(['apply', ...onA(), '--prune', '--yes']);
      expect(refused.code).toBe(6);
      expect(refused.stderr).toContain('hand_orders');
      expect(await held()).toContainEqual(['hand_orders', null]);

      const adopted = await gds(['apply', ...onA(), '--adopt', 'hand_orders', '--yes']);
      expect(adopted.code, adopted.stderr).toBe(0);
      expect(adopted.stderr).toMatch(/hand_orders \(tbl_\w+\): adopt done/);
      const status = lines((await gds(['status', 'hand_orders', '--json'])).stdout)[0];
      expect(status?.['project']).toBe(`jaffle_dbt@${server.ready.connectors[0]?.id ?? ''}`);
    });

    it('a model aliased stg-payments beside table stg_payments: ! refused naming it, apply leaves the table as it is', async () => {
      await server.sql(`CREATE TABLE ${SCHEMA}."stg-payments" AS SELECT * FROM ${SCHEMA}.stg_payments`);
      const before = lines((await gds(['status', 'stg_payments', '--json'])).stdout)[0];
      await editA((held) => {
        const node = held.nodes['model.jaffle_dbt.stg_payments'] ?? {};
        const relation = JSON.stringify(node['relation_name'] ?? '').replaceAll(
          'stg_payments',
          'stg-payments',
        );
        held.nodes['model.jaffle_dbt.stg_payments_dashed'] = {
          ...node,
          unique_id: 'model.jaffle_dbt.stg_payments_dashed',
          name: 'stg_payments_dashed',
          alias: 'stg-payments',
          relation_name: JSON.parse(relation) as unknown,
        };
      });
      const plan = await gds(['plan', ...onA()]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain(
        `! refused stg-payments (analytics_dev.stg-payments)\n    the name stg-payments is table stg_payments's (${String(before?.['id'])}, `,
      );
      expect(plan.stdout).toMatch(/Plan: 0 to create, 0 to change, \d+ unchanged, 0 to remove\. 1 refused\./);
      expect(plan.stdout).toContain("give the model another alias (dbt's alias config)");
      const applied = await gds(['apply', ...onA(), '--yes', '--json']);
      // Refused by the plan: not sent, exit 7 naming it; nothing else to do.
      expect(applied.code).toBe(7);
      expect(applied.stderr).toContain('stg-payments');
      expect(lines(applied.stdout).at(-1)).toMatchObject({ summary: { refused: 1, replace: 0, create: 0 } });
      expect(
        lines(applied.stdout).filter((l) => l['table'] === 'stg_payments' || l['table'] === 'stg-payments'),
      ).toEqual([]);
      expect(lines((await gds(['status', 'stg_payments', '--json'])).stdout)[0]).toMatchObject({
        name: 'stg_payments',
        source: before?.['source'],
        definitionVersion: before?.['definitionVersion'],
      });
      await editA((held) => {
        delete held.nodes['model.jaffle_dbt.stg_payments_dashed'];
      });
    });

    it('nullable columns holding NULLs pass gate run; a second unique test is enforced beside the grain key', async () => {
      await server.sql(
        `INSERT INTO ${SCHEMA}.stg_customers (customer_id, first_name, last_name)
         VALUES ('1', 'Ann', NULL), ('2', 'Bo', NULL), ('3', 'Cy', 'Z')`,
      );
      await server.sql(
        `INSERT INTO ${SCHEMA}.stg_orders (order_id, customer_id, order_date, status)
         VALUES ('10', '1', NULL, 'placed'), ('11', '1', NULL, 'placed'), ('12', '2', NULL, 'shipped')`,
      );
      const customers = await gds(['gate', 'run', 'stg_customers']);
      expect(customers.code, customers.stdout + customers.stderr).toBe(0);
      expect(customers.stdout).toMatch(/null_rate\.last_name\t.*\tpass\t2\t/);
      expect((await gds(['gate', 'run', 'stg_orders'])).code).toBe(0);

      await editA((held) => {
        const unique =
          Object.values(held.nodes).find((n) => n['name'] === 'unique_stg_orders_order_id') ?? {};
        held.nodes['test.jaffle_dbt.unique_stg_orders_customer_id.e2e'] = {
          ...unique,
          unique_id: 'test.jaffle_dbt.unique_stg_orders_customer_id.e2e',
          name: 'unique_stg_orders_customer_id',
          column_name: 'customer_id',
          test_metadata: { name: 'unique', kwargs: { column_name: 'customer_id' } },
        };
      });
      const plan = await gds(['plan', ...onA(), '--select', 'stg_orders', '--json']);
      const rules = lines(plan.stdout).find((l) => l['table'] === 'stg_orders')?.['rules'];
      expect(rules).toEqual(
        expect.arrayContaining([
          'grain key (order_id): no value twice',
          'unique_stg_orders_customer_id: no value of (customer_id) twice (HARD_FAIL)',
        ]),
      );
      expect((await gds(['apply', ...onA(), '--select', 'stg_orders', '--yes'])).code).toBe(0);
      const orders = await gds(['gate', 'run', 'stg_orders']);
      expect(orders.code).toBe(1);
      expect(orders.stdout).toMatch(/grain_uniqueness\t.*\tpass\t/);
      expect(orders.stdout).toMatch(/unique_stg_orders_customer_id\t.*\tFAIL\t2\t/);
    });

    it('@model selects what dbt’s own graph says: its children and the parents of both', async () => {
      const kinds = new Set(['model', 'seed', 'snapshot']);
      const walk = (start: string[], edges: Record<string, string[]>) => {
        const seen = new Set(start);
        for (const id of seen) for (const next of edges[id] ?? []) seen.add(next);
        return seen;
      };
      for (const model of ['stg_customers', 'stg_orders', 'customer_ltv']) {
        const children = walk([`model.jaffle_dbt.${model}`], manifest.child_map);
        const expected = [...walk([...children], manifest.parent_map)]
          .filter((id) => kinds.has(id.split('.')[0] ?? ''))
          .map((id) => id.split('.').at(-1))
          .sort();
        const plan = await gds(['plan', ...onA(), '--select', `@${model}`, '--json']);
        expect(plan.code, plan.stderr).toBe(0);
        expect(tablesOf(plan.stdout), `@${model}`).toEqual(expected);
      }
    });

    it('a table pushed by hand as dbt--jaffle_dbt--<table>.json is never pruned on its name; --adopt then --prune removes it', async () => {
      await server.sql(`CREATE TABLE ${SCHEMA}.hand_legacy AS SELECT * FROM ${SCHEMA}.stg_orders`);
      const file = join(dir, 'dbt--jaffle_dbt--hand_legacy.json');
      await writeFile(
        file,
        JSON.stringify({
          table: 'hand_legacy',
          source: `${SCHEMA}.hand_legacy`,
          columns: [{ name: 'order_id', type: 'text' }],
        }),
      );
      const pushed = await gds(['push', file, '--connector', 'warehouse-dev']);
      expect(pushed.code, pushed.stderr).toBe(0);
      const plan = await gds(['plan', ...onA()]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).not.toContain('hand_legacy');
      expect(plan.stdout).toMatch(/ 0 to remove\./);
      expect(plan.stderr).toContain('hand_legacy (dev) has this project');
      expect(plan.stderr).toContain('gds apply --adopt hand_legacy --prune');

      const pruned = await gds(['apply', ...onA(), '--prune', '--yes', '--json']);
      expect(pruned.code, pruned.stderr).toBe(0);
      expect(lines(pruned.stdout).filter((l) => l['table'] === 'hand_legacy')).toEqual([]);
      expect(await held()).toContainEqual(['hand_legacy', null]);

      const adopted = await gds(['apply', ...onA(), '--adopt', 'hand_legacy', '--prune', '--yes', '--json']);
      expect(adopted.code, adopted.stderr).toBe(0);
      expect(
        lines(adopted.stdout)
          .filter((l) => l['table'] === 'hand_legacy')
          .map((l) => [l['step'], l['outcome']]),
      ).toEqual([
        ['adopt', 'done'],
        ['remove', 'done'],
      ]);
      expect((await held()).map(([name]) => name)).not.toContain('hand_legacy');
    });

    it('with --env over both connectors, each project of the one name keeps its own tables, the shared id of an earlier gds migrated', async () => {
      const envA = ['--dbt', a, '--env', 'dev', '--schema', SCHEMA];
      const envB = ['--dbt', b, '--env', 'dev'];
      // An earlier gds derived jaffle_dbt@dev for both projects with --env, and recorded it.
      await server.sql(
        `UPDATE gds.tables SET project = 'jaffle_dbt@dev' WHERE project LIKE 'jaffle\\_dbt@%'`,
      );
      const before = await held();
      const plan = await gds(['plan', ...envB, '--json']);
      expect(plan.code, plan.stderr).toBe(0);
      expect(lines(plan.stdout).at(-1)).toMatchObject({ summary: { create: 0, replace: 0, remove: 0 } });
      expect(
        lines(plan.stdout)
          .filter((l) => l['migrate'] === true)
          .map((l) => l['table'])
          .sort(),
      ).toEqual(['b_stg_customers', 'b_stg_orders', 'b_stg_payments']);
      const appliedB = await gds(['apply', ...envB, '--prune', '--yes', '--json']);
      expect(appliedB.code, appliedB.stderr).toBe(0);
      expect(lines(appliedB.stdout).filter((l) => l['step'] === 'remove')).toEqual([]);

      const appliedA = await gds(['apply', ...envA, '--prune', '--yes', '--json']);
      expect(lines(appliedA.stdout).filter((l) => l['step'] === 'remove')).toEqual([]);
      const conA = server.ready.connectors[0]?.id ?? '';
      const after = await held();
      expect(after.map(([name]) => name).sort()).toEqual(before.map(([name]) => name).sort());
      expect(after.filter(([, project]) => project === 'jaffle_dbt@con_e2e_dbt_b').map(([n]) => n)).toEqual([
        'b_stg_customers',
        'b_stg_orders',
        'b_stg_payments',
      ]);
      expect(
        after.filter(([, project]) => project !== null && project !== 'jaffle_dbt@con_e2e_dbt_b'),
      ).toEqual(
        before
          .filter(([name, project]) => project !== null && !String(name).startsWith('b_'))
          .map(([name]) => [name, `jaffle_dbt@${conA}`]),
      );
    });

    it('a third project of the one name on B’s connector, its models in own_c: B’s tables are ! owned elsewhere, never gone, apply --prune leaves them', async () => {
      // Project C: two of B's models by the same names, built into own_c; dbt-b reads own_c now (the
      // reference server's connector reads one schema; a warehouse's reads several).
      const c = join(dir, 'c');
      await cp(JAFFLE, c, { recursive: true, filter: (path) => !path.endsWith('catalog.json') });
      const { nodes } = projectB(manifest);
      delete nodes['model.jaffle_dbt.b_stg_payments'];
      for (const node of Object.values(nodes)) node['schema'] = 'own_c';
      await writeFile(
        join(c, 'target/manifest.json'),
        JSON.stringify({ nodes, child_map: {}, parent_map: {} }),
      );
      await server.sql('CREATE SCHEMA own_c');
      for (const model of ['b_stg_customers', 'b_stg_orders'])
        await server.sql(`CREATE TABLE own_c.${model} AS SELECT * FROM own_b.${model}`);
      await server.sql(`UPDATE gds.connectors SET warehouse_schema = 'own_c' WHERE id = 'con_e2e_dbt_b'`);
      const onC = ['--dbt', c, '--connector', 'dbt-b'];
      const statusOf = async (name: string) => lines((await gds(['status', name, '--json'])).stdout)[0];
      const before = await Promise.all(['b_stg_customers', 'b_stg_orders', 'b_stg_payments'].map(statusOf));

      const plan = await gds(['plan', ...onC]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toMatch(/! owned elsewhere b_stg_customers \(own_c\.b_stg_customers, tbl_\w+\)/);
      expect(plan.stdout).toContain(
        "but in schema own_b, where none of this project's models is built (own_c)",
      );
      expect(plan.stdout).toContain(
        'Plan: 0 to create, 0 to change, 0 unchanged, 0 to remove. 2 owned elsewhere.',
      );
      expect(plan.stderr).toContain('write "project: jaffle_dbt.own_c@con_e2e_dbt_b" in gds.yml');
      expect(plan.stderr).toContain(
        'gds apply --adopt b_stg_customers --adopt b_stg_orders --adopt b_stg_payments --prune',
      );
      const json = await gds(['plan', ...onC, '--json']);
      expect(
        lines(json.stdout)
          .filter((l) => l['table'] !== undefined)
          .map((l) => [l['table'], l['action'], l['ownership'], l['owner']]),
      ).toEqual([
        ['b_stg_customers', 'owned-elsewhere', 'other', 'jaffle_dbt@con_e2e_dbt_b'],
        ['b_stg_orders', 'owned-elsewhere', 'other', 'jaffle_dbt@con_e2e_dbt_b'],
      ]);
      expect(lines(json.stdout).at(-1)).toMatchObject({ summary: { remove: 0, replace: 0, refused: 2 } });
      const markdown = await gds(['plan', ...onC, '--format', 'markdown']);
      expect(markdown.stdout).toContain('<code>! owned elsewhere</code> <strong>b_stg_customers</strong>');
      expect(markdown.stdout).toContain('project: jaffle\\_dbt.own\\_c@con\\_e2e\\_dbt\\_b');

      const applied = await gds(['apply', ...onC, '--prune', '--yes', '--json']);
      expect(applied.code).toBe(6);
      expect(lines(applied.stdout).filter((l) => l['step'] === 'remove' || l['step'] === 'replace')).toEqual(
        [],
      );
      expect(await Promise.all(['b_stg_customers', 'b_stg_orders', 'b_stg_payments'].map(statusOf))).toEqual(
        before,
      );
      expect(before.map((t) => [t?.['source'], t?.['project']])).toEqual([
        ['own_b.b_stg_customers', 'jaffle_dbt@con_e2e_dbt_b'],
        ['own_b.b_stg_orders', 'jaffle_dbt@con_e2e_dbt_b'],
        ['own_b.b_stg_payments', 'jaffle_dbt@con_e2e_dbt_b'],
      ]);
      await server.sql(`UPDATE gds.connectors SET warehouse_schema = 'own_b' WHERE id = 'con_e2e_dbt_b'`);
    });

    it('a fourth project of the one name built into B’s schema on B’s connector: B’s tables are never gone, its own are created only under an id of its own', async () => {
      // Project D: B's three models renamed d_*, in own_b like B's, still `name: jaffle_dbt`: it derives B's id.
      const d = join(dir, 'd');
      await cp(JAFFLE, d, { recursive: true, filter: (path) => !path.endsWith('catalog.json') });
      await writeFile(
        join(d, 'target/manifest.json'),
        JSON.stringify(projectB(manifest)).replaceAll('b_stg_', 'd_stg_'),
      );
      for (const model of ['stg_customers', 'stg_orders', 'stg_payments'])
        await server.sql(`CREATE TABLE own_b.d_${model} AS SELECT * FROM own_b.b_${model}`);
      const onD = ['--dbt', d, '--connector', 'dbt-b'];
      const bTables = ['b_stg_customers', 'b_stg_orders', 'b_stg_payments'];
      const statusOf = async (name: string) => lines((await gds(['status', name, '--json'])).stdout)[0];
      const before = await Promise.all(bTables.map(statusOf));
      expect(before.map((t) => [t?.['source'], t?.['project']])).toEqual(
        bTables.map((name) => [`own_b.${name}`, 'jaffle_dbt@con_e2e_dbt_b']),
      );

      const plan = await gds(['plan', ...onD, '--json']);
      expect(plan.code, plan.stderr).toBe(0);
      const planned = lines(plan.stdout).filter((l) => l['table'] !== undefined);
      expect(planned.filter((l) => l['action'] === 'gone')).toEqual([]);
      expect(planned.map((l) => [l['table'], l['action']])).toEqual([
        ['d_stg_customers', 'refused'],
        ['d_stg_orders', 'refused'],
        ['d_stg_payments', 'refused'],
      ]);
      expect(planned[0]?.['reason']).toContain(
        'not created: jaffle_dbt@con_e2e_dbt_b holds 3 tables of no model',
      );
      expect(lines(plan.stdout).at(-1)).toMatchObject({ summary: { create: 0, remove: 0, refused: 3 } });
      const warned = lines(plan.stderr)
        .map((l) => (l['warning'] as { message: string }).message)
        .join('\n');
      expect(warned).toContain(
        'b_stg_customers, b_stg_orders, b_stg_payments (dev) are recorded under jaffle_dbt@con_e2e_dbt_b, the id gds derives for a project named jaffle_dbt here, in schema own_b, but none of them is a model, seed or snapshot of this project',
      );
      expect(warned).toContain('write "project: jaffle_dbt.own_b@con_e2e_dbt_b" in gds.yml');

      const refusedApply = await gds(['apply', ...onD, '--prune', '--yes', '--json']);
      expect(refusedApply.code).toBe(7);
      expect(
        lines(refusedApply.stdout).filter((l) => ['remove', 'create'].includes(String(l['step']))),
      ).toEqual([]);
      expect(await Promise.all(bTables.map(statusOf))).toEqual(before);
      expect((await held()).map(([name]) => name)).not.toContain('d_stg_orders');

      // Told they were this project's (every model renamed): --adopt each makes them gone, and D's created.
      const adopting = await gds(['plan', ...onD, ...bTables.flatMap((t) => ['--adopt', t]), '--json']);
      expect(adopting.code, adopting.stderr).toBe(0);
      expect(lines(adopting.stdout).at(-1)).toMatchObject({ summary: { create: 3, remove: 3, refused: 0 } });

      // The id gds proposes, written in gds.yml: D's tables are its own, B's left, and B's plan still whole.
      await writeFile(join(d, 'gds.yml'), 'project: jaffle_dbt.own_b@con_e2e_dbt_b\n');
      const applied = await gds(['apply', ...onD, '--prune', '--yes', '--json']);
      expect(applied.code, applied.stderr).toBe(0);
      expect(lines(applied.stdout).filter((l) => l['step'] === 'remove')).toEqual([]);
      expect(await Promise.all(bTables.map(statusOf))).toEqual(before);
      const planB = await gds(['plan', ...onB(), '--json']);
      expect(planB.code, planB.stderr).toBe(0);
      expect(lines(planB.stdout).at(-1)).toMatchObject({ summary: { create: 0, remove: 0, unchanged: 3 } });
      expect(
        (await held()).filter(([, project]) => project === 'jaffle_dbt.own_b@con_e2e_dbt_b').map(([n]) => n),
      ).toEqual(['d_stg_customers', 'd_stg_orders', 'd_stg_payments']);
    });
  });
});
