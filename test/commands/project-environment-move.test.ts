// A dbt project's table stays in the environment it was registered in: planning the project on a connector
// of another environment never moves it there (a replacement of it there would be the service's 404
// `replace_environment_mismatch`). The model is `! refused`, naming the table, its environment and
// `gds env promote`, which moves a table with promotion's own rules; apply writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { bundleDigest } from '../../src/core/bundle-seal.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { exportBundle, importBundle, parseBundle, relayPromotion } from '../../src/services/promotions.js';
import { planProject } from '../../src/services/project-plan.js';
import type { DbtProject } from '../../src/core/dbt/types.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

/**
 * A project server whose relations are in analytics_dev and analytics_prod, each project planned and applied on
 * the dev connector with its options (gds.yml's project); and the production connector.
 */
async function startInTwoEnvironments(
  postgres: boolean,
  relations: Record<string, string>,
  projects: ReadonlyArray<readonly [DbtProject, { project?: string }]>,
): Promise<{ started: ProjectServer; production: string }> {
  const started = await startProjectServer({ postgres, relations });
  const { server, client, dev } = started;
  for (const [name, columns] of Object.entries(relations))
    await server.sql(`CREATE TABLE analytics_prod.${name} (${columns})`);
  for (const [project, options] of projects) {
    const plan = await planProject(client, project, { connectorId: dev, ...options });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
  }
  const production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
  return { started, production };
}

/** Plan options on the production connector, with gds.yml's project when given. */
const inProductionOf = (production: () => string) => (project?: string) => ({
  connectorId: production(),
  schema: 'analytics_prod',
  ...(project === undefined ? {} : { project }),
});

describe.each(ENGINES)('a project planned on another environment on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let production = '';
  let movedId = '';

  beforeAll(async () => {
    if (skip !== undefined) return;
    started = await startProjectServer({ postgres, relations: { mv_orders: 'id integer, label text' } });
    const { server, client, dev } = started;
    await server.sql('CREATE TABLE analytics_prod.mv_orders (id integer, label text)');
    production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
    const plan = await planProject(client, dbtProjectOf('moves', ['mv_orders']), {
      connectorId: dev,
      project: 'moves',
    });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    movedId = (await client.tables.list({ name: 'mv_orders' }))[0]?.id ?? '';
  });

  afterAll(() => started?.close());

  it(
    'refuses the model, pointing at gds env promote; apply leaves the table where it is',
    needs(skip),
    async () => {
      const { client } = started as ProjectServer;
      const plan = await planProject(client, dbtProjectOf('moves', ['mv_orders']), {
        connectorId: production,
        project: 'moves',
        schema: 'analytics_prod',
      });
      const [table] = plan.tables;
      expect(table).toMatchObject({ table: 'mv_orders', action: 'refused' });
      expect(table?.reason).toContain(`table ${movedId} (analytics_dev.mv_orders, dev, project moves)`);
      expect(table?.reason).toContain(`gds env promote ${movedId} --to production`);
      await applyPlan(client, plan, { describe: describeError });
      const status = await client.tables.status(movedId);
      expect(status.environmentLabel).toBe('dev');
      expect((await client.tables.list({ name: 'mv_orders' })).map((t) => t.id)).toEqual([movedId]);
    },
  );
});

// Promotion is how the project's table gets to another environment (`customers` in dev lands as
// `customers_production`): planned there, the model is the promoted table's, under its promoted name, with the
// project's id (gds.yml's, or derived from the connector: `promos@<production connector>`); apply replaces it
// keeping that name, and the project's dev table is never touched.
describe.each(ENGINES)('a project promoted to another environment on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let production = '';
  const dev: Record<string, string> = {};
  const promoted: Record<string, string> = {};
  const relations = { pr_named: 'id integer, label text', pr_derived: 'id integer, label text' };
  const named = () => dbtProjectOf('promos', ['pr_named']);
  const derived = () => dbtProjectOf('promos', ['pr_derived']);
  const inProduction = inProductionOf(() => production);

  beforeAll(async () => {
    if (skip !== undefined) return;
    ({ started, production } = await startInTwoEnvironments(postgres, relations, [
      [named(), { project: 'promos' }],
      [derived(), {}],
    ]));
    const { client } = started;
    for (const name of Object.keys(relations)) {
      dev[name] = (await client.tables.list({ name }))[0]?.id ?? '';
      const landed = await client.promotions.promote(dev[name] ?? '', { to: 'production' });
      promoted[name] = 'tableId' in landed ? landed.tableId : '';
    }
  });

  afterAll(() => started?.close());

  it.each([
    ['named in gds.yml', 'pr_named', named, 'promos'],
    ['derived from the connector', 'pr_derived', derived, undefined],
  ] as const)(
    'plans the promoted table (project %s) as the project’s own, unchanged under its promoted name',
    async (_how, name, project, id) => {
      if (skip !== undefined) return;
      const { client } = started as ProjectServer;
      const plan = await planProject(client, project(), inProduction(id));
      expect(plan.tables).toEqual([
        expect.objectContaining({
          table: `${name}_production`,
          action: 'unchanged',
          tableId: promoted[name],
          ownership: 'this',
        }),
      ]);
      expect(plan.tables[0]?.migrate).toBeUndefined();
      expect(plan.proposal).toBeUndefined();
    },
  );

  it(
    'applies a change as a replacement of the promoted table keeping its name; the dev table is untouched',
    needs(skip),
    async () => {
      const { client, server } = started as ProjectServer;
      await server.sql('ALTER TABLE analytics_prod.pr_named ADD COLUMN note text');
      const changed = named();
      const [model] = changed.declarations;
      if (model === undefined) throw new Error('no model');
      const columns = [...model.columns, { name: 'note', type: 'text' }];
      changed.declarations = [
        {
          ...model,
          columns,
          artifact: {
            ...model.artifact,
            content: JSON.stringify({ table: 'pr_named', source: 'analytics_dev.pr_named', columns }),
          },
        },
      ];
      const plan = await planProject(client, changed, inProduction('promos'));
      expect(plan.tables[0]).toMatchObject({
        table: 'pr_named_production',
        action: 'replace',
        tableId: promoted['pr_named'],
      });
      expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
      const status = await client.tables.status(promoted['pr_named'] ?? '');
      expect(status).toMatchObject({ name: 'pr_named_production', environmentLabel: 'production' });
      expect((await client.tables.status(dev['pr_named'] ?? '')).environmentLabel).toBe('dev');
      const again = await planProject(client, changed, inProduction('promos'));
      expect(again.tables[0]).toMatchObject({ action: 'unchanged', tableId: promoted['pr_named'] });
    },
  );

  it('plans the promoted table gone once its model is', needs(skip), async () => {
    const { client } = started as ProjectServer;
    const plan = await planProject(client, dbtProjectOf('promos', []), inProduction('promos'));
    expect(plan.tables.map((t) => [t.action, t.tableId])).toEqual([['gone', promoted['pr_named']]]);
  });
});

// --select (or --exclude) leaving a model out never makes its table gone, under its promoted name too: the
// production copy of a model the selection skipped is kept by --prune.
describe('a promoted table whose model the selection leaves out', () => {
  let started: ProjectServer | undefined;
  let production = '';
  const promoted: Record<string, string> = {};
  const relations = { ps_orders: 'id integer, label text', ps_items: 'id integer, label text' };

  beforeAll(async () => {
    ({ started, production } = await startInTwoEnvironments(false, relations, [
      [dbtProjectOf('promsel', ['ps_orders', 'ps_items']), { project: 'promsel' }],
    ]));
    const { client } = started;
    for (const name of Object.keys(relations)) {
      const id = (await client.tables.list({ name }))[0]?.id ?? '';
      const landed = await client.promotions.promote(id, { to: 'production' });
      promoted[name] = 'tableId' in landed ? landed.tableId : '';
    }
  });

  afterAll(() => started?.close());

  it('is not gone, and apply --prune in production keeps it', async () => {
    const { client } = started as ProjectServer;
    const selected = { ...dbtProjectOf('promsel', ['ps_items']), nodeNames: ['ps_orders', 'ps_items'] };
    const plan = await planProject(client, selected, inProductionOf(() => production)('promsel'));
    expect(plan.tables.map((t) => [t.table, t.action])).toEqual([['ps_items_production', 'unchanged']]);
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.actions.filter((a) => a.step === 'remove')).toEqual([]);
    expect(await client.tables.status(promoted['ps_orders'] ?? '')).toMatchObject({
      name: 'ps_orders_production',
      environmentLabel: 'production',
    });
  });
});

// A promotion through a bundle (`--bundle-out` then `--bundle-in`, or `--dest-profile`, which relays one
// across two profiles) records the project as a direct promotion does: the bundle carries the source table's,
// and the import records what the promotion would (gds.yml's kept, a derived id made the target connector's),
// so the model planned in the target environment is the project's own, not `! owned elsewhere`. A bundle written
// before it carried a project registers none: apply refuses that table, naming the model to --exclude and
// the table's name to --adopt.
describe.each(ENGINES)('a project promoted through a bundle on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let production = '';
  const dev: Record<string, string> = {};
  const models = ['bu_named', 'bu_derived', 'bu_old'];
  const relations = Object.fromEntries(models.map((name) => [name, 'id integer, label text']));
  const model = (name: string) => dbtProjectOf('bunds', [name]);
  const inProduction = inProductionOf(() => production);

  beforeAll(async () => {
    if (skip !== undefined) return;
    ({ started, production } = await startInTwoEnvironments(postgres, relations, [
      [model('bu_named'), { project: 'bunds' }],
      [model('bu_derived'), {}],
      [model('bu_old'), { project: 'bunds' }],
    ]));
    const { client } = started;
    for (const name of models) dev[name] = (await client.tables.list({ name }))[0]?.id ?? '';
  });

  afterAll(() => started?.close());

  it(
    'records gds.yml’s project through --bundle-out / --bundle-in: planned in production, the model is the project’s own',
    needs(skip),
    async () => {
      const { client } = started as ProjectServer;
      const written = JSON.stringify(await exportBundle(client, dev['bu_named'] ?? '', 'production'));
      const landed = await importBundle(client, parseBundle(written, 'bu_named.bundle.json'), 'production');
      expect(landed.kind).toBe('promoted');
      const id = landed.kind === 'promoted' ? landed.result.tableId : '';
      expect((await client.tables.status(id)).project).toBe('bunds');
      const plan = await planProject(client, model('bu_named'), inProduction('bunds'));
      expect(plan.tables).toEqual([
        expect.objectContaining({
          table: 'bu_named_production',
          action: 'unchanged',
          tableId: id,
          ownership: 'this',
          owner: 'bunds',
        }),
      ]);
    },
  );

  it(
    'records a derived project as the production connector’s through --dest-profile’s relay',
    needs(skip),
    async () => {
      const { client } = started as ProjectServer;
      expect((await client.tables.status(dev['bu_derived'] ?? '')).project).toBe(`bunds@${started?.dev}`);
      const landed = await relayPromotion(client, client, dev['bu_derived'] ?? '', 'production');
      const id = landed.kind === 'promoted' ? landed.result.tableId : '';
      expect((await client.tables.status(id)).project).toBe(`bunds@${production}`);
      const plan = await planProject(client, model('bu_derived'), inProduction());
      expect(plan.tables).toEqual([
        expect.objectContaining({
          table: 'bu_derived_production',
          action: 'unchanged',
          tableId: id,
          ownership: 'this',
        }),
      ]);
      expect(plan.tables[0]?.migrate).toBeUndefined();
    },
  );

  it(
    'registers no project from a bundle written before bundles carried one; apply names the model to --exclude and the table to --adopt',
    needs(skip),
    async () => {
      const { client } = started as ProjectServer;
      const { sha256: _seal, ...body } = await exportBundle(client, dev['bu_old'] ?? '', 'production');
      const { project: _project, connectorId: _connector, ...table } = body.table;
      const older = { ...body, table };
      const written = JSON.stringify({ ...older, sha256: bundleDigest(older) });
      const landed = await importBundle(client, parseBundle(written, 'bu_old.bundle.json'), 'production');
      const id = landed.kind === 'promoted' ? landed.result.tableId : '';
      expect((await client.tables.status(id)).project).toBeNull();

      const plan = await planProject(client, model('bu_old'), inProduction('bunds'));
      expect(plan.tables[0]).toMatchObject({ table: 'bu_old_production', action: 'owned-elsewhere' });
      const applied = await applyPlan(client, plan, { describe: describeError });
      expect(applied.failed.map((f) => f.error.code)).toEqual(['owned_elsewhere']);
      expect(applied.failed[0]?.error.suggestion).toBe(
        'Leave the model out (--exclude bu_old), or pass --adopt bu_old_production to take the table over.',
      );
      // What the hint says works: --adopt takes the table's name.
      const adopting = await planProject(client, model('bu_old'), {
        ...inProduction('bunds'),
        adopt: ['bu_old_production'],
      });
      expect(adopting.tables[0]).toMatchObject({ action: 'unchanged', adopt: { from: null } });
      expect((await applyPlan(client, adopting, { describe: describeError })).failed).toEqual([]);
      expect((await client.tables.status(id)).project).toBe('bunds');
    },
  );
});

// A change upstream of a CERTIFIED promoted table names it (`downstreamCertified`), under its promoted name, as
// it names a table of the model's name: selected (the plan's table of the model) or not (its promoted name).
describe.each(ENGINES)('a change upstream of a promoted CERTIFIED table on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let production = '';
  const relations = { ch_parent: 'id integer, label text', ch_child: 'id integer, label text' };
  const lineage = [
    { uniqueId: 'model.chain.ch_parent', name: 'ch_parent', parents: [] },
    { uniqueId: 'model.chain.ch_child', name: 'ch_child', parents: ['model.chain.ch_parent'] },
  ];
  const chain = (names: string[]) => ({ ...dbtProjectOf('chain', names), lineage });

  beforeAll(async () => {
    if (skip !== undefined) return;
    const names = Object.keys(relations);
    ({ started, production } = await startInTwoEnvironments(postgres, relations, [
      [chain(names), { project: 'chain' }],
    ]));
    const { server, client } = started;
    for (const name of names)
      await client.promotions.promote((await client.tables.list({ name }))[0]?.id ?? '', {
        to: 'production',
      });
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE name = 'ch_child_production'`);
    await server.sql('ALTER TABLE analytics_prod.ch_parent ADD COLUMN note text');
  });

  afterAll(() => started?.close());

  /** The project with ch_parent given a column `note` (when selected). */
  const changed = (names: string[]) => {
    const project = chain(names);
    project.declarations = project.declarations.map((model) => {
      if (model.name !== 'ch_parent') return model;
      const columns = [...model.columns, { name: 'note', type: 'text' }];
      const content = JSON.stringify({ table: 'ch_parent', source: 'analytics_dev.ch_parent', columns });
      return { ...model, columns, artifact: { ...model.artifact, content } };
    });
    return project;
  };

  it.each([
    ['selected', ['ch_parent', 'ch_child']],
    ['not selected', ['ch_parent']],
  ])('names the promoted child, %s', needs(skip), async (_how, names) => {
    const { client } = started as ProjectServer;
    const plan = await planProject(client, changed(names), inProductionOf(() => production)('chain'));
    expect(plan.tables.find((t) => t.uniqueId === 'model.chain.ch_parent')).toMatchObject({
      table: 'ch_parent_production',
      action: 'replace',
      downstreamCertified: ['ch_child_production'],
    });
  });
});
