// A model, seed or snapshot dbt builds into another database than the project's other models (its database
// config, a snapshot's target_database): the service names a table by `schema.table` on a connector that
// reads one database, so gds cannot declare it where it is. It is refused, saying where it is and what to do,
// never declared as if it were in the project's database (where a namesake may be, or nothing).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { selectNodes } from '../../../src/core/dbt/select.js';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

// balboa builds its models into BALBOA and one snapshot into raw (`target_database: raw`).
describe('balboa (Snowflake): a snapshot in database raw', needs(noSharedFixtures), () => {
  const SNAPSHOT = 'snapshot.balboa.snp_jhu_dashboard_covid_19_global';

  it.each(['balboa_snowflake_1.0.4.manifest.json', 'balboa_snowflake_1.3.0.manifest.json'])(
    '%s: refused, naming both databases and the --exclude that leaves it out',
    (file) => {
      const json = JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/${file}`, 'utf8')) as unknown;
      const project = declareDbtProject({ manifest: json }, {}, dbtReader);
      expect(project.declarations.map((d) => d.uniqueId)).not.toContain(SNAPSHOT);
      const refusal = project.refusals.find((r) => r.uniqueId === SNAPSHOT);
      expect(refusal?.reason).toMatch(
        /database raw .*not BALBOA.*--exclude snp_jhu_dashboard_covid_19_global$/,
      );
      // The hint leaves out that snapshot alone.
      const all = selectNodes(readManifest(json), {});
      expect(selectNodes(readManifest(json), { exclude: ['snp_jhu_dashboard_covid_19_global'] })).toEqual(
        all.filter((id) => id !== SNAPSHOT),
      );
      // Every other declared node is in BALBOA, and declared.
      expect(project.declarations.every((d) => d.database === 'BALBOA')).toBe(true);
      // Selected alone, it is still refused: the project's database is its models', not the selection's.
      const alone = declareDbtProject(
        { manifest: json },
        { select: ['snp_jhu_dashboard_covid_19_global'] },
        dbtReader,
      );
      expect(alone.declarations).toEqual([]);
      expect(alone.refusals.map((r) => r.uniqueId)).toEqual([SNAPSHOT]);
    },
  );
});

describe('two models of one schema and alias, in two databases', () => {
  it('declares the one in the project database, refuses the other (no two declarations of one source)', () => {
    const cols = { columns: columns({ id: 'integer' }) };
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('orders', cols),
          model('customers', cols),
          model('orders_archive', { ...cols, alias: 'orders', database: 'archive' }),
        ),
      },
      {},
      dbtReader,
    );
    expect(project.declarations.map((d) => d.uniqueId).sort()).toEqual([
      'model.shop.customers',
      'model.shop.orders',
    ]);
    expect(project.refusals).toEqual([
      expect.objectContaining({
        uniqueId: 'model.shop.orders_archive',
        reason: expect.stringMatching(
          /^the model is built into database archive \(its database config\), not dev .*analytics\.orders.*--exclude orders_archive$/,
        ) as unknown,
      }),
    ]);
  });

  it('a database that differs only in case is the same one (Snowflake folds it)', () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('orders', { columns: columns({ id: 'integer' }), database: 'DEV' }),
          model('customers', { columns: columns({ id: 'integer' }) }),
          model('payments', { columns: columns({ id: 'integer' }) }),
        ),
      },
      {},
      dbtReader,
    );
    expect(project.refusals).toEqual([]);
    expect(project.declarations).toHaveLength(3);
  });
});
