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

// tag:, path:, file: and package: search dbt's all_nodes, which took the semantic models in with dbt-core #8589
// (1.7, backported to 1.6.4) and the saved queries in 1.8; from 1.7 a name and fqn: search its non_source_nodes
// (exposures, metrics, semantic models, saved queries).
describe("the methods search semantic models and saved queries as the manifest's dbt does", () => {
  const semantic = (dbtVersion: string): Entry => {
    const m = project({
      semantic_models: {
        'semantic_model.shop.sm_orders': other('semantic_model', 'sm_orders', ['model.shop.orders'], {
          original_file_path: 'models/semantic/sm_orders.yml',
        }),
      },
      metrics: {
        'metric.shop.revenue': other('metric', 'revenue', ['semantic_model.shop.sm_orders'], {
          original_file_path: 'models/metrics/revenue.yml',
        }),
      },
      saved_queries: {
        'saved_query.shop.weekly': other('saved_query', 'weekly', ['metric.shop.revenue'], {
          original_file_path: 'models/exports/weekly.yml',
          tags: ['export'],
        }),
      },
    });
    return { ...m, metadata: { ...(m['metadata'] as Entry), dbt_version: dbtVersion } };
  };

  it('+NAME of a metric, semantic model or saved query is what it is built on (dbt 1.7+)', () => {
    for (const version of ['1.7.0', '1.8.0', '1.12.0']) {
      expect(ids(semantic(version), ['+revenue'])).toEqual(['orders']);
      expect(ids(semantic(version), ['+fqn:sm_orders'])).toEqual(['orders']);
      expect(ids(semantic(version), ['1+shop.weekly+'])).toEqual([]);
      expect(ids(semantic(version), ['+weekly'])).toEqual(['orders']);
      expect(ids(semantic(version), ['customers'], ['+revenue'])).toEqual(['customers']);
    }
    // dbt 1.6 (1.6.4 too) and before: a name is a model, seed, snapshot, test or analysis only.
    expect(ids(semantic('1.6.4'), ['+revenue'])).toEqual([]);
    expect(ids(semantic('1.6.4'), ['+fqn:sm_orders'])).toEqual([]);
    expect(ids(semantic('1.5.9'), ['+sm_orders'])).toEqual([]);
  });

  it('path: and file: find a semantic model (dbt 1.6.4+) and a saved query (1.8+), so + reaches its parents', () => {
    for (const version of ['1.6.4', '1.7.19', '1.8.0', '1.12.0']) {
      expect(ids(semantic(version), ['+path:models/semantic'])).toEqual(['orders']);
      expect(ids(semantic(version), ['+file:sm_orders.yml'])).toEqual(['orders']);
      expect(ids(semantic(version), ['+package:shop'])).toEqual([
        'customers',
        'orders',
        'payments',
        'stg_payments',
      ]);
    }
    expect(ids(semantic('1.6.3'), ['+path:models/semantic'])).toEqual([]);
    expect(ids(semantic('1.6.3'), ['+file:sm_orders.yml'])).toEqual([]);
    for (const version of ['1.8.0', '1.12.0']) {
      expect(ids(semantic(version), ['+path:models/exports/weekly.yml'])).toEqual(['orders']);
      expect(ids(semantic(version), ['+tag:export'])).toEqual(['orders']);
    }
    expect(ids(semantic('1.7.19'), ['+tag:export'])).toEqual([]);
  });

  it("resource_type: searches dbt's all_nodes too: saved queries from 1.8, semantic models from 1.6.4", () => {
    // dbt 1.7's ResourceTypeSelectorMethod searches all_nodes, which took no saved_query_nodes before 1.8.
    expect(ids(semantic('1.7.19'), ['+resource_type:saved_query'])).toEqual([]);
    expect(ids(semantic('1.7.19'), ['+resource_type:semantic_model'])).toEqual(['orders']);
    expect(ids(semantic('1.8.0'), ['+resource_type:saved_query'])).toEqual(['orders']);
  });

  it('config.KEY: does not: dbt searches the nodes and sources only (dbt-core #11635 is not merged)', () => {
    const m = semantic('1.12.0');
    const sm = (m['semantic_models'] as Record<string, Entry>)['semantic_model.shop.sm_orders'] as Entry;
    sm['config'] = { enabled: true, meta: { owner: 'kpi' } };
    expect(ids(m, ['+config.meta.owner:kpi'])).toEqual([]);
  });
});

describe('on the real manifest of dbt 1.12 with a semantic layer', needs(noSharedFixtures), () => {
  const dap = () =>
    readManifest(
      JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/dap_v12_1.12.0.manifest.json`, 'utf8')) as Entry,
    );

  it("+METRIC and +SAVED_QUERY by name select what dbt's fqn method does: what they are built on", () => {
    const m = dap();
    const byMetric = selectNodes(m, { select: ['+metric:count_lifetime_orders'] });
    expect(byMetric).toContain('model.jaffle_shop.customers');
    expect(selectNodes(m, { select: ['+count_lifetime_orders'] })).toEqual(byMetric);
    const bySavedQuery = selectNodes(m, { select: ['+saved_query:order_metrics'] });
    expect(bySavedQuery).toContain('model.jaffle_shop.orders');
    expect(selectNodes(m, { select: ['+order_metrics'] })).toEqual(bySavedQuery);
    // --exclude of one leaves its models out, as in dbt.
    const rest = selectNodes(m, { exclude: ['+order_metrics'] });
    expect(rest).not.toContain('model.jaffle_shop.orders');
  });
});

// dbt-core #7321 (dbt 1.5): path: selects a model by the .yml that documents it (its patch_path). Before, the
// .yml's path selected what was written in it (tests, sources), never the model.
describe(".yml paths select the models they document from dbt 1.5, as dbt's path method", () => {
  const documented = (dbtVersion: string): Entry => {
    const m = manifest(model('orders', { patch_path: 'shop://models/marts/_marts.yml' }), model('customers'));
    return { ...m, metadata: { ...(m['metadata'] as Entry), dbt_version: dbtVersion } };
  };

  it('path:models/marts/_marts.yml is orders on 1.5+, nothing before', () => {
    expect(ids(documented('1.5.0'), ['path:models/marts/_marts.yml'])).toEqual(['orders']);
    expect(ids(documented('1.12.0'), ['models/marts/_marts.yml'])).toEqual(['orders']);
    expect(ids(documented('1.4.9'), ['path:models/marts/_marts.yml'])).toEqual([]);
    expect(ids(documented('1.4.9'), ['models/marts/_marts.yml'])).toEqual([]);
  });
});

describe('.yml paths on the real manifest of dbt 1.4.1', needs(noSharedFixtures), () => {
  it('models/schema.yml selects no model: only +path: reaches them, through their tests', () => {
    const m = readManifest(
      JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/dap_v8_1.4.1.manifest.json`, 'utf8')) as Entry,
    );
    expect(selectNodes(m, { select: ['path:models/schema.yml'] })).toEqual([]);
    expect(selectNodes(m, { select: ['+path:models/schema.yml'] })).toContain('model.jaffle_shop.customers');
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

// dbt 1.8's StateSelectorMethod searches all_nodes, the semantic models and saved queries among them, and
// compares each with its namesake of the --state manifest by SemanticModel.same_contents (model, description,
// defaults, entities, dimensions, measures, config, primary_entity, group: not node_relation, dbt-core #9561,
// nor its parents or fqn) and SavedQuery.same_contents (query_params' metrics, group_by and where,
// description, label, config, group).
describe('state:modified compares semantic models and saved queries too, from dbt 1.8', () => {
  const semanticModel = (extra: Entry = {}) =>
    other('semantic_model', 'orders_sm', ['model.shop.orders'], {
      model: "ref('orders')",
      node_relation: { alias: 'orders', schema_name: 'prod', database: 'dev', relation_name: 'prod.orders' },
      entities: [{ name: 'order', type: 'primary', expr: 'id' }],
      dimensions: [{ name: 'status', type: 'categorical' }],
      measures: [{ name: 'amount', agg: 'sum' }],
      ...extra,
    });
  const metric = other('metric', 'revenue', ['semantic_model.shop.orders_sm'], {
    type: 'simple',
    type_params: { measure: { name: 'amount' } },
  });
  const savedQuery = (extra: Entry = {}) =>
    other('saved_query', 'weekly', ['metric.shop.revenue'], {
      query_params: { metrics: ['revenue'], group_by: [], where: null },
      label: 'Weekly',
      ...extra,
    });
  const written = (sm: Entry, sq: Entry, dbtVersion = '1.8.9'): Entry => {
    const p = project({
      semantic_models: { 'semantic_model.shop.orders_sm': sm },
      metrics: { 'metric.shop.revenue': metric },
      saved_queries: { 'saved_query.shop.weekly': sq },
    });
    return { ...p, metadata: { ...(p['metadata'] as Entry), dbt_version: dbtVersion } };
  };
  const prod = written(semanticModel(), savedQuery());
  const withState = (pr: Entry, select: string[], state: Entry = prod) =>
    selectNodes(readManifest(pr), { select }, () => {}, readManifest(state))
      .map((id) => id.split('.').at(-1))
      .sort();

  it('unchanged, or only its relation (another target) or parents changed: not modified', () => {
    expect(withState(prod, ['+state:modified'])).toEqual([]);
    const otherTarget = written(
      semanticModel({
        node_relation: {
          alias: 'orders',
          schema_name: 'ci_42',
          database: 'dev',
          relation_name: 'ci_42.orders',
        },
      }),
      savedQuery(),
    );
    expect(withState(otherTarget, ['+state:modified'])).toEqual([]);
  });

  it("+state:modified after a semantic model's or a saved query's change selects what it is built on", () => {
    const dimensionAdded = written(
      semanticModel({
        dimensions: [
          { name: 'status', type: 'categorical' },
          { name: 'channel', type: 'categorical' },
        ],
      }),
      savedQuery(),
    );
    expect(withState(dimensionAdded, ['+state:modified'])).toEqual(['orders']);
    expect(withState(dimensionAdded, ['state:modified+'])).toEqual([]);
    const whereChanged = written(
      semanticModel(),
      savedQuery({
        query_params: {
          metrics: ['revenue'],
          group_by: [],
          where: ["{{ Dimension('order__status') }} = 'paid'"],
        },
      }),
    );
    expect(withState(whereChanged, ['+state:modified'])).toEqual(['orders']);
    // A new one is new, not modified (same_contents(None) is True).
    const fresh = written(semanticModel(), savedQuery());
    const before = written(semanticModel(), savedQuery());
    delete (before['saved_queries'] as Entry)['saved_query.shop.weekly'];
    expect(withState(fresh, ['+state:modified'], before)).toEqual([]);
    expect(withState(fresh, ['+state:new'], before)).toEqual(['orders']);
  });
});
