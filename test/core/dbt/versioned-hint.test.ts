// The --exclude hint plan and apply give for a versioned model (dbt 1.5+ model versions) must be a selector
// that dbt of the manifest's version, and gds's own selection, read as that one version. dbt 1.5 selected a
// versioned model by `name.vN` only (dbt-core #7639); `name_vN` came with dbt 1.6 (dbt-core #7995), so a hint
// of `stg_country_populations_v2` on a dbt 1.5 project excluded nothing. The real manifest is balboa's, dbt
// 1.8.8 (the only real one with versioned models); as dbt 1.5.6 wrote it, the same nodes and fqns.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { nodeSelector } from '../../../src/core/dbt/node-selector.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const VERSIONED = [1, 2, 3].map((v) => `model.balboa.stg_country_populations.v${v}`);

describe('the --exclude hint of a versioned model (balboa, dbt 1.8.8)', needs(noSharedFixtures), () => {
  let dbtReader: DbtReader;
  let raw: { metadata: Record<string, unknown> } & Record<string, unknown>;
  beforeAll(async () => {
    dbtReader = await prepareDbtReader();
    raw = JSON.parse(
      readFileSync(`${sharedFixturesDir}real/dbt/balboa_snowflake_1.8.8.manifest.json`, 'utf8'),
    ) as typeof raw;
  });

  it.each(['1.8.8', '1.5.6', '1.5.0'])(
    'on dbt %s each version is named by a selector that excludes it alone, with no warning',
    (dbtVersion) => {
      const json = { ...raw, metadata: { ...raw.metadata, dbt_version: dbtVersion } };
      const project = declareDbtProject({ manifest: json }, {}, dbtReader);
      const manifest = readManifest(json);
      const all = selectNodes(manifest, {});
      for (const id of VERSIONED) {
        expect(all).toContain(id);
        const hint = project.selectorOf?.(id) ?? '';
        const warnings: string[] = [];
        expect(selectNodes(manifest, { exclude: [hint] }, (w) => warnings.push(w))).toEqual(
          all.filter((other) => other !== id),
        );
        expect(warnings).toEqual([]);
      }
    },
  );

  it("names the version with dbt's dot, which every dbt since 1.5 reads", () => {
    expect(nodeSelector('model.balboa.stg_country_populations.v2')).toBe('stg_country_populations.v2');
  });
});
