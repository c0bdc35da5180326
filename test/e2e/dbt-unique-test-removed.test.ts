// A model's `unique` test removed from a dbt project gds applied: dbt no longer checks that column's values
// are distinct, so the grain key gds declared from that test leaves the table's contract (Gate 1's grain
// uniqueness then checks nothing, as dbt does). `plan --json` says the contract changes, `apply` clears the
// grain, and the next plan is empty. Run in the test process against the reference server (PGlite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines, linesWhere } from './generated-project.js';

let shop: GeneratedProject;

/** The grain the service holds for `name`: the contract's, and the table's copy Gate 1 reads. */
async function grainOf(name: string) {
  const [row] = await shop.server.sql<{ grain_type: string | null; contract: unknown; table: unknown }>(
    `SELECT c.grain_type, c.grain_key_columns AS contract, t.grain_key_columns AS table
       FROM gds.tables t JOIN gds.contracts c ON c.table_id = t.id
      WHERE t.workspace_id = $1 AND t.name = $2 AND t.active`,
    [shop.server.ready.workspaceId, name],
  );
  return row;
}

beforeAll(async () => {
  shop = await generatedProject('unique-removed');
});

afterAll(async () => {
  await shop?.close();
});

describe('a unique test removed from a model gds applied', { timeout: 300_000 }, () => {
  it('plan shows the grain key leaving the contract, apply clears it, and the next plan is empty', async () => {
    const { gds, onDev } = shop;
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    expect(await grainOf('stg_entity_1')).toEqual({
      grain_type: 'ONE_PER_ENTITY',
      contract: ['stg_entity_1_id'],
      table: ['stg_entity_1_id'],
    });

    // The team deletes `- unique` under stg_entity_1's key column in its properties file.
    await shop.editManifest((manifest) => {
      const id = Object.keys(manifest.nodes).find((key) =>
        key.startsWith('test.shop.unique_stg_entity_1_stg_entity_1_id.'),
      );
      if (id === undefined) throw new Error('no unique test on stg_entity_1 in the generated manifest');
      delete manifest.nodes[id];
    });

    const plan = await gds(['plan', ...onDev(), '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const planned = jsonLines(plan.stdout);
    expect(linesWhere(planned, ['action', 'replace'], 'table', 'changes')).toEqual([
      ['stg_entity_1', { definition: false, gate1: false, contract: true }],
    ]);
    expect(planned.at(-1)).toMatchObject({ summary: { create: 0, replace: 1, remove: 0 } });
    const human = await gds(['plan', ...onDev()]);
    expect(human.stdout).toContain('-grainKeyColumns: ["stg_entity_1_id"]');
    expect(human.stdout).toContain('+grainKeyColumns: []');

    const applied = await gds(['apply', ...onDev(), '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toMatch(/stg_entity_1 \(tbl_\w+\): contract done/);
    expect(await grainOf('stg_entity_1')).toEqual({ grain_type: null, contract: [], table: [] });
    // The other models keep theirs.
    expect((await grainOf('stg_entity_0'))?.contract).toEqual(['stg_entity_0_id']);

    const again = await gds(['plan', ...onDev(), '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout).at(-1)).toMatchObject({ summary: { create: 0, replace: 0, remove: 0 } });
  });
});
