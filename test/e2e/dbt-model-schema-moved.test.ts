// A model moved to another schema by its schema config (the project's other models stay where the connector
// reads), in `gds plan` / `gds apply` run in the test process against the reference server (PGlite). With the
// one connector, the model is `! refused` saying why and what to pass: never `--schema <the connector's>`,
// which would register the relation dbt built there before and builds no more. With --env and a connector
// that reads the new schema, the plan replaces the table's definition there, apply writes it, and the next
// plan is empty.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines, linesWhere, SCHEMA } from './generated-project.js';

let shop: GeneratedProject;

/** The source and connector the service holds for fct_entity_5. */
async function held() {
  const [row] = await shop.server.sql<{ source: string; connector_id: string }>(
    `SELECT source, connector_id FROM gds.tables WHERE workspace_id = $1 AND name = 'fct_entity_5' AND active`,
    [shop.server.ready.workspaceId],
  );
  return row;
}

beforeAll(async () => {
  shop = await generatedProject('schema-moved');
});

afterAll(async () => {
  await shop?.close();
});

describe('a model moved to another schema by its config', { timeout: 300_000 }, () => {
  it('is refused on a connector that does not read it, without a --schema hint; --env moves it', async () => {
    const { gds, onDev, server, project } = shop;
    const first = await gds(['apply', ...onDev(), '--yes']);
    expect(first.code, first.stderr).toBe(0);
    const before = await held();
    expect(before?.source).toBe(`${SCHEMA}.fct_entity_5`);

    // `schema: other` in fct_entity_5's config; dbt builds it in analytics_other (the old relation stays).
    await server.sql('CREATE SCHEMA analytics_other');
    await server.sql(`CREATE TABLE analytics_other.fct_entity_5 AS SELECT * FROM ${SCHEMA}.fct_entity_5`);
    await shop.editManifest((manifest) => {
      const node = manifest.nodes['model.shop.fct_entity_5'] as Record<string, unknown> & {
        config: Record<string, unknown>;
      };
      node['schema'] = 'analytics_other';
      node.config['schema'] = 'other';
      node['relation_name'] = '"dev"."analytics_other"."fct_entity_5"';
    });
    const catalogPath = join(project, 'target/catalog.json');
    const catalog = JSON.parse(await readFile(catalogPath, 'utf8')) as {
      nodes: Record<string, { metadata: { schema: string } }>;
    };
    const entry = catalog.nodes['model.shop.fct_entity_5'];
    if (entry === undefined) throw new Error('no fct_entity_5 in the generated catalog');
    entry.metadata.schema = 'analytics_other';
    await writeFile(catalogPath, JSON.stringify(catalog));

    const plan = await gds(['plan', ...onDev(), '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    const [refused] = jsonLines(plan.stdout).filter((line) => line['action'] === 'refused');
    expect(refused?.['table']).toBe('fct_entity_5');
    const reason = String(refused?.['reason']);
    expect(reason).toContain('the model is built into schema analytics_other (its schema config)');
    expect(reason).toContain('pass --connector naming a connector that reads analytics_other');
    expect(reason).not.toContain('--schema');
    const refusedApply = await gds(['apply', ...onDev(), '--yes']);
    expect(refusedApply.code).toBe(7);
    expect(await held()).toEqual(before);

    // A connector of dev reading analytics_other: with --env, the table moves to it.
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ('con_e2e_other', $1, 'other', 'postgres', 'ACTIVE', 'dev', 'analytics_other', now())`,
      [server.ready.workspaceId],
    );
    const onEnv = ['--dbt', project, '--env', 'dev'];
    const moved = await gds(['plan', ...onEnv, '--json']);
    expect(moved.code, moved.stderr).toBe(0);
    expect(linesWhere(jsonLines(moved.stdout), ['action', 'replace'], 'table', 'source')).toEqual([
      ['fct_entity_5', 'analytics_other.fct_entity_5'],
    ]);
    const applied = await gds(['apply', ...onEnv, '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await held()).toEqual({ source: 'analytics_other.fct_entity_5', connector_id: 'con_e2e_other' });
    const again = await gds(['plan', ...onEnv, '--json']);
    expect(jsonLines(again.stdout).at(-1)).toMatchObject({ summary: { create: 0, replace: 0, remove: 0 } });
  });
});
