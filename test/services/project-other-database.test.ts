// A model dbt builds into another database (its `database` config; balboa's snapshot has target_database:
// raw) while the connector reads the project's: a table of the service is `schema.table` on a connector that
// reads one database, so the model cannot be governed where it is. gds plan refuses it, saying why, and apply
// registers nothing for it; before, plan declared `sd_db.archive_orders` as if it were in the project's
// database, and apply registered the object of that name there, which dbt never built.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { columns, manifest, model } from '../core/dbt/helpers.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

const cols = { schema: 'sd_db', columns: columns({ id: 'integer', label: 'text' }) };

describe('a model built into another database than the connector reads', () => {
  let started: ProjectServer;
  let dir: string;

  beforeAll(async () => {
    started = await startProjectServer({});
    const { server } = started;
    await server.sql('CREATE SCHEMA sd_db');
    // A namesake of the archive model in the connector's database: not what dbt built.
    for (const name of ['od_orders', 'od_customers', 'archive_orders'])
      await server.sql(`CREATE TABLE sd_db.${name} (id integer, label text)`);
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ($2, $1, 'warehouse-sd-db', 'postgres', 'ACTIVE', 'staging', 'sd_db', now())`,
      [server.ready.workspaceId, 'con_sd_db'],
    );
    dir = await mkdtemp(join(tmpdir(), 'gds-other-database-'));
    await writeFile(
      join(dir, 'manifest.json'),
      JSON.stringify(
        manifest(
          model('od_orders', cols),
          model('od_customers', cols),
          model('archive_orders', { ...cols, database: 'archive' }),
        ),
      ),
    );
  });

  afterAll(async () => {
    await started?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('plan refuses it with the reason; apply registers the others only', async () => {
    const { client } = started;
    const plan = await planProject(client, await loadDbtProject(dir, {}), { connectorId: 'con_sd_db' });
    expect(plan.tables.map((t) => [t.table, t.action])).toEqual([
      ['od_orders', 'create'],
      ['od_customers', 'create'],
      ['archive_orders', 'refused'],
    ]);
    expect(plan.tables.find((t) => t.table === 'archive_orders')?.reason).toMatch(
      /^the model is built into database archive \(its database config\), not dev .*sd_db\.archive_orders.*--exclude archive_orders$/,
    );
    expect(plan.counts.refused).toBe(1);
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    expect(await client.tables.list({ name: 'archive_orders' })).toEqual([]);
    expect((await client.tables.list({ name: 'od_orders' })).map((t) => t.source)).toEqual([
      'sd_db.od_orders',
    ]);
  });
});
