// A project planned with --env and no --connector derives its id from the connectors whose schemas its models
// are built into: those of the whole project, not of the selection, so a --select over one schema keeps the id
// (and re-records no owner); and a table left on a connector the project's models all left is named in the
// plan's warning, left alone until --adopt takes it over, never silently another project's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import type { DbtDeclaration, DbtProject } from '../../src/core/dbt/types.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtDeclaration } from '../helpers/dbt-declaration.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

function model(schema: string, name: string): DbtDeclaration {
  const d = dbtDeclaration(name, 'multi');
  const content = JSON.stringify({ table: name, source: `${schema}.${name}`, columns: d.columns });
  return { ...d, source: { schema, table: name }, artifact: { ...d.artifact, content } };
}

const projectOf = (
  declarations: DbtDeclaration[],
  nodeNames: string[],
  nodeSchemas: string[],
): DbtProject => ({
  projectName: 'multi',
  declarations,
  refusals: [],
  otherTests: [],
  warnings: [],
  nodeNames,
  nodeSchemas,
});

describe('a project over two connectors of one environment (--env, no --connector)', () => {
  let started: ProjectServer;
  const env = { env: 'staging' };
  const ids: Record<string, string> = {};
  const owners = async () =>
    started.server.sql<{ name: string; project: string }>(
      `SELECT name, project FROM gds.tables WHERE active AND name LIKE 'm\\_%' ORDER BY name`,
    );

  beforeAll(async () => {
    started = await startProjectServer({});
    const { server, client } = started;
    for (const [schema, names] of [
      ['sx_a', ['m_a1', 'm_a2']],
      ['sx_b', ['m_b']],
    ] as const) {
      await server.sql(`CREATE SCHEMA ${schema}`);
      for (const name of names) await server.sql(`CREATE TABLE ${schema}.${name} (id integer, label text)`);
      await server.sql(
        `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
         VALUES ($2, $1, $3, 'postgres', 'ACTIVE', 'staging', $4, now())`,
        [server.ready.workspaceId, `con_x${schema.slice(-1)}`, `warehouse-x${schema.slice(-1)}`, schema],
      );
    }
    const full = projectOf(
      [model('sx_a', 'm_a1'), model('sx_a', 'm_a2'), model('sx_b', 'm_b')],
      ['m_a1', 'm_a2', 'm_b'],
      ['sx_a', 'sx_b'],
    );
    const plan = await planProject(client, full, env);
    expect(plan.project.id).toBe('multi@con_xa+con_xb');
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    for (const name of ['m_a1', 'm_a2', 'm_b']) ids[name] = (await client.tables.list({ name }))[0]?.id ?? '';
  });

  afterAll(() => started?.close());

  it('--select of the models of one schema keeps the id a full run derives; apply re-records no owner', async () => {
    const { client } = started;
    const selected = projectOf([model('sx_a', 'm_a1')], ['m_a1', 'm_a2', 'm_b'], ['sx_a', 'sx_b']);
    const plan = await planProject(client, selected, env);
    expect(plan.project.id).toBe('multi@con_xa+con_xb');
    expect(plan.tables.map((t) => [t.table, t.action, t.migrate])).toEqual([
      ['m_a1', 'unchanged', undefined],
    ]);
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.actions.filter((a) => a.step === 'migrate' || a.step === 'remove')).toEqual([]);
    expect(await owners()).toEqual([
      { name: 'm_a1', project: 'multi@con_xa+con_xb' },
      { name: 'm_a2', project: 'multi@con_xa+con_xb' },
      { name: 'm_b', project: 'multi@con_xa+con_xb' },
    ]);
  });

  it('the last model of sx_b deleted: its table is named with the --adopt that takes it over, then removed by it', async () => {
    const { client } = started;
    const left = projectOf([model('sx_a', 'm_a1'), model('sx_a', 'm_a2')], ['m_a1', 'm_a2'], ['sx_a']);
    const plan = await planProject(client, left, env);
    expect(plan.project.id).toBe('multi@con_xa');
    expect(plan.warnings.join('\n')).toMatch(
      /m_b \(staging\) is recorded under multi@con_xa\+con_xb.*--adopt m_b --prune/s,
    );
    const applied = await applyPlan(client, plan, { describe: describeError, prune: true });
    expect(applied.actions.filter((a) => a.step === 'remove')).toEqual([]);
    expect((await client.tables.status(ids['m_b'] ?? '')).name).toBe('m_b');

    const adopting = await planProject(client, left, { ...env, adopt: ['m_b'] });
    expect(adopting.tables.find((t) => t.table === 'm_b')?.action).toBe('gone');
    const pruned = await applyPlan(client, adopting, { describe: describeError, prune: true });
    expect(pruned.failed).toEqual([]);
    expect(pruned.actions.filter((a) => a.step === 'remove').map((a) => a.table)).toEqual(['m_b']);
    await expect(client.tables.status(ids['m_b'] ?? '')).rejects.toThrow();
  });
});
