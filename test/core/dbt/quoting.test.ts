// dbt's `quoting` config decides how gds names the relation it registers, as dbt names the one it builds:
// a quoted schema or identifier keeps its case, an unquoted one is folded as the adapter folds it
// (Snowflake to upper case, PostgreSQL to lower). The adapter's default (Snowflake false, PostgreSQL true),
// then dbt_project.yml's `quoting:`, then a model's `config.quoting` or a source's `quoting`.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import type { QuotePolicy } from '../../../src/core/dbt/types.js';
import { loadDbtProject } from '../../../src/services/dbt-project.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, genericTest, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The registered source of one mixed-case model, `DailyOrders` in schema `Analytics`. */
function sourceOf(adapter: string, quoting?: QuotePolicy, config: Record<string, unknown> = {}) {
  const m = manifest(
    model('DailyOrders', {
      schema: 'Analytics',
      config: { enabled: true, materialized: 'table', ...config },
      columns: columns({ order_id: 'integer' }),
    }),
  );
  (m['metadata'] as Record<string, unknown>)['adapter_type'] = adapter;
  const [declaration] = declareDbtProject(
    { manifest: m, ...(quoting === undefined ? {} : { quoting }) },
    {},
    dbtReader,
  ).declarations;
  return {
    source: declaration?.source,
    artifact: (JSON.parse(declaration?.artifact.content ?? '{}') as { source?: string }).source,
    name: declaration?.name,
  };
}

describe('the registered relation follows dbt quoting', () => {
  it('PostgreSQL quotes by default: the relation keeps its case, and the artifact quotes it', () => {
    expect(sourceOf('postgres')).toEqual({
      source: { schema: 'Analytics', table: 'DailyOrders' },
      artifact: '"Analytics"."DailyOrders"',
      name: 'DailyOrders',
    });
  });

  it("PostgreSQL with dbt_project.yml's quoting false: folded to lower case, registered unquoted", () => {
    expect(sourceOf('postgres', { schema: false, identifier: false })).toMatchObject({
      source: { schema: 'analytics', table: 'dailyorders' },
      artifact: 'analytics.dailyorders',
      // The table's name in gds is the model's alias, whatever the relation's case.
      name: 'DailyOrders',
    });
    // Only the parts it sets: the schema stays quoted.
    expect(sourceOf('postgres', { identifier: false }).source).toEqual({
      schema: 'Analytics',
      table: 'dailyorders',
    });
  });

  it("a model's config.quoting wins over the project's", () => {
    expect(
      sourceOf('postgres', { schema: false, identifier: false }, { quoting: { identifier: true } }).source,
    ).toEqual({ schema: 'analytics', table: 'DailyOrders' });
  });

  it('Snowflake leaves relations unquoted by default: upper case, as Snowflake names them', () => {
    expect(sourceOf('snowflake')).toMatchObject({
      source: { schema: 'ANALYTICS', table: 'DAILYORDERS' },
      artifact: '"ANALYTICS"."DAILYORDERS"',
    });
    expect(sourceOf('snowflake', { identifier: true }).source).toEqual({
      schema: 'ANALYTICS',
      table: 'DailyOrders',
    });
  });

  it('an adapter that keeps names as written (DuckDB) registers them as written either way', () => {
    expect(sourceOf('duckdb', { schema: false, identifier: false }).source).toEqual({
      schema: 'Analytics',
      table: 'DailyOrders',
    });
  });

  it("a relationships test to a source follows the source's quoting", async () => {
    const m = manifest(
      model('orders', {
        config: { enabled: true, materialized: 'table' },
        columns: columns({ order_id: 'integer', customer_id: 'integer' }),
        depends_on: { nodes: ['source.shop.raw.Customers'] },
      }),
      genericTest(
        'relationships',
        'model.shop.orders',
        { to: "source('raw', 'Customers')", field: 'id' },
        { column: 'customer_id', dependsOn: ['source.shop.raw.Customers', 'model.shop.orders'] },
      ),
    );
    (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'snowflake';
    m['sources'] = {
      'source.shop.raw.Customers': {
        unique_id: 'source.shop.raw.Customers',
        resource_type: 'source',
        name: 'Customers',
        identifier: 'Customers',
        source_name: 'raw',
        schema: 'raw',
        database: 'dev',
        package_name: 'shop',
        fqn: ['shop', 'raw', 'Customers'],
        quoting: { database: null, schema: null, identifier: true, column: null },
        columns: columns({ id: 'integer' }),
        config: { enabled: true },
      },
    };
    const [orders] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
    expect(orders?.source).toEqual({ schema: 'ANALYTICS', table: 'ORDERS' });
    const customerId = orders?.columns.find((c) => c.name.toLowerCase() === 'customer_id');
    expect(customerId?.references).toMatch(/^RAW\.Customers\./);
  });
});

describe("a project folder's dbt_project.yml", () => {
  it(
    'its quoting: decides the relations of a real project (manifest copied to a temporary project, adapter Snowflake)',
    needs(noSharedFixtures),
    async () => {
      const real = `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb`;
      const dir = mkdtempSync(join(tmpdir(), 'gds-dbt-quoting-'));
      made.push(dir);
      mkdirSync(join(dir, 'target'));
      const m = JSON.parse(readFileSync(join(real, 'target', 'manifest.json'), 'utf8')) as {
        metadata: Record<string, unknown>;
      };
      m.metadata['adapter_type'] = 'snowflake';
      writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(m));
      copyFileSync(join(real, 'dbt_project.yml'), join(dir, 'dbt_project.yml'));
      const unquoted = await loadDbtProject(dir, {});
      const sources = unquoted.declarations.map((d) => `${d.source.schema}.${d.source.table}`);
      expect(sources.length).toBeGreaterThan(0);
      for (const source of sources) expect(source).toBe(source.toUpperCase());

      writeFileSync(
        join(dir, 'dbt_project.yml'),
        `${readFileSync(join(real, 'dbt_project.yml'), 'utf8')}\nquoting:\n  schema: true\n  identifier: true\n`,
      );
      const quoted = await loadDbtProject(dir, {});
      expect(quoted.declarations.map((d) => `${d.source.schema}.${d.source.table}`)).toEqual(
        unquoted.declarations.map((d) => `${d.source.schema}.${d.source.table}`.toLowerCase()),
      );
      expect(quoted.declarations.map((d) => d.name)).toEqual(unquoted.declarations.map((d) => d.name));
    },
  );

  it('a dbt_project.yml that is not YAML gds reads leaves the adapter default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gds-dbt-quoting-'));
    made.push(dir);
    mkdirSync(join(dir, 'target'));
    const m = manifest(model('DailyOrders', { columns: columns({ order_id: 'integer' }) }));
    writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(m));
    writeFileSync(join(dir, 'dbt_project.yml'), 'name: shop\nquoting: [unclosed\n');
    const project = await loadDbtProject(dir, {});
    expect(project.declarations[0]?.source).toEqual({ schema: 'analytics', table: 'DailyOrders' });
  });
});
