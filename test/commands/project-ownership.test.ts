// Ownership of a dbt project's tables, held by the service (planProject/applyPlan against the in-process
// reference server, on PGlite and PostgreSQL): two projects that share dbt's `name:` on two connectors never
// see each other's tables as their own (prune leaves them), nor do two on one connector, each in its own
// schema (a project that moved its schema takes its old tables over with --adopt; an id in gds.yml owns its
// tables in any schema); a table registered by hand on the same source is
// `owned-elsewhere`, apply refuses it (exit 6) and --adopt takes it over, audited; a `dbt--<name>--<table>.json`
// file name alone makes no table the project's (only --adopt does); with --env the derived id names the
// connector, and the id an earlier gds derived is migrated on its connector; --prune waits for every create
// and replace to succeed; the service itself refuses a replace or a delete naming another project; and a
// table of the project renamed by hand is kept by its source while a selection leaves its model out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { DbtDeclaration, DbtProject } from '../../src/core/dbt/types.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

function declaration(schema: string, name: string, gate1 = 'fail: 0'): DbtDeclaration {
  const columns = [
    { name: 'id', type: 'integer', required: true },
    { name: 'label', type: 'text' },
  ];
  return {
    uniqueId: `model.shop.${name}`,
    resourceType: 'model',
    name,
    source: { schema, table: name },
    columns,
    columnsFrom: 'catalog',
    artifact: {
      fileName: `${name}.json`,
      mimeType: 'json',
      content: JSON.stringify({ table: name, source: `${schema}.${name}`, columns }),
    },
    gate1Yaml: `fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, ${gate1} }\n`,
    mappedTests: [],
    notMappedTests: [],
    packageName: 'shop',
    fqn: ['shop', name],
    tags: [],
  };
}

const project = (declarations: DbtDeclaration[], extra: Partial<DbtProject> = {}): DbtProject => ({
  projectName: 'shop',
  declarations,
  refusals: [],
  otherTests: [],
  warnings: [],
  ...extra,
});

describe.each(ENGINES)('ownership of a project’s tables on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let client: ApiClient;
  const connectors = { a: 'con_own_a', b: 'con_own_b' };

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer(postgres ? { database: 'postgres' } : {});
    client = createApiClient({
      baseUrl: server.url,
      auth: staticToken(server.user('ADMIN').cliToken),
      sleep: async () => {},
      logger: () => {},
    });
    for (const [key, id] of Object.entries(connectors)) {
      const schema = `own_${key}`;
      await server.sql(`CREATE SCHEMA ${schema}`);
      for (const table of ['p_orders', 'p_customers', 'p_payments', 'p_legacy', 'p_buyers'])
        await server.sql(`CREATE TABLE ${schema}.${table} (id integer, label text)`);
      await server.sql(
        `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
         VALUES ($2, $1, $3, 'postgres', 'ACTIVE', 'dev', $4, now())`,
        [server.ready.workspaceId, id, `warehouse-${key}`, schema],
      );
    }
  });

  /** `gds push` of a one-column table on connector A: no project. */
  const pushByHand = (filename: string, table: string, source: string) =>
    client.artifacts.push({
      filename,
      content: JSON.stringify({ table, source, columns: [{ name: 'id', type: 'integer' }] }),
      connectorId: connectors.a,
    });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it(
    'two projects with one name on two connectors: each sees only its own tables, prune leaves the other’s',
    needs(skip),
    async () => {
      const a = project([declaration('own_a', 'p_orders'), declaration('own_a', 'p_payments')]);
      const planA = await planProject(client, a, { connectorId: connectors.a });
      expect(planA.project).toEqual({ id: 'shop@con_own_a', from: 'derived' });
      expect(planA.proposal).toContain('write "project: shop@con_own_a" in gds.yml');
      expect((await applyPlan(client, planA, { describe: describeError })).failed).toEqual([]);

      // Project B, also `name: shop`, with one model of another name, on connector B.
      const b = project([declaration('own_b', 'p_buyers')]);
      const planB = await planProject(client, b, { connectorId: connectors.b });
      expect(planB.tables.map((t) => [t.table, t.action])).toEqual([['p_buyers', 'create']]);
      expect(planB.counts.gone).toBe(0);
      expect(planB.untouched.otherProjects).toBe(2);
      const applied = await applyPlan(client, planB, { describe: describeError, prune: true });
      expect(applied.failed).toEqual([]);
      expect(applied.actions.filter((x) => x.step === 'remove')).toEqual([]);
      const held = await server.sql<{ name: string; project: string; connector_id: string }>(
        `SELECT name, project, connector_id FROM gds.tables WHERE active AND project LIKE 'shop@%' ORDER BY name`,
      );
      expect(held).toEqual([
        { name: 'p_buyers', project: 'shop@con_own_b', connector_id: connectors.b },
        { name: 'p_orders', project: 'shop@con_own_a', connector_id: connectors.a },
        { name: 'p_payments', project: 'shop@con_own_a', connector_id: connectors.a },
      ]);
      // gds status shows the owner.
      const orders = planA.tables.find((t) => t.table === 'p_orders');
      const status = await client.tables.status(
        (await client.tables.list({ name: 'p_orders' }))[0]?.id ?? orders?.tableId ?? '',
      );
      expect(status.project).toBe('shop@con_own_a');

      // Project A's own model leaving it is gone for A, and only A's prune removes it.
      const left = await planProject(client, project([declaration('own_a', 'p_orders')]), {
        connectorId: connectors.a,
      });
      expect(left.tables.filter((t) => t.action === 'gone').map((t) => [t.table, t.ownership])).toEqual([
        ['p_payments', 'this'],
      ]);
    },
  );

  it(
    'a table registered by hand on the same source: owned elsewhere, apply refuses (exit 6), --adopt takes it, audited',
    needs(skip),
    async () => {
      // Registered with gds push (no project) on the source project A's model `p_customers` reads.
      await pushByHand('hand.json', 'hand_customers', 'own_a.p_customers');
      const [hand] = await client.tables.list({ name: 'hand_customers' });
      const versions = async () =>
        (
          await server.sql<{ v: number }>(`SELECT definition_version AS v FROM gds.tables WHERE id = $1`, [
            hand?.id,
          ])
        )[0]?.v;
      const before = await versions();
      const mine = project([declaration('own_a', 'p_orders'), declaration('own_a', 'p_customers')]);
      const plan = await planProject(client, mine, { connectorId: connectors.a });
      const customers = plan.tables.find((t) => t.table === 'p_customers');
      expect(customers).toMatchObject({
        action: 'owned-elsewhere',
        ownership: 'hand',
        owner: null,
        tableId: hand?.id,
        reason: expect.stringContaining('registered by hand'),
      });
      // What the plan says apply does with it is what apply does: --adopt names the table the service holds.
      expect(customers?.reason).toContain(
        `table hand_customers (${hand?.id ?? ''}) over the model's relation own_a.p_customers, registered by hand): apply refuses it (exit 6); pass --adopt hand_customers to take it over (apply then renames it p_customers)`,
      );
      expect(plan.counts.ownedElsewhere).toBe(1);
      const refused = await applyPlan(client, plan, { describe: describeError, prune: true });
      expect(refused.failed.map((f) => [f.table, f.step, f.error.exitCode, f.error.code])).toEqual([
        ['p_customers', 'adopt', 6, 'owned_elsewhere'],
      ]);
      expect(await versions()).toBe(before);

      // --adopt hand_customers: the owner is recorded first (audited), then the definition replaced.
      const adopting = await planProject(client, mine, {
        connectorId: connectors.a,
        adopt: ['hand_customers'],
      });
      expect(adopting.tables.find((t) => t.table === 'p_customers')).toMatchObject({
        action: 'replace',
        adopt: { from: null },
      });
      const adopted = await applyPlan(client, adopting, { describe: describeError });
      expect(adopted.failed).toEqual([]);
      expect(
        adopted.actions.filter((x) => x.table === 'p_customers').map((x) => [x.step, x.outcome]),
      ).toEqual([
        ['adopt', 'done'],
        ['replace', 'done'],
        ['gate1', 'done'],
      ]);
      const audit = await server.sql<{ action: string; details: { from: unknown; to: unknown } }>(
        `SELECT action, details FROM gds.audit_log WHERE table_id = $1 AND action = 'TABLE_ADOPTED'`,
        [hand?.id],
      );
      expect(audit).toEqual([
        { action: 'TABLE_ADOPTED', details: { from: null, to: 'shop@con_own_a', reason: 'adopt' } },
      ]);
      const again = await planProject(client, mine, { connectorId: connectors.a });
      expect(again.tables.find((t) => t.table === 'p_customers')).toMatchObject({
        action: 'unchanged',
        ownership: 'this',
      });
      // --adopt naming no table owned elsewhere is a usage error.
      await expect(
        planProject(client, mine, { connectorId: connectors.a, adopt: ['p_orders'] }),
      ).rejects.toMatchObject({ exitCode: 2, code: 'nothing_to_adopt' });
    },
  );

  it(
    'a table pushed by hand under a dbt--<name>-- file name is not this project’s: never gone on its name alone, --adopt takes it',
    needs(skip),
    async () => {
      await pushByHand('dbt--shop--p_legacy.json', 'p_legacy', 'own_a.p_legacy');
      // On connector B the file name does not make it B's either: a table name is one per workspace.
      const other = await planProject(client, project([declaration('own_b', 'p_legacy')]), {
        connectorId: connectors.b,
      });
      expect(other.tables.find((t) => t.table === 'p_legacy')).toMatchObject({
        action: 'owned-elsewhere',
        ownership: 'hand',
        reason: expect.stringContaining('registered with no project'),
      });
      // A model of that name on connector A: owned elsewhere, with the command that takes it over.
      const matched = await planProject(client, project([declaration('own_a', 'p_legacy')]), {
        connectorId: connectors.a,
      });
      expect(matched.tables.find((t) => t.table === 'p_legacy')).toMatchObject({
        action: 'owned-elsewhere',
        ownership: 'hand',
        owner: null,
        reason: expect.stringContaining('pass --adopt p_legacy'),
      });
      const mine = project([declaration('own_a', 'p_orders'), declaration('own_a', 'p_customers')], {
        // p_payments is left out by a selection: still in the project, so not gone.
        nodeNames: ['p_orders', 'p_customers', 'p_payments'],
      });
      const plan = await planProject(client, mine, { connectorId: connectors.a });
      expect(plan.tables.find((t) => t.table === 'p_legacy')).toBeUndefined();
      expect(plan.counts.gone).toBe(0);
      expect(plan.untouched.byHand).toBeGreaterThanOrEqual(1);
      expect(plan.warnings).toContainEqual(
        expect.stringMatching(/p_legacy.*no project.*gds apply --adopt p_legacy --prune/s),
      );
      const summary = await applyPlan(client, plan, { describe: describeError, prune: true });
      expect(summary.failed).toEqual([]);
      expect(summary.actions.filter((x) => x.table === 'p_legacy')).toEqual([]);
      expect(await client.tables.list({ name: 'p_legacy' })).toMatchObject([{ project: null }]);

      // --adopt p_legacy: this project's from now on, so gone, and --prune records the owner then removes it.
      const adopting = await planProject(client, mine, { connectorId: connectors.a, adopt: ['p_legacy'] });
      const legacy = adopting.tables.find((t) => t.table === 'p_legacy');
      expect(legacy).toMatchObject({ action: 'gone', adopt: { from: null } });
      const removed = await applyPlan(client, adopting, { describe: describeError, prune: true });
      expect(removed.failed).toEqual([]);
      expect(removed.actions.filter((x) => x.table === 'p_legacy').map((x) => [x.step, x.outcome])).toEqual([
        ['adopt', 'done'],
        ['remove', 'done'],
      ]);
      const audit = await server.sql<{ action: string; details: unknown }>(
        `SELECT action, details FROM gds.audit_log WHERE table_id = $1 AND action IN ('TABLE_ADOPTED', 'TABLE_PROJECT_RECORDED')`,
        [legacy?.tableId],
      );
      expect(audit).toEqual([
        { action: 'TABLE_ADOPTED', details: { from: null, to: 'shop@con_own_a', reason: 'adopt' } },
      ]);
    },
  );

  it(
    'with --env, two projects of one name on two connectors get two ids; the old shared id is migrated on its connector',
    needs(skip),
    async () => {
      await server.sql('CREATE TABLE own_a.m_orders (id integer, label text)');
      await server.sql('CREATE TABLE own_a.m_payments (id integer, label text)');
      await server.sql('CREATE TABLE own_b.m_buyers (id integer, label text)');
      const mart = (declarations: DbtDeclaration[]) => project(declarations, { projectName: 'mart' });
      const martA = mart([declaration('own_a', 'm_orders'), declaration('own_a', 'm_payments')]);
      // Applied by an earlier gds with --env dev: it recorded the id it derived then, mart@dev.
      const earlier = await planProject(client, martA, { env: 'dev', project: 'mart@dev' });
      expect((await applyPlan(client, earlier, { describe: describeError })).failed).toEqual([]);

      // Project B, also `name: mart`, on connector B: A's tables are not its own, and its --prune leaves them.
      const martB = mart([declaration('own_b', 'm_buyers')]);
      const planB = await planProject(client, martB, { env: 'dev' });
      expect(planB.project).toEqual({ id: 'mart@con_own_b', from: 'derived' });
      expect(planB.tables.map((t) => [t.table, t.action])).toEqual([['m_buyers', 'create']]);
      expect(planB.untouched.otherProjects).toBeGreaterThanOrEqual(2);
      const appliedB = await applyPlan(client, planB, { describe: describeError, prune: true });
      expect(appliedB.failed).toEqual([]);
      expect(appliedB.actions.filter((x) => x.step === 'remove')).toEqual([]);

      // Project A with --env: the id --connector would derive; its tables under the old id are its own,
      // and apply records the new id on them once.
      const planA = await planProject(client, martA, { env: 'dev' });
      expect(planA.project).toEqual({ id: 'mart@con_own_a', from: 'derived' });
      expect(planA.tables.map((t) => [t.table, t.action, t.ownership, t.migrate])).toEqual([
        ['m_orders', 'unchanged', 'this', true],
        ['m_payments', 'unchanged', 'this', true],
      ]);
      const appliedA = await applyPlan(client, planA, { describe: describeError, prune: true });
      expect(appliedA.failed).toEqual([]);
      expect(appliedA.actions.map((x) => [x.table, x.step, x.outcome]).sort()).toEqual([
        ['m_orders', 'migrate', 'done'],
        ['m_payments', 'migrate', 'done'],
      ]);
      const held = await server.sql<{ name: string; project: string }>(
        `SELECT name, project FROM gds.tables WHERE active AND name LIKE 'm\\_%' ORDER BY name`,
      );
      expect(held).toEqual([
        { name: 'm_buyers', project: 'mart@con_own_b' },
        { name: 'm_orders', project: 'mart@con_own_a' },
        { name: 'm_payments', project: 'mart@con_own_a' },
      ]);
      const audit = await server.sql<{ details: unknown }>(
        `SELECT a.details FROM gds.audit_log a JOIN gds.tables t ON t.id = a.table_id
         WHERE t.name = 'm_orders' AND a.action = 'TABLE_PROJECT_RECORDED'`,
      );
      expect(audit).toEqual([{ details: { from: 'mart@dev', to: 'mart@con_own_a', reason: 'migrate' } }]);

      // A's model leaving it is gone for A only; B's plan still sees none of A's.
      const left = await planProject(client, mart([declaration('own_a', 'm_orders')]), { env: 'dev' });
      expect(left.tables.filter((t) => t.action === 'gone').map((t) => t.table)).toEqual(['m_payments']);
      expect((await planProject(client, martB, { env: 'dev' })).counts.gone).toBe(0);
      // A project over both connectors is neither: its id names both.
      const both = await planProject(
        client,
        mart([declaration('own_a', 'm_orders'), declaration('own_b', 'm_buyers')]),
        {
          env: 'dev',
        },
      );
      expect(both.project.id).toBe('mart@con_own_a+con_own_b');
    },
  );

  /**
   * Project `projectName`'s `tables`, applied through connector `id` while it reads `from`; then the connector
   * reads `to` (the reference server's connector reads one schema; a warehouse's reads several), and the tables
   * stay recorded in `from`. Returns the project of those names, its models built into `to`.
   */
  const appliedThenMoved = async (
    id: string,
    [from, to]: [string, string],
    projectName: string,
    tables: string[],
    options: { project?: string } = {},
  ) => {
    for (const schema of [from, to]) {
      await server.sql(`CREATE SCHEMA ${schema}`);
      for (const table of tables)
        await server.sql(`CREATE TABLE ${schema}.${table} (id integer, label text)`);
    }
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ($2, $1, $2, 'postgres', 'ACTIVE', 'dev', $3, now())`,
      [server.ready.workspaceId, id, from],
    );
    const named = (schema: string, names: string[]) =>
      project(
        names.map((t) => declaration(schema, t)),
        { projectName },
      );
    const first = await planProject(client, named(from, tables), { connectorId: id, ...options });
    expect((await applyPlan(client, first, { describe: describeError })).failed).toEqual([]);
    await server.sql('UPDATE gds.connectors SET warehouse_schema = $2 WHERE id = $1', [id, to]);
    return (names: string[]) => named(to, names);
  };
  const heldAs = (pattern: string) =>
    server.sql<{ name: string; source: string; project: string; active: boolean; v: number }>(
      `SELECT name, source, project, active, definition_version AS v FROM gds.tables WHERE name LIKE $1 ORDER BY name`,
      [pattern],
    );

  it(
    'two projects of one dbt name on one connector, each in its own schema: B never replaces or prunes A’s tables',
    needs(skip),
    async () => {
      // Team A: jaffle_shop's models in own_xa, no project: in gds.yml; then team B: the same dbt name, its
      // models in own_xb (two of the same names as A's, and j_refunds), no project: either.
      const teamB = await appliedThenMoved('con_own_x', ['own_xa', 'own_xb'], 'jaffle', [
        'j_customers',
        'j_orders',
        'j_payments',
      ]);
      await server.sql('CREATE TABLE own_xb.j_refunds (id integer, label text)');
      const before = await heldAs('j\\_%');
      const b = teamB(['j_customers', 'j_orders', 'j_refunds']);
      const planB = await planProject(client, b, { connectorId: 'con_own_x' });
      expect(planB.project).toEqual({ id: 'jaffle@con_own_x', from: 'derived' });
      expect(planB.tables.map((t) => [t.table, t.action, t.ownership ?? null, t.owner ?? null])).toEqual([
        ['j_customers', 'owned-elsewhere', 'other', 'jaffle@con_own_x'],
        ['j_orders', 'owned-elsewhere', 'other', 'jaffle@con_own_x'],
        ['j_refunds', 'create', null, null],
      ]);
      expect(planB.tables[0]?.reason).toMatch(
        /named jaffle here, but in schema own_xa.*another dbt project's of that name/s,
      );
      expect(planB.counts).toMatchObject({ gone: 0, ownedElsewhere: 2, replace: 0 });
      expect(planB.untouched.otherProjects).toBeGreaterThanOrEqual(1);
      expect(planB.proposal).toBeUndefined();
      expect(planB.warnings).toContainEqual(
        expect.stringMatching(
          /j_customers, j_orders, j_payments.*own_xa.*write "project: jaffle\.own_xb@con_own_x" in gds\.yml.*gds apply --adopt j_customers --adopt j_orders --adopt j_payments --prune/s,
        ),
      );
      const applied = await applyPlan(client, planB, { describe: describeError, prune: true });
      expect(applied.failed.map((f) => [f.table, f.error.exitCode, f.error.code])).toEqual([
        ['j_customers', 6, 'owned_elsewhere'],
        ['j_orders', 6, 'owned_elsewhere'],
      ]);
      expect(applied.actions.filter((x) => x.step === 'remove')).toEqual([]);
      const after = await heldAs('j\\_%');
      expect(after.filter((t) => t.name !== 'j_refunds')).toEqual(before);
      expect(after.find((t) => t.name === 'j_refunds')).toMatchObject({
        source: 'own_xb.j_refunds',
        project: 'jaffle@con_own_x',
        active: true,
      });

      // The id the plan proposed, written in gds.yml: B's own id; A's tables are another project's all the same.
      const own = await planProject(client, teamB(['j_refunds']), {
        connectorId: 'con_own_x',
        project: 'jaffle.own_xb@con_own_x',
      });
      expect(own.tables.map((t) => [t.table, t.action, t.ownership])).toEqual([
        ['j_refunds', 'owned-elsewhere', 'other'],
      ]);
      expect(own.counts.gone).toBe(0);
    },
  );

  it(
    'a project that moved its models to another schema: its old tables are not replaced or pruned until --adopt names them',
    needs(skip),
    async () => {
      const movedTo = await appliedThenMoved('con_own_m', ['own_ma', 'own_mb'], 'moving', [
        'mv_customers',
        'mv_orders',
      ]);
      const before = await heldAs('mv\\_%');
      // Its models now build into own_mb, and mv_orders left the project.
      const moved = movedTo(['mv_customers']);
      const plan = await planProject(client, moved, { connectorId: 'con_own_m' });
      expect(plan.tables.map((t) => [t.table, t.action])).toEqual([['mv_customers', 'owned-elsewhere']]);
      expect(plan.counts.gone).toBe(0);
      const hint = 'gds apply --adopt mv_customers --adopt mv_orders --prune';
      expect(plan.warnings).toContainEqual(expect.stringContaining(hint));
      const refused = await applyPlan(client, plan, { describe: describeError, prune: true });
      expect(refused.failed.map((f) => f.table)).toEqual(['mv_customers']);
      expect(refused.actions.filter((x) => x.step === 'remove')).toEqual([]);
      expect(await heldAs('mv\\_%')).toEqual(before);

      // The command the warning gives: taken over, mv_customers moves to own_mb, mv_orders is removed.
      const adopting = await planProject(client, moved, {
        connectorId: 'con_own_m',
        adopt: ['mv_customers', 'mv_orders'],
      });
      expect(adopting.tables.map((t) => [t.table, t.action, t.adopt])).toEqual([
        ['mv_customers', 'replace', { from: 'moving@con_own_m' }],
        ['mv_orders', 'gone', { from: 'moving@con_own_m' }],
      ]);
      const applied = await applyPlan(client, adopting, { describe: describeError, prune: true });
      expect(applied.failed).toEqual([]);
      expect(applied.actions.filter((x) => x.step === 'remove').map((x) => x.table)).toEqual(['mv_orders']);
      expect((await heldAs('mv\\_%')).map((t) => [t.name, t.source, t.project, t.active])).toEqual([
        ['mv_customers', 'own_mb.mv_customers', 'moving@con_own_m', true],
        ['mv_orders', 'own_ma.mv_orders', 'moving@con_own_m', false],
      ]);
      const again = await planProject(client, moved, { connectorId: 'con_own_m' });
      expect(again.tables.map((t) => [t.table, t.action])).toEqual([['mv_customers', 'unchanged']]);
      expect(again.warnings).toEqual([]);
    },
  );

  it(
    'an id written in gds.yml is the contract: its tables in another schema are its own, replaced and pruned',
    needs(skip),
    async () => {
      const options = { connectorId: 'con_own_p', project: 'pinned-team' };
      const movedTo = await appliedThenMoved(
        'con_own_p',
        ['own_pa', 'own_pb'],
        'pinned',
        ['pn_customers', 'pn_orders'],
        options,
      );
      const plan = await planProject(client, movedTo(['pn_customers']), options);
      expect(plan.tables.map((t) => [t.table, t.action, t.ownership])).toEqual([
        ['pn_customers', 'replace', 'this'],
        ['pn_orders', 'gone', 'this'],
      ]);
      expect(plan.warnings).toEqual([]);
      const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
      expect(applied.failed).toEqual([]);
      expect((await heldAs('pn\\_%')).map((t) => [t.name, t.source, t.active])).toEqual([
        ['pn_customers', 'own_pb.pn_customers', true],
        ['pn_orders', 'own_pa.pn_orders', false],
      ]);
    },
  );

  it('--prune removes nothing when a create of the run failed', needs(skip), async () => {
    // p_payments is project A's and left the project; p_broken_one's warehouse object is there when planning
    // (a missing one is refused by the plan) and gone when applying, so its create fails.
    await server.sql('CREATE TABLE own_a.p_broken_one (id integer, thing_id integer)');
    const plan = await planProject(
      client,
      project([
        declaration('own_a', 'p_orders'),
        declaration('own_a', 'p_customers'),
        declaration('own_a', 'p_broken_one'),
      ]),
      { connectorId: connectors.a },
    );
    expect(plan.tables.filter((t) => t.action === 'gone').map((t) => t.table)).toEqual(['p_payments']);
    await server.sql('DROP TABLE own_a.p_broken_one');
    const summary = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(summary.failed.map((f) => f.table)).toEqual(['p_broken_one']);
    expect(summary.pruneSkipped).toBe(1);
    expect(summary.actions.filter((x) => x.step === 'remove')).toEqual([]);
    expect(await client.tables.list({ name: 'p_payments' })).toHaveLength(1);
  });

  it(
    '--prune removes nothing when a table of the run was refused (it may be the gone model’s new name)',
    needs(skip),
    async () => {
      // p_renamed's warehouse object is not on the connector: the plan refuses it, so it is not created.
      const plan = await planProject(
        client,
        project([
          declaration('own_a', 'p_orders'),
          declaration('own_a', 'p_customers'),
          declaration('own_a', 'p_renamed'),
        ]),
        { connectorId: connectors.a },
      );
      expect(plan.tables.filter((t) => t.action !== 'unchanged').map((t) => [t.table, t.action])).toEqual([
        ['p_renamed', 'refused'],
        ['p_payments', 'gone'],
      ]);
      const summary = await applyPlan(client, plan, { describe: describeError, prune: true });
      expect(summary.failed).toEqual([]);
      expect(summary.pruneSkipped).toBe(1);
      expect(summary.actions.filter((x) => x.step === 'remove')).toEqual([]);
      expect(await client.tables.list({ name: 'p_payments' })).toHaveLength(1);
    },
  );

  it(
    'the service refuses a replace or a delete naming another project, and a stale adopt',
    needs(skip),
    async () => {
      const [payments] = await client.tables.list({ name: 'p_payments' });
      const id = payments?.id ?? '';
      expect(payments?.project).toBe('shop@con_own_a');
      await expect(client.tables.remove(id, { project: 'shop@con_own_b' })).rejects.toMatchObject({
        status: 409,
        code: 'owned_elsewhere',
      });
      await expect(
        client.artifacts.push({
          filename: 'p_payments.json',
          content: JSON.stringify({
            table: 'p_payments',
            source: 'own_a.p_payments',
            columns: [{ name: 'id', type: 'integer' }],
          }),
          connectorId: connectors.a,
          replaceId: id,
          project: 'shop@con_own_b',
        }),
      ).rejects.toMatchObject({ status: 409, code: 'owned_elsewhere' });
      await expect(
        client.tables.setProject(id, { project: 'x', previous: null, reason: 'adopt' }),
      ).rejects.toMatchObject({
        status: 409,
        code: 'project_changed',
      });
      expect((await client.tables.list({ name: 'p_payments' }))[0]?.project).toBe('shop@con_own_a');
    },
  );

  it(
    'PUT /api/tables/{id}/project: 401 without a token, 403 for a member who does not own the table, 400 on a bad body',
    needs(skip),
    async () => {
      const [payments] = await client.tables.list({ name: 'p_payments' });
      const url = `${server.url}/api/tables/${payments?.id ?? ''}/project`;
      const put = (token: string | null, body: unknown) =>
        fetch(url, {
          method: 'PUT',
          headers: {
            'content-type': 'application/json',
            ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          },
          body: JSON.stringify(body),
        });
      const body = { project: 'taken', previous: 'shop@con_own_a' };
      expect((await put(null, body)).status).toBe(401);
      expect((await put(server.user('MEMBER').cliToken, body)).status).toBe(403);
      expect((await put(server.user('ADMIN').cliToken, { project: '', previous: null })).status).toBe(400);
      expect((await put(server.user('ADMIN').cliToken, { ...body, extra: 1 })).status).toBe(400);
      expect((await client.tables.list({ name: 'p_payments' }))[0]?.project).toBe('shop@con_own_a');
    },
  );
});

// A table of the project renamed by hand (`gds push --replace` with another name and file, which keeps its
// project) is its model's by its source: --select leaving the model out keeps it too, as it keeps the tables
// under the model's name, file and promoted name; the model deleted from the project, it is gone.
describe('a table of the project renamed by hand', () => {
  let started: ProjectServer | undefined;
  const renamed: Record<string, string> = {};
  const relations = {
    rn_orders: 'id integer, label text',
    rn_items: 'id integer, label text',
    rn_old: 'id integer, label text',
  };
  const models = Object.keys(relations);
  const sourcesOf = (names: string[]) => names.map((table) => ({ schema: 'analytics_dev', table }));

  beforeAll(async () => {
    started = await startProjectServer({ relations });
    const { client, dev } = started;
    const plan = await planProject(client, dbtProjectOf('renames', models), { connectorId: dev });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    for (const name of ['rn_orders', 'rn_old']) {
      const id = (await client.tables.list({ name }))[0]?.id ?? '';
      await client.artifacts.push({
        filename: `${name}_by_hand.json`,
        content: JSON.stringify({
          table: `${name}_by_hand`,
          source: `analytics_dev.${name}`,
          columns: [
            { name: 'id', type: 'integer', required: true },
            { name: 'label', type: 'text' },
          ],
        }),
        connectorId: dev,
        replaceId: id,
      });
      renamed[name] = id;
    }
  });

  afterAll(() => started?.close());

  it('is kept by its source when the selection leaves its model out: not gone, apply --prune keeps it', async () => {
    const { client, dev } = started as ProjectServer;
    expect(await client.tables.status(renamed['rn_orders'] ?? '')).toMatchObject({
      name: 'rn_orders_by_hand',
      project: `renames@${dev}`,
    });
    // --select rn_items: every model is still in the project, the renamed ones' included.
    const selected: DbtProject = {
      ...dbtProjectOf('renames', ['rn_items']),
      nodeNames: models,
      nodeSources: sourcesOf(models),
    };
    const plan = await planProject(client, selected, { connectorId: dev });
    expect(plan.tables.map((t) => [t.table, t.action])).toEqual([['rn_items', 'unchanged']]);
    expect(plan.counts.gone).toBe(0);
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.failed).toEqual([]);
    expect(applied.actions.filter((a) => a.step === 'remove')).toEqual([]);
    expect(await client.tables.status(renamed['rn_orders'] ?? '')).toMatchObject({
      name: 'rn_orders_by_hand',
    });
    expect(await client.tables.list({ name: 'rn_old_by_hand' })).toHaveLength(1);
    // With --schema (every source's schema replaced), the sources compared without case (as Snowflake folds).
    const elsewhere: DbtProject = {
      ...selected,
      nodeSources: models.map((table) => ({ schema: 'STAGING', table: table.toUpperCase() })),
    };
    const withSchema = await planProject(client, elsewhere, { connectorId: dev, schema: 'analytics_dev' });
    expect(withSchema.tables.map((t) => [t.table, t.action])).toEqual([['rn_items', 'unchanged']]);
  });

  it('is gone once its model is deleted from the project, and apply --prune removes it', async () => {
    const { client, dev } = started as ProjectServer;
    // rn_old is deleted; the selection (rn_items) still leaves rn_orders out.
    const left = ['rn_orders', 'rn_items'];
    const selected: DbtProject = {
      ...dbtProjectOf('renames', ['rn_items']),
      nodeNames: left,
      nodeSources: sourcesOf(left),
    };
    const plan = await planProject(client, selected, { connectorId: dev });
    expect(plan.tables.map((t) => [t.table, t.action, t.tableId])).toEqual([
      ['rn_items', 'unchanged', expect.any(String)],
      ['rn_old_by_hand', 'gone', renamed['rn_old']],
    ]);
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.failed).toEqual([]);
    expect(applied.actions.filter((a) => a.step === 'remove').map((a) => a.table)).toEqual([
      'rn_old_by_hand',
    ]);
    expect(await client.tables.list({ name: 'rn_old_by_hand' })).toEqual([]);
    expect(await client.tables.status(renamed['rn_orders'] ?? '')).toMatchObject({
      name: 'rn_orders_by_hand',
    });
  });
});
