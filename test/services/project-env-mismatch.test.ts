// `gds plan` / `gds apply --env production` with a connector of dev (gds.yml's top-level connector:, which
// environments: does not override, or --connector): run in the test process against the reference server. The
// plan was made, and apply wrote, in dev, the connector's environment, whatever --env said; now both are exit 2
// naming the mismatch, and nothing is registered anywhere.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { columns, manifest, model } from '../core/dbt/helpers.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { runInProcess } from '../helpers/run-in-process.js';

describe('--env with a connector of another environment', () => {
  let started: ProjectServer;
  let dir: string;
  const gds = (args: string[]) =>
    runInProcess(args, {
      env: serverEnv(started.server.url, started.server.user('ADMIN').cliToken, join(dir, 'config')),
      cwd: dir,
    });
  const registered = () =>
    started.server.sql(`SELECT id FROM gds.tables WHERE active AND name = 'em_orders'`);

  beforeAll(async () => {
    started = await startProjectServer({ relations: { em_orders: 'id integer, label text' } });
    dir = await mkdtemp(join(tmpdir(), 'gds-env-mismatch-'));
    const orders = model('em_orders', {
      schema: 'analytics_dev',
      columns: columns({ id: 'integer', label: 'text' }),
    });
    await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest(orders)));
    await writeFile(join(dir, 'gds.yml'), 'connector: warehouse-dev\n');
  });

  afterAll(async () => {
    await started?.close();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('gds.yml’s connector: plan and apply --env production are exit 2, nothing registered in dev', async () => {
    const plan = await gds(['plan', '--dbt', dir, '--env', 'production']);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stdout).toBe('');
    expect(plan.stderr).toContain(
      `--env production, but connector warehouse-dev (${started.dev}) is in dev.`,
    );
    const apply = await gds(['apply', '--dbt', dir, '--env', 'production', '--yes', '--json']);
    expect(apply.code, apply.stderr).toBe(2);
    expect(apply.stderr).toContain('connector_environment_mismatch');
    expect(await registered()).toEqual([]);
  });

  it('--connector of dev with --env staging is exit 2 too; without --env it plans in dev', async () => {
    const plan = await gds(['plan', '--dbt', dir, '--connector', 'warehouse-dev', '--env', 'staging']);
    expect(plan.code, plan.stderr).toBe(2);
    expect(plan.stderr).toContain('--env staging, but connector warehouse-dev');
    const dev = await gds(['plan', '--dbt', dir, '--json']);
    expect(dev.code, dev.stderr).toBe(0);
    expect(dev.stdout).toContain('"action":"create"');
  });
});
