// A dbt project's table stays in the environment it was registered in: planning the project on a connector
// of another environment never moves it there (a replacement of it there would be the service's 404
// `replace_environment_mismatch`). The model is `! refused`, naming the table, its environment and
// `gds env promote`, which moves a table with promotion's own rules; apply writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

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
