// The selector methods dbt-core's selector_methods.py has beside names and paths: `config.KEY:` (its
// ConfigSelectorMethod: any config, a list's items, booleans and `severity` without case), `group:`, `access:`,
// `result:` (run_results.json of --state) and `source_status:` (sources.json of --state and of target/); on
// hand-written manifests and on the real ones of ../shared/fixtures, where dbt's own group_map says who is
// in a group.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DbtSelectionError, selectDbt, selectNodes, selectionReads } from '../../../src/core/dbt/select.js';
import { ManifestReader, readManifest } from '../../../src/core/dbt/manifest.js';
import { readRunResults, readSourceFreshness } from '../../../src/core/dbt/previous-run.js';
import type { PreviousRun } from '../../../src/core/dbt/types.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { genericTest, manifest, model, source } from './helpers.js';

type Entry = Record<string, unknown>;

const config = (extra: Entry): Entry => ({ config: { enabled: true, materialized: 'view', ...extra } });
const orders = model('orders', {
  ...config({
    materialized: 'table',
    meta: { owner: 'alice' },
    tags: ['nightly'],
    contract: { enforced: true },
    group: 'finance',
    retries: 5,
  }),
  access: 'public',
});
const customers = model('customers', {
  ...config({ meta: { owner: 'bob' }, tags: [], contract: { enforced: false }, group: 'marketing' }),
  access: 'protected',
});
const stgOrders = model('stg_orders', {
  ...config({ contract: { enforced: false }, transient: 'true' }),
  access: 'private',
});
const ordersChild = model('order_facts', { depends_on: { nodes: ['model.shop.orders'] } });
const warnTest = genericTest(
  'not_null',
  'model.shop.customers',
  {},
  {
    column: 'id',
    id: 'test.shop.not_null_customers_id.1',
    config: { severity: 'WARN', materialized: 'test' },
  },
);
const errorTest = genericTest(
  'unique',
  'model.shop.orders',
  {},
  { column: 'id', id: 'test.shop.unique_orders_id.1', config: { materialized: 'test' } },
);
const revenue = {
  unique_id: 'metric.shop.revenue',
  resource_type: 'metric',
  name: 'revenue',
  package_name: 'shop',
  fqn: ['shop', 'revenue'],
  config: { enabled: true, group: 'finance' },
  depends_on: { nodes: ['model.shop.orders'] },
};
const project: Entry = {
  ...manifest(orders, customers, stgOrders, ordersChild, warnTest, errorTest),
  metrics: { 'metric.shop.revenue': revenue },
  sources: {
    'source.shop.raw.orders': source('raw', 'orders', {
      config: { enabled: true, meta: { owner: 'alice' } },
    }),
  },
};

const names = (select: string[], previous: PreviousRun = {}, m: Entry = project) =>
  selectNodes(readManifest(m), { select }, () => {}, undefined, previous)
    .map((id) => id.split('.').at(-1))
    .sort();

describe("config.KEY: as dbt's ConfigSelectorMethod compares", () => {
  it('any key, nested keys (config.meta.owner), and a list by its items (config.tags)', () => {
    expect(names(['config.meta.owner:alice'])).toEqual(['orders']);
    expect(names(['config.meta.owner:alice+'])).toEqual(['order_facts', 'orders']);
    expect(names(['config.tags:nightly'])).toEqual(['orders']);
    expect(names(['config.group:marketing'])).toEqual(['customers']);
    expect(names(['config.materialized:table'])).toEqual(['orders']);
    // A key no node has, or a value no node holds: nothing (dbt warns and selects nothing).
    expect(names(['config.meta.owner:carol'])).toEqual([]);
    expect(names(['config.no_such_key:x'])).toEqual([]);
    // No glob: the value is compared as it is.
    expect(names(['config.meta.owner:al*'])).toEqual([]);
  });

  it('true and false in any case select a boolean config; a text "true" only the text', () => {
    expect(names(['config.contract.enforced:true'])).toEqual(['orders']);
    expect(names(['config.contract.enforced:TRUE'])).toEqual(['orders']);
    expect(names(['config.contract.enforced:false'])).toEqual(['customers', 'stg_orders']);
    expect(names(['config.transient:true'])).toEqual(['stg_orders']);
    expect(names(['config.transient:True'])).toEqual([]);
  });

  // dbt-core #5889 (1.3.0: "ConfigSelectorMethod should check for bools"): before, `selector == value` alone.
  it('before dbt 1.3 the value equals the config or selects nothing: no list items, no true/false', () => {
    const old: Entry = {
      ...project,
      metadata: { ...(project['metadata'] as Entry), dbt_version: '1.2.1' },
      selectors: {
        enforced: { name: 'enforced', definition: { 'config.contract.enforced': true } },
      },
    };
    expect(names(['config.tags:nightly'], {}, old)).toEqual([]);
    expect(names(['config.contract.enforced:true'], {}, old)).toEqual([]);
    expect(names(['config.meta.owner:alice'], {}, old)).toEqual(['orders']);
    expect(names(['config.transient:true'], {}, old)).toEqual(['stg_orders']);
    // A YAML selector's true is Python's True, which equals the config's.
    expect(selectNodes(readManifest(old), { selector: 'enforced' })).toEqual(['model.shop.orders']);
  });

  it("a CLI value is a text, never a config's number; a YAML selector's number is one", () => {
    expect(names(['config.retries:5'])).toEqual([]);
    const withSelector = {
      ...project,
      selectors: {
        retried: { name: 'retried', definition: { method: 'config.retries', value: 5 } },
        enforced: { name: 'enforced', definition: { 'config.contract.enforced': true } },
      },
    };
    const bySelector = (selector: string) =>
      selectNodes(readManifest(withSelector), { selector }).map((id) => id.split('.').at(-1));
    expect(bySelector('retried')).toEqual(['orders']);
    expect(bySelector('enforced')).toEqual(['orders']);
  });

  it('tests are searched too: config.severity without case, config.materialized:test every test', () => {
    const tests = (select: string[], exclude: string[] = []) =>
      [...selectDbt(readManifest(project), { select, exclude }).tests].sort();
    expect(tests(['config.severity:warn'])).toEqual(['test.shop.not_null_customers_id.1']);
    expect(tests(['config.materialized:test'])).toEqual([
      'test.shop.not_null_customers_id.1',
      'test.shop.unique_orders_id.1',
    ]);
    // Excluded by its config, a test is no rule of its table; the table stays selected.
    const selected = selectDbt(readManifest(project), {
      select: ['customers'],
      exclude: ['config.severity:WARN'],
    });
    expect(selected.nodes).toEqual(['model.shop.customers']);
    expect([...selected.tests]).toEqual([]);
  });

  it('read without the configs (a plan whose selection compares none): config.materialized: still selects', () => {
    const reader = new ManifestReader({ configs: false });
    reader.member('metadata', undefined, project['metadata']);
    for (const section of ['nodes', 'sources', 'metrics'])
      for (const [key, raw] of Object.entries(project[section] as Entry)) reader.member(section, key, raw);
    const m = reader.manifest({ object: true, nodes: true });
    expect([...m.nodes.values()].some((n) => n.config !== undefined)).toBe(false);
    expect(selectNodes(m, { select: ['config.materialized:table'] })).toEqual(['model.shop.orders']);
    expect([...selectDbt(m, { select: ['config.materialized:test'] }).tests].sort()).toEqual([
      'test.shop.not_null_customers_id.1',
      'test.shop.unique_orders_id.1',
    ]);
    expect(selectNodes(m, { select: ['group:finance'] })).toEqual(['model.shop.orders']);
    expect(() => selectNodes(m, { select: ['config.meta.owner:alice'] })).toThrow(
      /without its nodes' configs/,
    );
  });

  it('`config:` without a key is refused, naming the form', () => {
    expect(() => names(['config:table'])).toThrow(/config\.KEY:/);
  });
});

describe('group: and access:', () => {
  it("group: a node's config.group (a glob), and the metrics of the group", () => {
    expect(names(['group:finance'])).toEqual(['orders']);
    expect(names(['group:fin*'])).toEqual(['orders']);
    expect(names(['group:*'])).toEqual(['customers', 'orders']);
    const selected = selectDbt(readManifest(project), { select: ['group:finance+'] });
    expect(selected.nodes).toEqual(['model.shop.orders', 'model.shop.order_facts']);
  });

  it("access: a model's access, exactly", () => {
    expect(names(['access:public'])).toEqual(['orders']);
    expect(names(['access:protected'])).toEqual(['customers']);
    expect(names(['access:private+'])).toEqual(['stg_orders']);
    expect(names(['access:Public'])).toEqual([]);
  });
});

describe('result: and source_status: against the artifacts of --state', () => {
  const results = readRunResults({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
    results: [
      { unique_id: 'model.shop.orders', status: 'error' },
      { unique_id: 'model.shop.customers', status: 'success' },
      { unique_id: 'test.shop.not_null_customers_id.1', status: 'warn' },
    ],
  });

  it('result:STATUS selects the nodes of that status in the earlier run; + what reads them', () => {
    expect(names(['result:error'], { results })).toEqual(['orders']);
    expect(names(['result:error+'], { results })).toEqual(['order_facts', 'orders']);
    expect(names(['result:success'], { results })).toEqual(['customers']);
    expect(names(['result:fail'], { results })).toEqual([]);
    expect([
      ...selectDbt(readManifest(project), { select: ['result:warn'] }, () => {}, undefined, { results })
        .tests,
    ]).toEqual(['test.shop.not_null_customers_id.1']);
  });

  it('result: without run_results.json is refused, saying what to pass', () => {
    expect(() => names(['result:error'])).toThrow(DbtSelectionError);
    expect(() => names(['result:error'])).toThrow(/--state DIR.*run_results\.json/);
  });

  it('a run_results.json that is another artifact is refused', () => {
    expect(() =>
      readRunResults({
        metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
      }),
    ).toThrow(/not dbt's run-results/);
  });

  const freshness = (loaded: Record<string, string | undefined>) =>
    readSourceFreshness({
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/sources/v3.json' },
      results: Object.entries(loaded).map(([id, at]) =>
        at === undefined ? { unique_id: id, status: 'runtime error' } : { unique_id: id, max_loaded_at: at },
      ),
    });
  const stgFromSource = model('stg_raw_orders', { depends_on: { nodes: ['source.shop.raw.orders'] } });
  const withSource: Entry = {
    ...project,
    nodes: { ...(project['nodes'] as Entry), [String(stgFromSource['unique_id'])]: stgFromSource },
  };

  it('source_status:fresher+ selects what reads a source loaded since the earlier run', () => {
    const id = 'source.shop.raw.orders';
    const before = freshness({ [id]: '2026-01-01T00:00:00Z' });
    expect(
      names(
        ['source_status:fresher+'],
        { sources: before, sourcesCurrent: freshness({ [id]: '2026-01-02T00:00:00+00:00' }) },
        withSource,
      ),
    ).toEqual(['stg_raw_orders']);
    expect(
      names(['source_status:fresher+'], { sources: before, sourcesCurrent: before }, withSource),
    ).toEqual([]);
    // Not checked before: fresher; its check failed now: not.
    expect(
      names(['source_status:fresher+'], { sources: freshness({}), sourcesCurrent: before }, withSource),
    ).toEqual(['stg_raw_orders']);
    expect(
      names(
        ['source_status:fresher+'],
        { sources: freshness({}), sourcesCurrent: freshness({ [id]: undefined }) },
        withSource,
      ),
    ).toEqual([]);
  });

  it('source_status: without either sources.json is refused, naming the missing one', () => {
    const some = freshness({});
    expect(() => names(['source_status:fresher+'], { sourcesCurrent: some })).toThrow(
      /sources\.json in the --state folder/,
    );
    expect(() => names(['source_status:fresher+'], { sources: some })).toThrow(/target\/sources\.json/);
  });
});

describe('what a selection reads besides the manifest (configs, run_results.json, sources.json)', () => {
  const selectors = new Map([
    ['nightly', { definition: { method: 'tag', value: 'nightly' }, default: true }],
    [
      'owned',
      { definition: { union: [{ method: 'selector', value: 'by_owner' }, 'result:error+'] }, default: false },
    ],
    ['by_owner', { definition: { 'config.meta.owner': 'alice' }, default: false }],
  ]);
  const none = { configs: false, results: false, freshness: false };

  it('only what its --select and --exclude, or the YAML selector it uses and those it names, compare', () => {
    expect(selectionReads({ select: ['config.materialized:table', 'tag:x'] })).toEqual(none);
    expect(selectionReads({ select: ['orders'], exclude: ['config.severity:warn'] })).toEqual({
      ...none,
      configs: true,
    });
    expect(selectionReads({ select: ['result:error+', 'source_status:fresher+'] })).toEqual({
      configs: false,
      results: true,
      freshness: true,
    });
    // The default selector compares no config, however many other selectors do.
    expect(selectionReads({}, selectors)).toEqual(none);
    expect(selectionReads({ selector: 'owned' }, selectors)).toEqual({
      ...none,
      configs: true,
      results: true,
    });
    expect(selectionReads({ select: ['orders'] }, selectors)).toEqual(none);
  });
});

describe('on the real manifests', () => {
  const read = (file: string) => JSON.parse(readFileSync(`${sharedFixturesDir}${file}`, 'utf8')) as Entry;

  it("group: selects the models of dbt's own group_map (balboa, dbt 1.8)", needs(noSharedFixtures), () => {
    const raw = read('real/dbt/balboa_snowflake_1.8.8.manifest.json');
    const m = readManifest(raw);
    const groupMap = raw['group_map'] as Record<string, string[]>;
    const models = (ids: string[]) => ids.filter((id) => /^(model|seed|snapshot)\./.test(id)).sort();
    for (const group of ['marketing', 'finance']) {
      expect(selectNodes(m, { select: [`group:${group}`] }).sort()).toEqual(models(groupMap[group] ?? []));
    }
    expect(selectNodes(m, { select: ['config.group:marketing'] }).sort()).toEqual(
      models(groupMap['marketing'] ?? []),
    );
  });

  it('access: and config.KEY: select as the nodes say (balboa, dbt 1.8)', needs(noSharedFixtures), () => {
    const raw = read('real/dbt/balboa_snowflake_1.8.8.manifest.json');
    const m = readManifest(raw);
    const nodes = Object.values(raw['nodes'] as Record<string, Entry>).filter(
      (n) => n['resource_type'] === 'model',
    );
    const where = (test: (n: Entry) => boolean) =>
      nodes
        .filter(test)
        .map((n) => String(n['unique_id']))
        .sort();
    const cfg = (n: Entry) => n['config'] as Entry;
    for (const access of ['public', 'protected', 'private'])
      expect(selectNodes(m, { select: [`access:${access}`] }).sort()).toEqual(
        where((n) => n['access'] === access),
      );
    expect(selectNodes(m, { select: ['access:public'] })).toHaveLength(7);
    expect(selectNodes(m, { select: ['config.persist_docs.relation:false'] }).sort()).toEqual([
      'model.balboa.loans_by_state__dynamic',
      'model.balboa.loans_by_state__standard',
    ]);
    expect(selectNodes(m, { select: ['config.materialized:dynamic_table'] }).sort()).toEqual(
      where((n) => cfg(n)['materialized'] === 'dynamic_table'),
    );
    expect(selectNodes(m, { select: ['config.meta.owner:@alice'] })).toEqual([
      'model.balboa.stg_pipe_usage_history',
    ]);
  });

  it(
    'access:protected is every model of the dbt/ manifests (dbt 1.10, 1.11)',
    needs(noSharedFixtures),
    () => {
      for (const file of ['dbt/duckdb-v12-manifest.json', 'dbt/postgres-v12-manifest.json']) {
        const m = readManifest(read(file));
        const models = [...m.nodes.values()]
          .filter((n) => n.resourceType === 'model' && n.enabled)
          .map((n) => n.uniqueId);
        expect(selectNodes(m, { select: ['access:protected'] }).sort()).toEqual(models.sort());
        expect(selectNodes(m, { select: ['access:public'] })).toEqual([]);
      }
    },
  );

  it(
    'result: reads a real run_results.json (dbt 1.10, the run of its manifest)',
    needs(noSharedFixtures),
    () => {
      const m = readManifest(read('dbt/duckdb-v12-manifest.json'));
      const results = readRunResults(read('dbt/duckdb-v6-run_results.json'));
      const succeeded = [...results].filter(([, status]) => status === 'success').map(([id]) => id);
      expect(succeeded.length).toBeGreaterThan(0);
      expect(selectNodes(m, { select: ['result:success'] }, () => {}, undefined, { results }).sort()).toEqual(
        succeeded.filter((id) => id.startsWith('model.')).sort(),
      );
    },
  );

  it(
    'config.KEY:true and a list item select nothing on dbt 1.0 (dap 1.0.0, ol_snapshot 1.0.4), as there',
    needs(noSharedFixtures),
    () => {
      const dap = readManifest(read('real/dbt/dap_v4_1.0.0.manifest.json'));
      const warnings: string[] = [];
      expect(selectNodes(dap, { select: ['config.full_refresh:true'] }, (w) => warnings.push(w))).toEqual([]);
      expect(warnings).toEqual([expect.stringMatching(/--select config\.full_refresh:true matches no/)]);
      expect(selectNodes(dap, { select: ['config.materialized:incremental'] })).toEqual([
        'model.jaffle_shop.test_insert_overwrite',
      ]);
      const snapshot = readManifest(read('real/dbt/ol_snapshot.manifest.json'));
      expect(selectNodes(snapshot, { select: ['config.check_cols:id'] }, () => {})).toEqual([]);
    },
  );
});

describe("unit_test: as dbt 1.8's UnitTestSelectorMethod", () => {
  const read = (file: string) => JSON.parse(readFileSync(`${sharedFixturesDir}${file}`, 'utf8')) as Entry;

  it(
    'selects a unit test by NAME or PACKAGE.NAME (globs too); + then reaches the model it tests (dap, dbt 1.12)',
    needs(noSharedFixtures),
    () => {
      const raw = read('real/dbt/dap_v12_1.12.0.manifest.json');
      const m = readManifest(raw);
      const units = Object.values(raw['unit_tests'] as Record<string, Entry>);
      const unit = units.find((u) => String(u['unique_id']).includes('.orders.')) as Entry;
      const name = String(unit['name']);
      const tested = (unit['depends_on'] as { nodes: string[] }).nodes;
      // The unit test is no table: selected alone, no model is; + its model (its parent in dbt's graph).
      expect(selectNodes(m, { select: [`unit_test:${name}`] })).toEqual([]);
      expect(selectNodes(m, { select: [`1+unit_test:${name}`] })).toEqual(tested);
      expect(selectNodes(m, { select: [`1+unit_test:jaffle_shop.${name}`] })).toEqual(tested);
      expect(selectNodes(m, { select: ['1+unit_test:other_package.*'] })).toEqual([]);
      const all = units.flatMap((u) => (u['depends_on'] as { nodes: string[] }).nodes).sort();
      expect(selectNodes(m, { select: ['1+unit_test:test_*'] }).sort()).toEqual(all);
      // selectDbt: the unit tests it selects are among the tests dbt runs.
      expect([...selectDbt(m, { select: [`unit_test:${name}`] }).tests]).toEqual([unit['unique_id']]);
    },
  );

  it('a.b.c is refused as dbt refuses it; a manifest of dbt before 1.8 has no such method', () => {
    const m = readManifest(manifest(model('orders')));
    expect(() => selectNodes(m, { select: ['unit_test:a.b.c'] })).toThrow(
      /unit_test:NAME or unit_test:PACKAGE\.NAME/,
    );
    const old = manifest(model('orders'));
    (old['metadata'] as Entry)['dbt_version'] = '1.7.4';
    expect(() => selectNodes(readManifest(old), { select: ['unit_test:x'] })).toThrow(/dbt 1\.8 added it/);
  });
});

describe("package:this as dbt 1.8's PackageSelectorMethod reads it (dbt-core #6891)", () => {
  const read = (file: string) => JSON.parse(readFileSync(`${sharedFixturesDir}${file}`, 'utf8')) as Entry;
  const models = (raw: Entry, pkg: string) =>
    Object.values(raw['nodes'] as Record<string, Entry>)
      .filter((n) => n['resource_type'] === 'model' && n['package_name'] === pkg)
      .filter((n) => (n['config'] as Entry)['enabled'] !== false)
      .map((n) => String(n['unique_id']))
      .sort();

  it(
    'is the root project (project_name), not the installed packages (dap, dbt 1.8 with elementary)',
    needs(noSharedFixtures),
    () => {
      const raw = read('real/dbt/dap_v12_1.8.9.manifest.json');
      const m = readManifest(raw);
      const root = models(raw, 'jaffle_shop');
      expect(root.length).toBeGreaterThan(0);
      expect(models(raw, 'elementary').length).toBeGreaterThan(0);
      const picked = selectNodes(m, { select: ['package:this'] }).filter((id) => id.startsWith('model.'));
      expect(picked.sort()).toEqual(root);
      expect(selectNodes(m, { select: ['package:this'] })).toEqual(
        selectNodes(m, { select: ['package:jaffle_shop'] }),
      );
    },
  );

  it(
    'before dbt 1.8 it is a package named this, which no project has (dap, dbt 1.7)',
    needs(noSharedFixtures),
    () => {
      const warnings: string[] = [];
      const m = readManifest(read('real/dbt/dap_v11_1.7.0.manifest.json'));
      expect(selectNodes(m, { select: ['package:this'] }, (w) => warnings.push(w))).toEqual([]);
      expect(warnings.join('\n')).toMatch(/matches no enabled model/);
    },
  );
});
