// A model disabled (`enabled: false`) in a project planned with --env over two connectors, the last one in its
// schema: dbt 1.0+ writes it under the manifest's `disabled`, never in `nodes`. Its table is still this
// project's, read from the file as `gds plan --dbt` reads it: `- gone` (removed by --prune), the project's id
// unchanged, never left as another same-named project's with a warning to give this project another id.
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

const orders = model('sd_orders', { schema: 'sd_main', columns: columns({ id: 'integer', label: 'text' }) });
const legacy = model('legacy_orders', {
  schema: 'sd_legacy',
  columns: columns({ id: 'integer', label: 'text' }),
});

describe('a model disabled, the last of its schema (dbt 1.0+ manifest)', () => {
  let started: ProjectServer;
  let dir: string;
  const env = { env: 'staging' };
  const write = (written: Record<string, unknown>) =>
    writeFile(join(dir, 'manifest.json'), JSON.stringify(written));

  beforeAll(async () => {
    started = await startProjectServer({});
    const { server } = started;
    for (const [schema, name] of [
      ['sd_main', 'sd_orders'],
      ['sd_legacy', 'legacy_orders'],
    ] as const) {
      await server.sql(`CREATE SCHEMA ${schema}`);
      await server.sql(`CREATE TABLE ${schema}.${name} (id integer, label text)`);
      await server.sql(
        `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
         VALUES ($2, $1, $3, 'postgres', 'ACTIVE', 'staging', $4, now())`,
        [server.ready.workspaceId, `con_${schema}`, `warehouse-${schema}`, schema],
      );
    }
    dir = await mkdtemp(join(tmpdir(), 'gds-disabled-model-'));
  });

  afterAll(async () => {
    await started?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('read from the file: the schema of a disabled node of either shape (dbt 1.0+ or a list before)', async () => {
    const disabled = { ...legacy, config: { enabled: false, materialized: 'view' } };
    await write({ ...manifest(orders), disabled: { [String(legacy['unique_id'])]: [disabled] } });
    expect((await loadDbtProject(dir, {})).nodeSchemas).toEqual(['sd_main', 'sd_legacy']);
    await write({ ...manifest(orders), disabled: [disabled] });
    expect((await loadDbtProject(dir, {})).nodeSchemas).toEqual(['sd_main', 'sd_legacy']);
  });

  it('its table is gone and --prune removes it; the id stays; no namesake warning', async () => {
    const { client } = started;
    await write(manifest(orders, legacy));
    const first = await planProject(client, await loadDbtProject(dir, {}), env);
    expect(first.project.id).toBe('shop@con_sd_legacy+con_sd_main');
    expect((await applyPlan(client, first, { describe: describeError })).failed).toEqual([]);
    const [held] = await client.tables.list({ name: 'legacy_orders' });
    expect(held?.project).toBe('shop@con_sd_legacy+con_sd_main');

    const disabled = { ...legacy, config: { enabled: false, materialized: 'view' } };
    await write({ ...manifest(orders), disabled: { [String(legacy['unique_id'])]: [disabled] } });
    const plan = await planProject(client, await loadDbtProject(dir, {}), env);
    expect(plan.project.id).toBe('shop@con_sd_legacy+con_sd_main');
    expect(plan.tables.map((t) => [t.table, t.action])).toEqual([
      ['sd_orders', 'unchanged'],
      ['legacy_orders', 'gone'],
    ]);
    expect(plan.warnings.join('\n')).not.toMatch(/legacy_orders/);
    const pruned = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(pruned.failed).toEqual([]);
    expect(pruned.actions.filter((a) => a.step === 'remove').map((a) => a.table)).toEqual(['legacy_orders']);
    expect(await client.tables.list({ name: 'legacy_orders' })).toEqual([]);
    expect((await client.tables.list({ name: 'sd_orders' }))[0]?.project).toBe(
      'shop@con_sd_legacy+con_sd_main',
    );
  });
});
