// gds's node selection against what dbt itself ran: each real run_results.json of ../shared/fixtures/real
// whose manifest is the same run's records the command (`args.which`) and its selection (`args.select`,
// `args.exclude`); the nodes dbt built are its results of the kinds that command builds. gds, given the same
// manifest and selection, must pick exactly those.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const dir = `${sharedFixturesDir}real/dbt/`;

/** What each command builds (the rest of its results are tests or other work). */
const BUILDS: Record<string, string[]> = {
  run: ['model'],
  build: ['model', 'seed', 'snapshot'],
  snapshot: ['snapshot'],
  seed: ['seed'],
};

/**
 * ol_duckdb: `dbt run` with no selection recorded one result of its two table models (the OpenLineage test
 * harness's run, not a selection: dbt would have built both, and gds selects both).
 */
const NOT_A_SELECTION = new Set(['ol_duckdb']);

interface RunArgs {
  which?: string;
  select?: string[];
  models?: string[];
  exclude?: string[];
}

const runs = noSharedFixtures
  ? []
  : readdirSync(dir)
      .filter((file) => file.endsWith('.run_results.json'))
      .map((file) => file.replace(/\.run_results\.json$/, ''))
      .filter((name) => readdirSync(dir).includes(`${name}.manifest.json`))
      .map((name) => {
        const results = JSON.parse(readFileSync(`${dir}${name}.run_results.json`, 'utf8')) as {
          args?: RunArgs;
          results: Array<{ unique_id: string }>;
        };
        return { name, args: results.args ?? {}, results: results.results };
      })
      .filter(
        ({ name, args }) => args.which !== undefined && args.which in BUILDS && !NOT_A_SELECTION.has(name),
      );

describe('selection as dbt ran it, on the real runs', needs(noSharedFixtures), () => {
  it('has runs to compare (a selection among them)', () => {
    expect(runs.length).toBeGreaterThanOrEqual(5);
    expect(runs.some(({ args }) => (args.select ?? args.models ?? []).length > 0)).toBe(true);
  });

  it.each(runs.map((run) => [run.name, run] as const))('%s', (_name, { name, args, results }) => {
    const kinds = BUILDS[args.which ?? ''] ?? [];
    const ofKind = (id: string) => kinds.includes(id.split('.')[0] ?? '');
    const manifest = readManifest(JSON.parse(readFileSync(`${dir}${name}.manifest.json`, 'utf8')));
    const select = args.select ?? args.models ?? [];
    const exclude = args.exclude ?? [];
    const selected = selectNodes(manifest, {
      ...(select.length > 0 ? { select } : {}),
      ...(exclude.length > 0 ? { exclude } : {}),
    }).filter(ofKind);
    const built = [...new Set(results.map((r) => r.unique_id))].filter(ofKind);
    expect(selected.sort()).toEqual(built.sort());
  });
});
