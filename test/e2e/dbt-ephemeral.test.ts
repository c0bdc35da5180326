// An ephemeral model (materialized: ephemeral; real projects have them: sfa 4 of 99, balboa 1 of 27) in
// `gds plan` / `gds apply`, run in the test process against the reference server: dbt builds no relation for
// it (it inlines it into the models that read it), so gds governs nothing of it. The plan lists it as
// `# skipped` with the reason (a --json line with action "skipped"), never refused: plan and apply exit 0,
// and `apply --prune` removes the tables of deleted models. The table an earlier apply registered for a model
// that became ephemeral is gone like a deleted model's, and pruned with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines, linesWhere } from './generated-project.js';

let shop: GeneratedProject;

/** The project's active tables on the service, by name. */
async function active(): Promise<string[]> {
  const rows = await shop.server.sql<{ name: string }>(
    `SELECT name FROM gds.tables WHERE workspace_id = $1 AND active AND project IS NOT NULL ORDER BY name`,
    [shop.server.ready.workspaceId],
  );
  return rows.map((r) => r.name);
}

beforeAll(async () => {
  shop = await generatedProject('ephemeral');
});

afterAll(async () => {
  await shop?.close();
});

describe('an ephemeral model in gds plan / gds apply', { timeout: 300_000 }, () => {
  it('is skipped with its reason, not refused: plan and apply exit 0, and --prune removes the gone tables', async () => {
    const { gds, onDev } = shop;
    const first = await gds(['apply', ...onDev(), '--yes', '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(await active()).toContain('stg_entity_1');

    // The team makes stg_entity_1 ephemeral and deletes fct_entity_5 (and its tests).
    await shop.editManifest((manifest) => {
      const stg = manifest.nodes['model.shop.stg_entity_1'];
      if (stg?.config === undefined) throw new Error('no stg_entity_1 in the generated manifest');
      stg.config['materialized'] = 'ephemeral';
      for (const [id, node] of Object.entries(manifest.nodes))
        if (id === 'model.shop.fct_entity_5' || node.depends_on?.nodes?.includes('model.shop.fct_entity_5'))
          delete manifest.nodes[id];
    });

    const plan = await gds(['plan', ...onDev()]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('# skipped stg_entity_1');
    expect(plan.stdout).toContain(
      'an ephemeral model builds no relation in the warehouse (dbt inlines it into the models that use it): there is no table to govern',
    );
    expect(plan.stdout).not.toContain('refused');
    // The table registered for stg_entity_1 before it became ephemeral is gone, as fct_entity_5's is.
    expect(plan.stdout).toContain('- gone stg_entity_1');
    expect(plan.stdout).toContain('- gone fct_entity_5');
    // int_entity_3's relationships test to stg_entity_1 has no table to check any more: not mapped, and the
    // reference leaves its definition (a reference kept would fail every gate run).
    expect(plan.stdout).toContain('~ replace int_entity_3');
    expect(plan.stdout).toContain('-    references: analytics_dev.stg_entity_1.stg_entity_1_id');
    expect(plan.stdout).toMatch(
      /not mapped: test\.shop\.relationships_int_entity_3_parent_id\.\w+: its to: ref\('stg_entity_1'\) is stg_entity_1, an ephemeral model/,
    );
    expect(plan.stdout).toContain('Plan: 0 to create, 1 to change, 6 unchanged, 2 to remove. 1 skipped.');

    const json = await gds(['plan', ...onDev(), '--json']);
    expect(json.code, json.stderr).toBe(0);
    const planned = jsonLines(json.stdout);
    const skipped = planned.filter((l) => l['action'] === 'skipped');
    expect(skipped).toEqual([
      expect.objectContaining({
        table: 'stg_entity_1',
        tableId: null,
        uniqueId: 'model.shop.stg_entity_1',
        reason: expect.stringContaining('an ephemeral model builds no relation') as unknown,
      }),
    ]);
    // Its dbt tests are listed, each with why it maps to no rule.
    expect((skipped[0]?.['notMappedTests'] as unknown[]).length).toBeGreaterThan(0);
    expect(linesWhere(planned, ['action', 'gone'], 'table')).toEqual([['fct_entity_5'], ['stg_entity_1']]);
    expect(planned.at(-1)).toEqual({
      summary: {
        create: 0,
        replace: 1,
        unchanged: 6,
        remove: 2,
        failed: 0,
        refused: 0,
        skipped: 1,
        submit: 0,
        recertificationRequested: 0,
      },
    });

    const applied = await gds(['apply', ...onDev(), '--prune', '--yes', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).not.toContain('Not pruned');
    const actions = jsonLines(applied.stdout);
    expect(linesWhere(actions, ['step', 'remove'], 'table', 'outcome')).toEqual([
      ['fct_entity_5', 'done'],
      ['stg_entity_1', 'done'],
    ]);
    expect(actions.at(-1)).toMatchObject({ summary: { remove: 2, refused: 0, skipped: 1 } });
    const left = await active();
    expect(left).not.toContain('stg_entity_1');
    expect(left).not.toContain('fct_entity_5');
    expect(left).toHaveLength(7);

    // Converged: nothing to do, both exit 0, and the ephemeral model is still said to be skipped.
    const again = await gds(['plan', ...onDev(), '--detailed-exitcode']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('# skipped stg_entity_1');
    expect(again.stdout).toContain('Plan: 0 to create, 0 to change, 7 unchanged, 0 to remove. 1 skipped.');
    const noop = await gds(['apply', ...onDev(), '--prune', '--yes']);
    expect(noop.code, noop.stderr).toBe(0);
    expect(noop.stderr).toContain('Nothing to apply.');
  });
});
