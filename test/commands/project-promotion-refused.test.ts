// A project applied in dev, planned on a staging connector that reads the same schema (analytics_dev): each
// model's name is held by its dev table, but promoting that table to staging would register the very source it
// holds (staging's connector reads analytics_dev too), which the service refuses (409 source_conflict). The
// plan's refusal does not name that promotion, as the service's own 409 of such a push does not.
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

describe.each(ENGINES)(
  'a staging connector reading the dev schema ($engine)',
  { timeout: 300_000 },
  (engine) => {
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
      await server.sql(`UPDATE gds.connectors SET warehouse_schema = 'analytics_dev' WHERE id = $1`, [
        staging,
      ]);
    }, 300_000);

    afterAll(() => started?.close());

    it(
      'refuses each model without naming a promotion the service would refuse',
      needs(engine.skip),
      async () => {
        const { server, client } = started as ProjectServer;
        const plan = await planProject(client, dbtProjectOf('shop', MODELS), { connectorId: staging });
        expect(plan.tables.map((t) => t.action)).toEqual(['refused', 'refused']);
        for (const table of plan.tables) {
          expect(table.reason).toContain('another alias');
          expect(table.reason).not.toContain('gds env promote');
        }
        // The promotion it named before: refused, as it would take the source the dev table holds.
        const [held] = await server.sql<{ id: string }>(
          `SELECT id FROM gds.tables WHERE active AND name = $1`,
          [MODELS[0]],
        );
        const promoted = await server.request('POST', `/api/tables/${held?.id ?? ''}/promotions`, {
          token: server.user('ADMIN').cliToken,
          body: { to: 'staging' },
        });
        expect(promoted.status).toBe(409);
        expect(promoted.body.error.code).toBe('source_conflict');
      },
    );
  },
);
