// A team's project in an environment that mostly holds other teams' tables (on its connector: other projects'
// and tables pushed by hand): `gds plan` reads the tables this project may own (GET /api/held-tables narrowed
// by project and file name), and the others only by its models' names and sources when a model has no table
// of its own, so what it reads grows with the project, not the environment. It still says how many it leaves
// alone, finds a hand-pushed table on a model's source, and makes a table whose model left it `- gone`. A
// saved plan's check (`gds apply FILE`) reads as little.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { checkSavedPlan } from '../../src/services/project-saved.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { pushByHand } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';
import { copyTable } from '../helpers/table-copies.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

/** Other teams' tables on the project's connector: a page of held tables (500) is 2-3 times over. */
const OTHER_PROJECTS = 700;
const BY_HAND = 500;

/** The held-tables requests among the client's debug lines, and the tables their answers held. */
const heldRequests = (log: string[]) => log.filter((line) => /^→ GET \S+\/api\/held-tables\?/.test(line));

/** The Mode A tables of the connector's environment and workspace not of project `team`, by owner. */
async function leftAlone(server: ProjectServer['server'], connector: string) {
  const [counted] = await server.sql<{ other: number; hand: number }>(
    `SELECT count(*) FILTER (WHERE project IS NOT NULL AND project NOT LIKE 'team@%')::int AS other,
            count(*) FILTER (WHERE project IS NULL)::int AS hand
       FROM gds.tables t JOIN gds.connectors c ON c.id = $1
      WHERE t.active AND t.workspace_id = c.workspace_id AND t.environment_label = c.environment_label
        AND t.mode = 'MODE_A'`,
    [connector],
  );
  return counted;
}

describe.each(ENGINES)("a project among other teams' tables on $engine", ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  const log: string[] = [];
  const models = ['le_orders', 'le_items', 'le_left'];

  beforeAll(async () => {
    if (skip !== undefined) return;
    started = await startProjectServer({
      postgres,
      logger: (line) => log.push(line),
      relations: Object.fromEntries([...models, 'le_hand'].map((n) => [n, 'id integer, label text'])),
    });
    const { server, client, dev } = started;
    const plan = await planProject(client, dbtProjectOf('team', models), { connectorId: dev });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    const template = server.table('customers').id;
    await copyTable(server, template, OTHER_PROJECTS, 'le_other', {
      connector_id: `'${dev}'`,
      project: `'other_team_' || (g % 7)`,
    });
    await copyTable(server, template, BY_HAND, 'le_by_hand', { connector_id: `'${dev}'`, project: 'NULL' });
  });

  afterAll(() => started?.close());

  it(
    'a no-change plan reads its own tables in one request, and counts the others it leaves alone',
    needs(skip),
    async () => {
      const { server, client, dev } = started as ProjectServer;
      const seeded = await leftAlone(server, dev);
      log.length = 0;
      const plan = await planProject(client, dbtProjectOf('team', models), { connectorId: dev });
      expect(plan.counts.unchanged).toBe(3);
      expect(plan.untouched).toEqual({ otherProjects: seeded?.other, byHand: seeded?.hand });
      // Before: the environment's every table, three pages of 500.
      expect(heldRequests(log)).toHaveLength(1);
      expect(log.filter((line) => /^→ GET \S+\/api\/tables\?/.test(line))).toEqual([]);
    },
  );

  it(
    "a model with no table of its own finds the hand-pushed table on its source; a model's table left is gone",
    needs(skip),
    async () => {
      const { server, client, dev } = started as ProjectServer;
      const pushed = await pushByHand(client, {
        filename: 'hand.json',
        table: 'Someone_Elses',
        source: 'analytics_dev.le_hand',
        connectorId: dev,
      });
      log.length = 0;
      const plan = await planProject(client, dbtProjectOf('team', ['le_orders', 'le_items', 'le_hand']), {
        connectorId: dev,
      });
      expect(plan.tables.find((t) => t.table === 'le_hand')).toMatchObject({
        action: 'owned-elsewhere',
        tableId: pushed.tableId,
      });
      expect(plan.tables.find((t) => t.table === 'le_left')?.action).toBe('gone');
      const seeded = await leftAlone(server, dev);
      // The hand-pushed table is the model's (owned elsewhere), not left alone.
      expect(plan.untouched).toEqual({ otherProjects: seeded?.other, byHand: (seeded?.hand ?? 0) - 1 });
      // Its own tables, then the one model's name and source: one request each.
      expect(heldRequests(log)).toHaveLength(2);
      expect(heldRequests(log)[1]).toMatch(/[?&]name=le_hand[& ]/);
    },
  );

  it(
    'a saved plan is checked against its own tables; one moved to another project since is exit 6 saying so',
    needs(skip),
    async () => {
      const { client, dev } = started as ProjectServer;
      const plan = await planProject(client, dbtProjectOf('team', ['le_orders', 'le_items']), {
        connectorId: dev,
      });
      log.length = 0;
      await checkSavedPlan(client, plan);
      // Before: the environment's every table, three pages of 500.
      expect(heldRequests(log)).toHaveLength(1);
      const orders = plan.tables.find((t) => t.table === 'le_orders');
      await client.tables.setProject(orders?.tableId ?? '', {
        project: 'other_team_x',
        previous: orders?.owner ?? null,
        reason: 'adopt',
      });
      const refusal = await checkSavedPlan(client, plan).catch((error: unknown) => error);
      expect(refusal).toMatchObject({ exitCode: 6, code: 'plan_stale' });
      expect((refusal as Error).message).toContain(
        `le_orders (${orders?.tableId}) owner ${orders?.owner} → other_team_x`,
      );
    },
  );
});
