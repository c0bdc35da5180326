// planProject and applyPlan (src/services/project-*.ts) with a real client against the in-process reference
// server, on dbt projects built here as the reader declares them: what is create/replace/unchanged/gone/
// refused and why, --strict, a failing table that leaves the others applied with its exit code, a registration
// that raced another apply, and every real manifest of ../shared/fixtures planned without a crash.
import { copyFile, mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import type { ApiClient } from '../../src/client/index.js';
import type { DbtDeclaration, DbtProject } from '../../src/core/dbt/types.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planChanges, planProject } from '../../src/services/project-plan.js';
import { strictFailure } from '../../src/services/project.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import type { TestServer } from '../helpers/server.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { dbtDeclaration } from '../helpers/dbt-declaration.js';
import { columns, manifest, model } from '../core/dbt/helpers.js';

let started: ProjectServer | undefined;
let server: TestServer;
let client: ApiClient;
let dev: string;

beforeAll(async () => {
  started = await startProjectServer({
    relations: { things: 'id integer, kind text', widgets: 'id integer, thing_id integer' },
  });
  ({ server, client, dev } = started);
});

afterAll(() => started?.close());

function declaration(name: string, extra: Partial<DbtDeclaration> = {}): DbtDeclaration {
  const columns = [
    { name: 'id', type: 'integer', required: true },
    { name: name === 'things' ? 'kind' : 'thing_id', type: name === 'things' ? 'text' : 'integer' },
  ];
  return {
    ...dbtDeclaration(name, 'shop', columns),
    mappedTests: [{ test: `test.shop.unique_${name}_id`, rule: 'grainKey' }],
    ...extra,
  };
}

function project(declarations: DbtDeclaration[], extra: Partial<DbtProject> = {}): DbtProject {
  return { projectName: 'shop', declarations, refusals: [], otherTests: [], warnings: [], ...extra };
}

const describeError = (error: unknown) => error;

/** A dev connector serving `schema` (created with it), and the declaration of `name` in that schema. */
async function inSchema(
  schema: string,
  name: string,
  extra: Partial<DbtDeclaration> = {},
): Promise<DbtDeclaration> {
  await server.sql(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await server.sql(`CREATE TABLE ${schema}.${name} (id integer, thing_id integer)`);
  await server.sql(
    `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
     VALUES ($2, $1, $3, 'postgres', 'ACTIVE', 'dev', $4, now()) ON CONFLICT DO NOTHING`,
    [server.ready.workspaceId, `con_${schema}`, `dbt-${schema}`, schema],
  );
  const found = declaration(name, { source: { schema, table: name }, ...extra });
  found.artifact = {
    ...found.artifact,
    content: found.artifact.content.replace(`analytics_dev.${name}`, `${schema}.${name}`),
  };
  return found;
}

describe('planProject and applyPlan', () => {
  it('create, apply, then unchanged; a changed gate1.yml is ~ replace of that part only', async () => {
    const first = await planProject(client, project([declaration('things')]), { connectorId: dev });
    expect(first.tables.map((t) => [t.table, t.action])).toEqual([['things', 'create']]);
    expect(first.connector).toEqual({ id: dev, environmentLabel: 'dev' });
    const applied = await applyPlan(client, first, { describe: describeError });
    expect(applied.failed).toEqual([]);
    expect(applied.actions.map((a) => [a.step, a.outcome])).toEqual([
      ['register', 'done'],
      ['gate1', 'done'],
      ['contract', 'done'],
    ]);
    const again = await planProject(client, project([declaration('things')]), { connectorId: dev });
    expect(again.tables[0]).toMatchObject({ action: 'unchanged', tableId: applied.actions[0]?.tableId });
    expect(planChanges(again)).toBe(false);

    const stricter = declaration('things', {
      gate1Yaml:
        'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: 0 }\n  - field: kind\n    nullRate: { warn: 0, fail: 0 }\n',
    });
    const changed = await planProject(client, project([stricter]), { connectorId: dev });
    expect(changed.tables[0]).toMatchObject({
      action: 'replace',
      changes: { definition: false, gate1: true, contract: false },
    });
    expect(changed.tables[0]?.diffs.gate1).toContain('+  - field: kind');
    const second = await applyPlan(client, changed, { describe: describeError });
    expect(second.actions.map((a) => [a.step, a.outcome, a.version])).toEqual([['gate1', 'done', 2]]);
  });

  it('a selection leaving a model out never makes its table gone; plan --exit-code counts gone only with --prune', async () => {
    // `things` was registered by the test above; `--select widgets` leaves its model out of the selection.
    const { declareDbtProject, prepareDbtReader } = await import('../../src/core/dbt/project.js');
    const dbtReader = await prepareDbtReader();
    const selected = declareDbtProject(
      {
        manifest: manifest(
          model('things', { columns: columns({ id: 'integer', kind: 'text' }) }),
          model('widgets', { columns: columns({ id: 'integer', thing_id: 'integer' }) }),
        ),
      },
      { select: ['widgets'] },
      dbtReader,
    );
    expect(selected.declarations.map((d) => d.name)).toEqual(['widgets']);
    expect(selected.nodeNames).toEqual(['things', 'widgets']);
    const plan = await planProject(client, selected, { connectorId: dev, schema: 'analytics_dev' });
    expect(plan.tables.map((t) => [t.table, t.action])).toEqual([['widgets', 'create']]);
    expect(plan.counts.gone).toBe(0);
    // Nothing is pruned: apply --prune of that plan leaves things registered.
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.actions.filter((a) => a.step === 'remove')).toEqual([]);
    const widgets = applied.actions[0]?.tableId ?? '';
    try {
      const names = (await client.tables.list()).map((t) => t.name);
      expect(names).toContain('things');
      expect(names).toContain('widgets');
      // widgets' model leaving the whole project makes it gone: shown, and --exit-code counts it only
      // with --prune.
      const left = await planProject(client, project([], { nodeNames: ['things'] }), { connectorId: dev });
      expect(left.tables.map((t) => [t.table, t.action])).toEqual([['widgets', 'gone']]);
      expect(planChanges(left)).toBe(false);
      expect(planChanges(left, { prune: true })).toBe(true);
    } finally {
      await client.tables.remove(widgets);
    }
  });

  it('a table the project registered whose model left it is - gone; --prune removes it; others are never gone', async () => {
    // Under the derived id with no table of it a node of the project, the table may be another project's
    // of the name (its own test below): the id written as gds.yml would write it says it is this one's.
    const plan = await planProject(client, project([]), { connectorId: dev, project: `shop@${dev}` });
    const gone = plan.tables.filter((t) => t.action === 'gone');
    expect(gone.map((t) => t.table)).toEqual(['things']);
    // The seeded tables (registered without the project's file name) are not the project's.
    expect(plan.tables.map((t) => t.table)).not.toContain('customers');
    // Another project's plan does not see it as its own.
    const other = await planProject(client, project([], { projectName: 'other' }), { connectorId: dev });
    expect(other.tables).toEqual([]);
    const pruned = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(pruned.actions.map((a) => [a.table, a.step, a.outcome])).toEqual([['things', 'remove', 'done']]);
    expect((await planProject(client, project([]), { connectorId: dev })).tables).toEqual([]);
  });

  it('a derived id whose every table is no node of the project: another same-named project’s, never gone, nothing created', async () => {
    const first = await applyPlan(
      client,
      await planProject(client, project([declaration('things')]), { connectorId: dev }),
      { describe: describeError },
    );
    const things = first.actions[0]?.tableId ?? '';
    try {
      const other = await planProject(client, project([declaration('widgets')]), { connectorId: dev });
      expect(other.tables.map((t) => [t.table, t.action])).toEqual([['widgets', 'refused']]);
      expect(other.tables[0]?.reason).toContain(
        `not created: shop@${dev} holds a table of no model of this project`,
      );
      expect(other.warnings.join('\n')).toContain(
        `things (dev) is recorded under shop@${dev}, the id gds derives for a project named shop here, in schema analytics_dev, but it is no model, seed or snapshot of this project`,
      );
      expect(other.untouched.otherProjects).toBeGreaterThan(0);
      const pruned = await applyPlan(client, other, { describe: describeError, prune: true });
      expect(pruned.actions).toEqual([]);
      expect((await client.tables.list()).map((t) => t.name)).toContain('things');
      // A node of the project by that name (selected or not) makes the id this project's again.
      const selected = await planProject(
        client,
        project([declaration('widgets')], { nodeNames: ['things', 'widgets'] }),
        {
          connectorId: dev,
        },
      );
      expect(selected.tables.map((t) => [t.table, t.action])).toEqual([['widgets', 'create']]);
    } finally {
      await client.tables.remove(things);
    }
  });

  it('refused: the reader refusals, a Mode B name, an invalid gate1.yml; --strict counts them with not-mapped tests', async () => {
    const plan = await planProject(
      client,
      project(
        [
          declaration('crm_contacts'),
          declaration('widgets', {
            gate1Yaml: 'fieldOverrides: nope\n',
            notMappedTests: [{ test: 't.x', reason: 'a singular test' }],
          }),
        ],
        {
          refusals: [
            {
              uniqueId: 'model.shop.eph',
              resourceType: 'model',
              name: 'eph',
              reason: 'no column could be found',
              notMappedTests: [],
            },
          ],
          otherTests: [{ test: 'test.shop.source_test', reason: 'a test on a source' }],
        },
      ),
      { connectorId: dev },
    );
    const byName = Object.fromEntries(plan.tables.map((t) => [t.table, t]));
    expect(byName.crm_contacts).toMatchObject({
      action: 'refused',
      reason: expect.stringContaining('Mode B'),
    });
    expect(byName.widgets).toMatchObject({
      action: 'refused',
      reason: expect.stringContaining('not a valid gate1.yml'),
    });
    expect(byName.eph).toMatchObject({ action: 'refused', reason: 'no column could be found' });
    expect(plan.counts).toMatchObject({ refused: 3, create: 0 });
    const strict = strictFailure(plan);
    expect(strict).toBeInstanceOf(CliError);
    expect(strict).toMatchObject({
      exitCode: 7,
      message: '--strict: 2 dbt tests not mapped and 3 models refused.',
    });
    expect(strictFailure(await planProject(client, project([]), { connectorId: dev }))).toBeUndefined();
  });

  it('one table failing leaves the others applied and says which, with its exit code', async () => {
    const missing = declaration('nowhere');
    // The relation is there when planning (a missing one is refused by the plan) and gone when applying.
    await server.sql(`CREATE TABLE analytics_dev.nowhere (id integer, thing_id integer)`);
    const plan = await planProject(client, project([declaration('widgets'), missing]), { connectorId: dev });
    expect(plan.counts.create).toBe(2);
    await server.sql(`DROP TABLE analytics_dev.nowhere`);
    const summary = await applyPlan(client, plan, {
      describe: (error) => (error instanceof CliError ? error : new CliError(String(error), { exitCode: 7 })),
    });
    expect(summary.applied).toBe(1);
    expect(summary.failed.map((f) => [f.table, f.step])).toEqual([['nowhere', 'register']]);
    expect(summary.failed[0]?.error.exitCode).toBe(7);
    const after = await planProject(client, project([declaration('widgets')]), { connectorId: dev });
    expect(after.tables[0]).toMatchObject({ table: 'widgets', action: 'unchanged' });
  });

  it('a registration raced by another apply becomes "no change" on the table it made', async () => {
    await server.sql(`CREATE TABLE analytics_dev.gadgets (id integer, thing_id integer)`);
    // The earlier tests' tables, no node of this one-model project, are under the id too: written, it owns them.
    const stale = await planProject(client, project([declaration('gadgets')]), {
      connectorId: dev,
      project: `shop@${dev}`,
    });
    const winner = await applyPlan(client, stale, { describe: describeError });
    expect(winner.failed).toEqual([]);
    // The same stale plan (made before the other apply wrote) applied again.
    const loser = await applyPlan(client, stale, {
      describe: (error) => error,
    });
    expect(loser.failed).toEqual([]);
    expect(loser.actions.map((a) => [a.step, a.outcome])).toEqual([
      ['replace', 'unchanged'],
      ['gate1', 'unchanged'],
      ['contract', 'unchanged'],
    ]);
    const rows = await server.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM gds.tables WHERE lower(name) = 'gadgets' AND active`,
    );
    expect(rows[0]?.n).toBe(1);
  });
});

describe('a project over two schemas', () => {
  it('with --env and no connector, each table goes to the connector whose schema holds it', async () => {
    await server.sql(`CREATE TABLE analytics_dev.parts (id integer, thing_id integer)`);
    const totals = await inSchema('marts', 'totals');
    const both = project([declaration('parts'), totals], { projectName: 'multi' });
    await expect(planProject(client, both, {})).rejects.toMatchObject({
      exitCode: 2,
      code: 'connector_required',
    });
    const plan = await planProject(client, both, { env: 'dev' });
    expect(plan.connector).toEqual({ id: null, environmentLabel: 'dev' });
    const summary = await applyPlan(client, plan, { describe: describeError });
    expect(summary.failed).toEqual([]);
    const rows = await server.sql<{ name: string; connector_id: string }>(
      `SELECT name, connector_id FROM gds.tables WHERE name IN ('parts', 'totals') AND active ORDER BY name`,
    );
    expect(rows).toEqual([
      { name: 'parts', connector_id: dev },
      { name: 'totals', connector_id: 'con_marts' },
    ]);
    const again = await planProject(client, both, { env: 'dev' });
    expect(again.tables.map((t) => [t.table, t.action])).toEqual([
      ['parts', 'unchanged'],
      ['totals', 'unchanged'],
    ]);
    expect(planChanges(again)).toBe(false);
  });
});

describe('two models of one project with the same table name', () => {
  it('are refused, naming each other, instead of taking turns replacing one table', async () => {
    // dbt builds both (their schemas differ: `alias: sprockets` in two folders), but a table name is unique in
    // an environment, so apply registered the first and then replaced it with the second, every time.
    await server.sql(`CREATE TABLE analytics_dev.sprockets (id integer, thing_id integer)`);
    const staged = declaration('sprockets', { uniqueId: 'model.shop.stg_sprockets' });
    const sold = await inSchema('sales', 'sprockets');
    const twice = project([staged, sold, declaration('things')], { projectName: 'twice' });
    const plan = await planProject(client, twice, { env: 'dev' });
    const byId = new Map(plan.tables.map((t) => [t.uniqueId, t]));
    for (const [id, other] of [
      ['model.shop.stg_sprockets', 'model.shop.sprockets'],
      ['model.shop.sprockets', 'model.shop.stg_sprockets'],
    ] as const) {
      expect(byId.get(id)?.action, id).toBe('refused');
      expect(byId.get(id)?.reason, id).toContain(other);
    }
    expect(byId.get('model.shop.things')?.action).not.toBe('refused');
    const summary = await applyPlan(client, plan, { describe: describeError });
    expect(summary.failed).toEqual([]);
    const rows = await server.sql(`SELECT id FROM gds.tables WHERE lower(name) = 'sprockets' AND active`);
    expect(rows).toEqual([]);
    expect(strictFailure(plan)).toBeDefined();
  });
});

describe('every real manifest of ../shared/fixtures', needs(noSharedFixtures), () => {
  it('plans every declaration, refusal and test without a crash', async () => {
    const folders = [join(sharedFixturesDir, 'real/dbt'), join(sharedFixturesDir, 'dbt')];
    const work = await mkdtemp(join(tmpdir(), 'gds-plan-manifests-'));
    let planned = 0;
    for (const folder of folders) {
      for (const file of (await readdir(folder)).filter((f) => f.endsWith('manifest.json'))) {
        const target = join(work, file, 'target');
        await mkdir(target, { recursive: true });
        await copyFile(join(folder, file), join(target, 'manifest.json'));
        const dbt = await loadDbtProject(join(work, file), {});
        const plan = await planProject(client, dbt, { connectorId: dev });
        const declared = dbt.declarations.length + dbt.refusals.length + (dbt.skipped?.length ?? 0);
        expect(
          plan.tables.filter((t) => t.action !== 'gone'),
          file,
        ).toHaveLength(declared);
        for (const table of plan.tables) {
          if (table.action === 'refused' || table.action === 'owned-elsewhere' || table.action === 'skipped')
            expect(table.reason, `${file} ${table.table}`).toBeTruthy();
          else expect(['create', 'replace', 'unchanged', 'gone']).toContain(table.action);
        }
        planned += 1;
      }
    }
    expect(planned).toBeGreaterThanOrEqual(20);
  });
});
