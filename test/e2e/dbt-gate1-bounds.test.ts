// A dbt model whose tests make a gate1.yml over the service's bound (262,144 characters: 90 accepted_values
// tests of 270 values each) is refused by `gds plan` as `gds gate validate` refuses such a file (the one bound
// of src/core/artifact-bounds.ts), and `apply` writes the other models. It used to be planned `+ create`, and
// apply's batch was refused whole by the service (every table failed). Run in the test process against the
// reference server (PGlite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines } from './generated-project.js';

let shop: GeneratedProject;

beforeAll(async () => {
  shop = await generatedProject('gate1-bounds');
  await shop.editManifest((manifest) => {
    const nodes = manifest.nodes as Record<string, Record<string, unknown>>;
    const key = Object.keys(nodes).find((k) =>
      k.startsWith('test.shop.accepted_values_stg_entity_1_status.'),
    );
    const base = nodes[key ?? ''] as { test_metadata: { kwargs: Record<string, unknown> } };
    for (let i = 0; i < 90; i++) {
      const name = `accepted_values_stg_entity_1_status_${i}`;
      const id = `test.shop.${name}.${String(i).padStart(10, '0')}`;
      const values = Array.from({ length: 270 }, (_, j) => `v${i}_${String(j).padStart(6, '0')}`);
      nodes[id] = {
        ...base,
        unique_id: id,
        name,
        alias: name,
        test_metadata: { ...base.test_metadata, kwargs: { ...base.test_metadata.kwargs, values } },
      };
    }
  });
});

afterAll(async () => {
  await shop?.close();
});

describe('a model whose gate1.yml is over the service’s bound', { timeout: 300_000 }, () => {
  it('plan refuses that model naming the limit; apply writes the others and nothing of it', async () => {
    const { gds, onDev } = shop;
    const plan = await gds(['plan', ...onDev(), '--json']);
    const lines = jsonLines(plan.stdout);
    const line = lines.find((l) => l['table'] === 'stg_entity_1');
    expect(line?.['action']).toBe('refused');
    expect(String(line?.['reason'])).toMatch(
      /^stg_entity_1\/gate1\.yml: The gate1\.yml is 353,570 characters long, over the limit of 262,144 characters\.$/,
    );
    expect(lines.at(-1)).toMatchObject({ summary: { create: 8, refused: 1 } });

    // It used to be planned `+ create`, and apply's batch was refused whole: 9 tables failed, none applied.
    const applied = await gds(['apply', ...onDev(), '--yes']);
    expect(applied.stderr).not.toContain('ArtifactBatchRequest');
    const held = await shop.server.sql<{ name: string }>(
      `SELECT name FROM gds.tables WHERE name LIKE '%entity%' OR name LIKE 'raw_source%' ORDER BY name`,
    );
    expect(held.map((r) => r.name)).toEqual([
      'fct_entity_4',
      'fct_entity_5',
      'int_entity_2',
      'int_entity_3',
      'raw_source_0',
      'raw_source_1',
      'raw_source_2',
      'stg_entity_0',
    ]);
  });
});
