// A project applied in dev, planned on the staging connector: each model's name is held by its dev table, and
// the plan's refusal names gds env promote only where the service would land that promotion. Not while the
// models are not built in staging (the promotion registers the dev table's object on staging's connector: 400
// unknown_source), nor where staging's connector reads the dev schema too (the promotion would take the very
// source the dev table holds: 409 source_conflict, which the service's own 409 of such a push says).
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

const MODELS = ['ss_model_0', 'ss_model_1'];
const COLUMNS = 'id integer, label text';

describe.each(ENGINES)('promotions the service would refuse ($engine)', { timeout: 300_000 }, (engine) => {
  let started: ProjectServer | undefined;
  let staging = '';

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    started = await startProjectServer({
      postgres: engine.postgres,
      relations: Object.fromEntries(MODELS.map((name) => [name, COLUMNS])),
    });
    const { server, client, dev } = started;
    staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const plan = await planProject(client, dbtProjectOf('shop', MODELS), { connectorId: dev });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
  }, 300_000);

  afterAll(() => started?.close());

  /** The staging plan's refusals, and the answer of promoting the first model's dev table to staging. */
  const planAndPromote = async (schema?: string) => {
    const { server, client } = started as ProjectServer;
    const plan = await planProject(client, dbtProjectOf('shop', MODELS), {
      connectorId: staging,
      ...(schema === undefined ? {} : { schema }),
    });
    const [held] = await server.sql<{ id: string }>(`SELECT id FROM gds.tables WHERE active AND name = $1`, [
      MODELS[0],
    ]);
    const promoted = await server.request('POST', `/api/tables/${held?.id ?? ''}/promotions`, {
      token: server.user('ADMIN').cliToken,
      body: { to: 'staging' },
    });
    return { tables: plan.tables, promoted };
  };

  const expectRefusedNamingNoPromotion = (tables: Array<{ action: string; reason?: string }>) => {
    expect(tables.map((t) => t.action)).toEqual(['refused', 'refused']);
    for (const table of tables) {
      expect(table.reason).toContain('another alias');
      expect(table.reason).not.toContain('gds env promote');
    }
  };

  it('names no promotion while the models are not built in staging', needs(engine.skip), async () => {
    const { tables, promoted } = await planAndPromote('analytics_staging');
    expectRefusedNamingNoPromotion(tables);
    expect(promoted.status).toBe(400);
    expect(promoted.body.error.code).toBe('unknown_source');
  });

  it('names no promotion where staging’s connector reads the dev schema', needs(engine.skip), async () => {
    await (started as ProjectServer).server.sql(
      `UPDATE gds.connectors SET warehouse_schema = 'analytics_dev' WHERE id = $1`,
      [staging],
    );
    const { tables, promoted } = await planAndPromote();
    expectRefusedNamingNoPromotion(tables);
    expect(promoted.status).toBe(409);
    expect(promoted.body.error.code).toBe('source_conflict');
  });
});
