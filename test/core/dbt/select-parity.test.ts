// Where gds's node selection differed from dbt-core's: the nodes of dbt's graph that are no model (exposures,
// metrics, semantic models, saved queries), the `@+x` form, and YAML selectors (`--selector`, `default: true`).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DbtSelectionError, selectNodes } from '../../../src/core/dbt/select.js';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { manifest, model } from './helpers.js';

type Entry = Record<string, unknown>;

const other = (kind: string, name: string, parents: string[], extra: Entry = {}): Entry => ({
  unique_id: `${kind}.shop.${name}`,
  resource_type: kind,
  name,
  package_name: 'shop',
  fqn: ['shop', name],
  original_file_path: `models/${kind}s.yml`,
  tags: [],
  config: { enabled: true },
  depends_on: { nodes: parents, macros: [] },
  ...extra,
});

const orders = model('orders', { folders: ['marts'] });
const customers = model('customers', { folders: ['marts'] });
const payments = model('payments', { folders: ['marts'] });
const upstream = model('stg_payments', { folders: ['staging'] });
const paymentsFromStg = { ...payments, depends_on: { nodes: ['model.shop.stg_payments'] } };
const base = manifest(orders, customers, paymentsFromStg, upstream);
const project = (extra: Entry): Entry => ({ ...base, ...extra });

const ids = (m: Entry, select?: string[], exclude?: string[], selector?: string) =>
  selectNodes(readManifest(m), {
    ...(select === undefined ? {} : { select }),
    ...(exclude === undefined ? {} : { exclude }),
    ...(selector === undefined ? {} : { selector }),
  })
    .map((id) => id.split('.').at(-1))
    .sort();

describe("exposures, metrics, semantic models and saved queries are nodes of dbt's graph", () => {
  const withExposure = project({
    exposures: {
      'exposure.shop.revenue': other('exposure', 'revenue', ['model.shop.orders', 'model.shop.payments'], {
        tags: ['critical'],
      }),
    },
  });

  it("@model reaches the other parents of an exposure built on it (dbt's select_childrens_parents)", () => {
    expect(ids(withExposure, ['@orders'])).toEqual(['orders', 'payments', 'stg_payments']);
  });

  it('exposure: selects the exposure, +exposure: what it is built on; a glob and package.name too', () => {
    expect(ids(withExposure, ['+exposure:revenue'])).toEqual(['orders', 'payments', 'stg_payments']);
    expect(ids(withExposure, ['1+exposure:rev*'])).toEqual(['orders', 'payments']);
    expect(ids(withExposure, ['+exposure:shop.revenue'])).toEqual(['orders', 'payments', 'stg_payments']);
    expect(ids(withExposure, ['+exposure:other.revenue'])).toEqual([]);
  });

  it('tag:, path: and package: find an exposure too, so + reaches its parents', () => {
    expect(ids(withExposure, ['+tag:critical'])).toEqual(['orders', 'payments', 'stg_payments']);
    expect(ids(withExposure, ['+path:models/exposures.yml'])).toEqual(['orders', 'payments', 'stg_payments']);
  });

  it('metric:, semantic_model: and saved_query: select those nodes; + walks from them', () => {
    const semantic = project({
      semantic_models: {
        'semantic_model.shop.sm_orders': other('semantic_model', 'sm_orders', ['model.shop.orders']),
      },
      metrics: {
        'metric.shop.revenue': other('metric', 'revenue', ['semantic_model.shop.sm_orders']),
      },
      saved_queries: {
        'saved_query.shop.weekly': other('saved_query', 'weekly', ['metric.shop.revenue']),
      },
    });
    expect(ids(semantic, ['+metric:revenue'])).toEqual(['orders']);
    expect(ids(semantic, ['+semantic_model:sm_orders'])).toEqual(['orders']);
    expect(ids(semantic, ['+saved_query:weekly'])).toEqual(['orders']);
    expect(ids(semantic, ['metric:revenue'])).toEqual([]);
  });

  it('a disabled exposure is no node of the graph', () => {
    const disabled = project({
      exposures: {
        'exposure.shop.revenue': other('exposure', 'revenue', ['model.shop.orders', 'model.shop.payments'], {
          config: { enabled: false },
        }),
      },
    });
    expect(ids(disabled, ['@orders'])).toEqual(['orders']);
  });
});

describe('@ with a parents operator, as dbt reads it', () => {
  it('@+x and @2+x are @x (dbt refuses only @x+)', () => {
    const withExposure = project({});
    expect(ids(withExposure, ['@+payments'])).toEqual(ids(withExposure, ['@payments']));
    expect(ids(withExposure, ['@1+payments'])).toEqual(['payments', 'stg_payments']);
    expect(() => ids(withExposure, ['@payments+'])).toThrow(DbtSelectionError);
  });
});

describe('on the real manifests', needs(noSharedFixtures), () => {
  it("balboa: @stg_personal_loans reaches country_population through the exposure, as dbt's child_map says", () => {
    const raw = JSON.parse(
      readFileSync(`${sharedFixturesDir}real/dbt/balboa_snowflake_1.8.8.manifest.json`, 'utf8'),
    ) as { child_map: Record<string, string[]> };
    expect(raw.child_map['model.balboa.stg_personal_loans']).toContain('exposure.balboa.customer_loans');
    const selected = selectNodes(readManifest(raw), { select: ['@stg_personal_loans'] });
    expect(selected).toContain('model.balboa.country_population');
    expect(selected).toContain('model.balboa.stg_country_populations.v2');
  });
});

// manifest.json's `selectors`: selectors.yml as dbt parsed it (SelectorDict: each definition's CLI strings
// made dicts, `method: selector` inlined), each by name with its `default`.
const selectors = (defs: Record<string, { definition: unknown; default?: boolean }>): Entry => ({
  selectors: Object.fromEntries(
    Object.entries(defs).map(([name, def]) => [name, { name, description: '', ...def }]),
  ),
});

describe('YAML selectors (selectors.yml, --selector), as dbt resolves them', () => {
  it('a selector with default: true is what a run without --select or --exclude selects, as in dbt', () => {
    const m = project(
      selectors({ marts_only: { definition: { method: 'fqn', value: 'orders' }, default: true } }),
    );
    expect(ids(m)).toEqual(['orders']);
    // --select (or --exclude) given: the default selector is not used.
    expect(ids(m, ['payments'])).toEqual(['payments']);
    expect(ids(m, undefined, ['payments'])).toEqual(['customers', 'orders', 'stg_payments']);
  });

  it('--selector NAME: CLI strings, method: value, full dicts with parents/children, union, intersection, exclude', () => {
    const m = project(
      selectors({
        cli: { definition: '+payments' },
        keyed: { definition: { fqn: 'marts.*' } },
        full: { definition: { method: 'fqn', value: 'payments', parents: true, parents_depth: 1 } },
        normalized: {
          definition: { union: [{ method: 'fqn', value: 'payments', parents: true, children: false }] },
        },
        setops: {
          definition: {
            union: [{ intersection: ['marts.*', '+payments'] }, 'customers', { exclude: ['orders'] }],
          },
        },
        excluded: {
          definition: { method: 'path', value: 'models', exclude: ['stg_payments', { fqn: 'orders' }] },
        },
        nested: { definition: { union: [{ method: 'selector', value: 'cli' }, 'orders'] } },
        childrens_parents: { definition: { method: 'fqn', value: 'stg_payments', childrens_parents: true } },
      }),
    );
    expect(ids(m, undefined, undefined, 'cli')).toEqual(['payments', 'stg_payments']);
    expect(ids(m, undefined, undefined, 'keyed')).toEqual(['customers', 'orders', 'payments']);
    expect(ids(m, undefined, undefined, 'full')).toEqual(['payments', 'stg_payments']);
    expect(ids(m, undefined, undefined, 'normalized')).toEqual(['payments', 'stg_payments']);
    expect(ids(m, undefined, undefined, 'setops')).toEqual(['customers', 'payments']);
    expect(ids(m, undefined, undefined, 'excluded')).toEqual(['customers', 'payments']);
    expect(ids(m, undefined, undefined, 'nested')).toEqual(['orders', 'payments', 'stg_payments']);
    expect(ids(m, undefined, undefined, 'childrens_parents')).toEqual(['payments', 'stg_payments']);
  });

  it('an unknown selector name, or a definition gds cannot read, is a DbtSelectionError naming it', () => {
    const m = project(
      selectors({
        odd: { definition: { method: 'flavour', value: 'unique' } },
        bad: { definition: { union: 'orders' } },
      }),
    );
    expect(() => ids(m, undefined, undefined, 'nope')).toThrow(/no selector "nope".*odd, bad/);
    expect(() => ids(m, undefined, undefined, 'odd')).toThrow(DbtSelectionError);
    expect(() => ids(m, undefined, undefined, 'bad')).toThrow(/union must be a list/);
    expect(() => ids(project({}), undefined, undefined, 'any')).toThrow(/no selector "any".*none/);
  });
});

describe("version: as dbt's VersionSelectorMethod reads it", () => {
  const version = (v: number | string, latest: number | string) =>
    model(`dim_accounts.v${v}`, {
      name: 'dim_accounts',
      fqn: ['shop', 'marts', 'dim_accounts', `v${v}`],
      version: v,
      latest_version: latest,
    });
  const m = manifest(version(1, 2), version(2, 2), version(3, 2), orders);

  it('latest, old, prerelease and none, by the model versions compared as numbers', () => {
    expect(ids(m, ['version:latest'])).toEqual(['v2']);
    expect(ids(m, ['version:old'])).toEqual(['v1']);
    expect(ids(m, ['version:prerelease'])).toEqual(['v3']);
    expect(ids(m, ['version:none'])).toEqual(['orders']);
    expect(ids(m, ['version:latest+'])).toEqual(['v2']);
  });

  it('any other value is a DbtSelectionError, as dbt refuses it', () => {
    expect(() => ids(m, ['version:newest'])).toThrow(/latest, prerelease, old or none/);
  });
});

describe('state:modified compares exposures and metrics too, as dbt-core does', () => {
  const exposure = (extra: Entry = {}) =>
    other('exposure', 'revenue', ['model.shop.orders'], {
      type: 'dashboard',
      owner: { name: 'finance' },
      url: 'https://bi/revenue',
      ...extra,
    });
  const metric = (extra: Entry = {}) =>
    other('metric', 'order_total', ['model.shop.payments'], {
      type: 'simple',
      type_params: { measure: { name: 'amount' } },
      ...extra,
    });
  const prod = project({
    exposures: { 'exposure.shop.revenue': exposure() },
    metrics: { 'metric.shop.order_total': metric() },
  });
  const withState = (pr: Entry, select: string[]) =>
    selectNodes(readManifest(pr), { select }, () => {}, readManifest(prod))
      .map((id) => id.split('.').at(-1))
      .sort();

  it('an unchanged exposure or metric is not modified: +state:modified selects nothing', () => {
    expect(withState(prod, ['+state:modified'])).toEqual([]);
  });

  it("+state:modified after an exposure's (or a metric's) change selects what it is built on", () => {
    const exposureChanged = project({
      exposures: {
        'exposure.shop.revenue': exposure({
          depends_on: { nodes: ['model.shop.orders', 'model.shop.customers'], macros: [] },
        }),
      },
      metrics: { 'metric.shop.order_total': metric() },
    });
    expect(withState(exposureChanged, ['+state:modified'])).toEqual(['customers', 'orders']);
    const urlChanged = project({
      exposures: { 'exposure.shop.revenue': exposure({ url: 'https://bi/revenue-v2' }) },
      metrics: { 'metric.shop.order_total': metric() },
    });
    expect(withState(urlChanged, ['+state:modified'])).toEqual(['orders']);
    const metricChanged = project({
      exposures: { 'exposure.shop.revenue': exposure() },
      metrics: { 'metric.shop.order_total': metric({ filter: "{{ Dimension('order__status') }} = 'paid'" }) },
    });
    expect(withState(metricChanged, ['+state:modified'])).toEqual(['payments', 'stg_payments']);
    // A new exposure is new, and not modified: dbt's Exposure.same_contents(None) is True ("existing when it
    // didn't before"), as a new metric's and source's; a body or contract selector never selects one.
    const added = project({
      exposures: {
        'exposure.shop.revenue': exposure(),
        'exposure.shop.ops': other('exposure', 'ops', ['model.shop.customers']),
      },
      metrics: { 'metric.shop.order_total': metric() },
    });
    expect(withState(added, ['+state:modified'])).toEqual([]);
    expect(withState(added, ['@state:modified'])).toEqual([]);
    expect(withState(added, ['+state:new'])).toEqual(['customers']);
    expect(withState(added, ['+state:modified.body'])).toEqual([]);
  });
});
