// Selections where gds read dbt's syntax otherwise than dbt-core does, on real manifests (jaffle_shop, written
// by dbt 1.12; jaffle_shop with the elementary package installed, by dbt 1.8.9): each case says what dbt's own
// parser (graph/cli.py, selector_spec.py) or method (selector_methods.py) makes of the text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readManifest, type Manifest } from '../../../src/core/dbt/manifest.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import type { DbtSelection } from '../../../src/core/dbt/types.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const real = (file: string): Manifest =>
  readManifest(JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/${file}`, 'utf8')) as unknown);

const pick = (selection: DbtSelection, file = 'dap_v12_1.12.0.manifest.json') => {
  const warnings: string[] = [];
  const nodes = selectNodes(real(file), selection, (w) => warnings.push(w)).map((id) => id.split('.').at(-1));
  return { nodes, warnings };
};

/** jaffle_shop with elementary 0.x installed (dbt_packages/elementary: its models under models/edr/). */
const WITH_PACKAGE = 'dap_v12_1.8.9.manifest.json';
const packaged = (selection: DbtSelection) => {
  const warnings: string[] = [];
  const ids = selectNodes(real(WITH_PACKAGE), selection, (w) => warnings.push(w));
  const packages = [...new Set(ids.map((id) => id.split('.')[1]))].sort();
  return { count: ids.length, packages, warnings };
};

describe('dbt selection syntax as dbt-core parses it', needs(noSharedFixtures), () => {
  it('an empty part beside a comma (`orders,`) is the name "", which no node has: the intersection selects nothing', () => {
    // dbt's parse_union splits `orders,` into the criteria `orders` and ``; the empty one is an fqn that no
    // node matches, so the intersection is empty and dbt warns that nothing matches it.
    for (const select of ['orders,', ',orders', 'orders,,tag:x']) {
      const { nodes, warnings } = pick({ select: [select] });
      expect([select, nodes]).toEqual([select, []]);
      expect(warnings).toEqual([
        expect.stringMatching(/matches no enabled model.*empty part beside its comma.*it selects nothing/),
      ]);
    }
    // Beside a member that selects, the union is that member's.
    expect(pick({ select: ['orders,', 'customers'] }).nodes).toEqual(['customers']);
  });

  it('an --exclude with an empty part beside a comma excludes nothing, as in dbt', () => {
    const { nodes, warnings } = pick({ select: ['orders', 'customers'], exclude: ['orders,'] });
    expect(nodes.sort()).toEqual(['customers', 'orders']);
    expect(warnings).toEqual([expect.stringMatching(/--exclude orders, .*empty part.*it excludes nothing/)]);
  });

  it("path: selects another package's nodes only by a path the root project's folder holds too, where dbt globs", () => {
    // dbt's PathSelectorMethod globs the value in the root project's folder and keeps a node whose file or a
    // folder above it is among the paths found there. The root project has models/, models/staging/ and
    // models/*.sql; only elementary has models/edr/.
    const edr = packaged({ select: ['path:models/edr'] });
    expect(edr.count).toBe(0);
    expect(edr.warnings).toEqual([
      // Why: only the package has files there; package: selects a package.
      expect.stringMatching(
        /--select path:models\/edr matches no enabled model.*only the package elementary has files at that path: package:elementary selects/,
      ),
    ]);
    expect(packaged({ select: ['models/edr'] }).count).toBe(0);
    // Where the root project has files at the path too, something else matched nothing: no such note.
    const intersected = packaged({ select: ['path:models,tag:no_such_tag'] });
    expect(intersected.count).toBe(0);
    expect(intersected.warnings).toEqual([expect.stringMatching(/matches no enabled model/)]);
    expect(intersected.warnings.join('\n')).not.toMatch(/only the package/);
    // A glob of the root project's own entries reaches none of elementary's models/edr/ files.
    expect(packaged({ select: ['path:models/*'] })).toEqual({
      count: 6,
      packages: ['jaffle_shop'],
      warnings: [],
    });
    expect(packaged({ select: ['path:models/**/*.sql'] }).packages).toEqual(['jaffle_shop']);
    // A folder the root project has too reaches the package's nodes under it, as in dbt.
    expect(packaged({ select: ['path:models'] })).toEqual({
      count: 36,
      packages: ['elementary', 'jaffle_shop'],
      warnings: [],
    });
    expect(packaged({ select: ['path:**'] }).packages).toEqual(['elementary', 'jaffle_shop']);
    // An --exclude by such a path leaves the package's models in, as dbt builds them.
    expect(packaged({ exclude: ['path:models/edr'] }).packages).toEqual(['elementary', 'jaffle_shop']);
  });
});
