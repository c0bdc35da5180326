// Every real manifest of ../shared/fixtures (dbt 0.19 to 1.12 and Fusion, seven adapters): every enabled
// model, seed and snapshot is declared or refused with a reason, every test attached to one is accounted
// for, each artifact parses back to exactly its columns, and each gate1.yml passes gate validate against them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { validateGate1 } from '../../../src/core/gate1/index.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const folders = ['real/dbt/', 'dbt/'];
const manifests = noSharedFixtures
  ? []
  : [
      ...folders.flatMap((folder) =>
        readdirSync(sharedFixturesDir + folder)
          .filter((f) => f.endsWith('manifest.json'))
          .map((f) => ({
            name: f,
            path: sharedFixturesDir + folder + f,
            catalog: undefined as string | undefined,
          })),
      ),
      {
        name: 'manoty_jaffle_duckdb (project, with catalog)',
        path: `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb/target/manifest.json`,
        catalog: `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb/target/catalog.json`,
      },
      {
        name: 'dap_v12_1.12.0 with the dap v1 catalog',
        path: `${sharedFixturesDir}real/dbt/dap_v12_1.12.0.manifest.json`,
        catalog: `${sharedFixturesDir}real/dbt/dap_catalog_v1.catalog.json`,
      },
    ];

describe('declareDbtProject on every real manifest', needs(noSharedFixtures), () => {
  let dbtReader: DbtReader;
  beforeAll(async () => {
    dbtReader = await prepareDbtReader();
  });

  it('finds the fixtures', () => {
    expect(manifests.length).toBeGreaterThanOrEqual(25);
  });

  it.each(manifests)('$name', async ({ path, catalog }) => {
    const manifestJson = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    const catalogJson =
      catalog && existsSync(catalog) ? (JSON.parse(readFileSync(catalog, 'utf8')) as unknown) : undefined;
    const project = declareDbtProject(
      { manifest: manifestJson, ...(catalogJson === undefined ? {} : { catalog: catalogJson }) },
      {},
      dbtReader,
    );
    const manifest = readManifest(manifestJson);
    const expected = [...manifest.nodes.values()]
      .filter((n) => ['model', 'seed', 'snapshot'].includes(n.resourceType) && n.enabled)
      .map((n) => n.uniqueId)
      .sort();
    const declaredIds = new Set(expected);
    const skipped = project.skipped ?? [];
    const accounted = [
      ...project.declarations.map((d) => d.uniqueId),
      ...project.refusals.map((r) => r.uniqueId),
      ...skipped.map((r) => r.uniqueId),
    ];
    expect(accounted.sort()).toEqual(expected);
    for (const refusal of project.refusals) expect(refusal.reason.length).toBeGreaterThan(20);
    // Skipped: the ephemeral models, and only they (dbt builds no relation for them).
    expect(skipped.map((r) => r.uniqueId).sort()).toEqual(
      [...manifest.nodes.values()]
        .filter((n) => declaredIds.has(n.uniqueId) && n.materialized === 'ephemeral')
        .map((n) => n.uniqueId)
        .sort(),
    );

    // Every test attached to a declared node appears exactly once: mapped, not mapped, or refused or
    // skipped with it.
    const seen = new Map<string, number>();
    const count = (id: string) => seen.set(id, (seen.get(id) ?? 0) + 1);
    for (const d of project.declarations) {
      for (const id of new Set(d.mappedTests.map((t) => t.test))) count(id);
      for (const t of d.notMappedTests) {
        expect(t.reason).not.toBe('');
        count(t.test);
      }
    }
    for (const r of [...project.refusals, ...skipped]) for (const t of r.notMappedTests) count(t.test);
    for (const t of project.otherTests) count(t.test);
    for (const [id, n] of seen) expect(n, id).toBe(1);
    for (const node of manifest.nodes.values()) {
      if (node.resourceType !== 'test') continue;
      const attached = node.test?.attachedNode ?? node.dependsOn.find((p) => declaredIds.has(p));
      if (
        attached !== undefined &&
        declaredIds.has(attached) &&
        node.dependsOn.filter((p) => declaredIds.has(p)).length <= 1
      )
        expect(seen.has(node.uniqueId), `${node.uniqueId} is accounted for`).toBe(true);
    }

    for (const declaration of project.declarations) {
      const parsed = await parseArtifact({
        fileName: declaration.artifact.fileName,
        content: declaration.artifact.content,
        kind: 'json',
      });
      expect(parsed.ok, declaration.uniqueId).toBe(true);
      if (!parsed.ok) continue;
      expect(parsed.artifact.columns).toEqual(declaration.columns);
      expect(parsed.artifact.table).toBe(declaration.name);
      expect(parsed.artifact.source).toEqual(declaration.source);
      expect(declaration.name).not.toMatch(/__dbt_(tmp|backup)/);
      if (declaration.gate1Yaml !== undefined) {
        const result = validateGate1(declaration.gate1Yaml, {
          fileName: `${declaration.name}.gate1.yml`,
          columns: declaration.columns.map((c) => c.name),
        });
        expect(
          result.diagnostics.filter((d) => d.severity === 'error'),
          `${declaration.uniqueId}\n${declaration.gate1Yaml}`,
        ).toEqual([]);
      }
      if (declaration.contract?.grainKeyColumns) {
        const names = declaration.columns.map((c) => c.name);
        for (const key of declaration.contract.grainKeyColumns) expect(names).toContain(key);
        expect(declaration.contract.grainType).toBeTruthy();
      }
    }
  });

  it('reads the catalog first: the jaffle project declares its catalog columns and types', () => {
    const dir = `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb/target/`;
    const project = declareDbtProject(
      {
        manifest: JSON.parse(readFileSync(`${dir}manifest.json`, 'utf8')) as unknown,
        catalog: JSON.parse(readFileSync(`${dir}catalog.json`, 'utf8')) as unknown,
      },
      { select: ['customer_ltv'] },
      dbtReader,
    );
    expect(project.declarations).toHaveLength(1);
    const [ltv] = project.declarations;
    expect(ltv?.columnsFrom).toBe('catalog');
    expect(ltv?.columns).toEqual([
      { name: 'customer_id', type: 'INTEGER' },
      { name: 'lifetime_value', type: 'HUGEINT' },
    ]);
    expect(ltv?.source).toEqual({ schema: 'main', table: 'customer_ltv' });
  });
});
