// A table another team registered by hand over a model's relation, under another name (team_orders over
// analytics_dev.px_orders, the relation of model px_orders): the plan names it, and --adopt takes it over only
// by its own name. `--adopt px_orders` (the model's name, which the plan used to ask for) is exit 2 and leaves
// team_orders as it is, never renamed px_orders and recorded under the project.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { pushArtifact } from '../../src/services/artifacts.js';
import type { LocalArtifact } from '../../src/services/artifacts.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

describe('a table registered by hand under another name over a model’s relation', () => {
  let started: ProjectServer;
  let teamId: string;
  const held = () =>
    started.server.sql<{ id: string; name: string; project: string | null }>(
      `SELECT id, name, project FROM gds.tables WHERE active AND source = 'analytics_dev.px_orders'`,
    );

  beforeAll(async () => {
    started = await startProjectServer({ relations: { px_orders: 'id integer, label text' } });
    const columns = [
      { name: 'id', type: 'integer' },
      { name: 'label', type: 'text' },
    ];
    const content = JSON.stringify({ table: 'team_orders', source: 'analytics_dev.px_orders', columns });
    const artifact = { filename: 'team_orders.json', content, mimeType: 'json' } as LocalArtifact;
    await pushArtifact(started.client, artifact, { connectorId: started.dev });
    teamId = (await held())[0]?.id ?? '';
  });

  afterAll(() => started?.close());

  it('is named in the plan; --adopt of the model’s name takes nothing; its own name takes it over', async () => {
    const { client, dev } = started;
    const project = dbtProjectOf('shop', ['px_orders']);
    const plan = await planProject(client, project, { connectorId: dev });
    const [table] = plan.tables;
    expect([table?.table, table?.action, table?.tableId]).toEqual(['px_orders', 'owned-elsewhere', teamId]);
    expect(table?.reason).toContain(`table team_orders (${teamId}) over the model's relation`);
    expect(table?.reason).toContain(
      'pass --adopt team_orders to take it over (apply then renames it px_orders)',
    );

    const refused = await applyPlan(client, plan, { describe: describeError });
    expect(refused.failed.map((f) => [f.error.exitCode, f.error.suggestion])).toEqual([
      [6, 'Leave the model out (--exclude px_orders), or pass --adopt team_orders to take the table over.'],
    ]);

    await expect(
      planProject(client, project, { connectorId: dev, adopt: ['px_orders'] }),
    ).rejects.toMatchObject({ exitCode: 2, code: 'nothing_to_adopt' });
    expect(await held()).toEqual([{ id: teamId, name: 'team_orders', project: null }]);

    const adopting = await planProject(client, project, { connectorId: dev, adopt: ['team_orders'] });
    expect(adopting.tables.map((t) => [t.table, t.action, t.adopt])).toEqual([
      ['px_orders', 'replace', { from: null }],
    ]);
    expect((await applyPlan(client, adopting, { describe: describeError })).failed).toEqual([]);
    expect(await held()).toEqual([{ id: teamId, name: 'px_orders', project: adopting.project.id }]);
  });
});

// The name such a team chose may hold anything a shell reads otherwise (a space, a quote, `;`): the --adopt
// the plan and apply name is quoted, so that the flag as printed, pasted, is that name.
describe('a table registered by hand under a name a shell would split', () => {
  const name = "Team's orders; $(id)";
  let started: ProjectServer;

  beforeAll(async () => {
    started = await startProjectServer({ relations: { px_items: 'id integer' } });
    const columns = [{ name: 'id', type: 'integer' }];
    const content = JSON.stringify({ table: name, source: 'analytics_dev.px_items', columns });
    const artifact = { filename: 'team_items.json', content, mimeType: 'json' } as LocalArtifact;
    await pushArtifact(started.client, artifact, { connectorId: started.dev });
  });

  afterAll(() => started?.close());

  /** What bash reads from `--adopt <word>` in `text`, the word as printed. */
  const adoptWords = (text: string | undefined) => {
    const word = /--adopt ('(?:[^']|'\\'')*'|\S+)/.exec(text ?? '')?.[1] ?? '';
    const out = execFileSync('bash', ['-c', `printf '%s\\0' ${word}`], {
      encoding: 'utf8',
      cwd: mkdtempSync(join(tmpdir(), 'gds-adopt-')),
    });
    return out.split('\0').slice(0, -1);
  };

  it('names it in --adopt quoted, in the plan and in what apply refuses', async () => {
    const { client, dev } = started;
    const plan = await planProject(client, dbtProjectOf('shop', ['px_items']), { connectorId: dev });
    expect(plan.tables.map((t) => t.action)).toEqual(['owned-elsewhere']);
    expect(adoptWords(plan.tables[0]?.reason)).toEqual([name]);
    const refused = await applyPlan(client, plan, { describe: describeError });
    expect(refused.failed.map((f) => adoptWords(f.error.suggestion))).toEqual([[name]]);
  });
});
