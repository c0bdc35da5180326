// A team applies its dbt project in dev, then plans it on the staging connector (the id gds derives:
// shop@con_dev, then shop@con_staging): every model's name is held by its dev table (a table name is one per
// workspace), and each is refused naming `gds env promote` where the caller could promote that table. Whether
// it could (the service's mayReplace) is read in a few paged requests, never one per model: the requests of the
// plan do not grow with the project.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

const MODELS = Array.from({ length: 60 }, (_, i) => `pp_model_${i}`);
const COLUMNS = 'id integer, label text';

/** The requests among the client's debug lines. */
const requests = (log: string[]) => log.filter((line) => line.startsWith('→ '));

describe('a project applied in dev, planned on the staging connector', { timeout: 300_000 }, () => {
  let started: ProjectServer | undefined;
  let staging = '';
  const log: string[] = [];
  const devIds = new Map<string, string>();

  beforeAll(async () => {
    started = await startProjectServer({
      logger: (line) => log.push(line),
      relations: Object.fromEntries(MODELS.map((name) => [name, COLUMNS])),
    });
    const { server, client, dev } = started;
    for (const name of MODELS) await server.sql(`CREATE TABLE analytics_staging.${name} (${COLUMNS})`);
    staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const plan = await planProject(client, dbtProjectOf('shop', MODELS), { connectorId: dev });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    const held = await server.sql<{ id: string; name: string }>(
      `SELECT id, name FROM gds.tables WHERE active AND name LIKE 'pp_model_%'`,
    );
    for (const row of held) devIds.set(row.name, row.id);
    expect(devIds.size).toBe(MODELS.length);
  });

  afterAll(() => started?.close());

  it('refuses each model naming its promotion, in requests that do not grow with the models', async () => {
    const { client } = started as ProjectServer;
    log.length = 0;
    const plan = await planProject(client, dbtProjectOf('shop', MODELS), {
      connectorId: staging,
      schema: 'analytics_staging',
    });
    expect(plan.tables).toHaveLength(MODELS.length);
    for (const table of plan.tables) {
      expect(table.action).toBe('refused');
      expect(table.reason).toContain(`gds env promote ${devIds.get(table.table) ?? ''} --to staging`);
    }
    // Before: one GET /api/tables/{id}/definition per model, 60 more requests than these.
    expect(requests(log).filter((line) => line.includes('/definition'))).toEqual([]);
    expect(requests(log).length).toBeLessThanOrEqual(12);
  });
});
