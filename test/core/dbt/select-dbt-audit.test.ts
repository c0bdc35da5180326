// Selections where gds read dbt's syntax otherwise than dbt-core does, on a real manifest (jaffle_shop, written
// by dbt 1.12): each case says what dbt's own parser (graph/cli.py, selector_spec.py) makes of the text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readManifest, type Manifest } from '../../../src/core/dbt/manifest.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import type { DbtSelection } from '../../../src/core/dbt/types.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const jaffle = (): Manifest =>
  readManifest(
    JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/dap_v12_1.12.0.manifest.json`, 'utf8')) as unknown,
  );

const pick = (selection: DbtSelection) => {
  const warnings: string[] = [];
  const nodes = selectNodes(jaffle(), selection, (w) => warnings.push(w)).map((id) => id.split('.').at(-1));
  return { nodes, warnings };
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
});
