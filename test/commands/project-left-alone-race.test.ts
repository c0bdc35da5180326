// `gds plan` (and `gds apply`) says how many tables of the environment it leaves alone. A run of the same
// project that registers tables while this one reads (a CI retry while the first run goes on, or the service
// finishing the batch of an apply killed a moment before) must not make that count wrong: a table of this
// project registered after the first read was never counted among the others, so it is not counted off them
// (it was, and the plan said "Left alone in dev: -1 tables of other projects").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import type { ApiClient } from '../../src/client/index.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

let started: ProjectServer | undefined;
const models = ['race_a', 'race_b', 'race_c'];

beforeAll(async () => {
  started = await startProjectServer({
    relations: Object.fromEntries(models.map((n) => [n, 'id integer, label text'])),
  });
  const { client, dev } = started;
  const first = await planProject(client, dbtProjectOf('team', ['race_a']), { connectorId: dev });
  expect((await applyPlan(client, first, { describe: describeError })).failed).toEqual([]);
});

afterAll(() => started?.close());

describe('a plan while another run of the project registers its tables', () => {
  it('counts the tables it leaves alone as they are, never below zero', async () => {
    const { server, client, dev } = started as ProjectServer;
    const [seeded] = await server.sql<{ other: number; hand: number }>(
      `SELECT count(*) FILTER (WHERE project IS NOT NULL AND project NOT LIKE 'team@%')::int AS other,
              count(*) FILTER (WHERE project IS NULL)::int AS hand
         FROM gds.tables t JOIN gds.connectors c ON c.id = $1
        WHERE t.active AND t.workspace_id = c.workspace_id AND t.environment_label = c.environment_label
          AND t.mode = 'MODE_A'`,
      [dev],
    );
    // Right after this plan's first read of its own tables, the other run applies the whole project.
    let raced = false;
    const racing: ApiClient = {
      ...client,
      tables: {
        ...client.tables,
        heldMatching: async (...args: Parameters<ApiClient['tables']['heldMatching']>) => {
          const read = await client.tables.heldMatching(...args);
          if (!raced && args[1].projectPrefix !== undefined) {
            raced = true;
            const other = await planProject(client, dbtProjectOf('team', models), { connectorId: dev });
            expect((await applyPlan(client, other, { describe: describeError })).failed).toEqual([]);
          }
          return read;
        },
      },
    };
    const plan = await planProject(racing, dbtProjectOf('team', models), { connectorId: dev });
    expect(raced).toBe(true);
    expect(plan.untouched).toEqual({ otherProjects: seeded?.other, byHand: seeded?.hand });
  });
});
