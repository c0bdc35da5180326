// dbt's node selection as `dbt ls` resolves it: @ (with the selected node's own parents), file: by name,
// source:, state: against another manifest, and a selection matching nothing; on hand-written manifests and
// on the real manifests of ../shared/fixtures, whose own parent_map and child_map (written by dbt) say what
// dbt's graph is.
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DbtSelectionError, declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { selectNodes, selectionReads } from '../../../src/core/dbt/select.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, genericTest, graphNode, manifest, model, source as sourceTable } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

type Entry = Record<string, unknown>;

const source = (name: string, table: string): Entry =>
  sourceTable(name, table, {
    original_file_path: 'models/sources.yml',
    schema: 'raw',
    identifier: table,
    columns: {},
  });

const withSources = (m: Entry, ...sources: Entry[]): Entry => ({
  ...m,
  sources: Object.fromEntries(sources.map((s) => [s['unique_id'] as string, s])),
});

const stgClaims = model('stg_claims', {
  folders: ['staging'],
  columns: columns({ id: 'int' }),
  depends_on: { nodes: ['source.shop.raw.claims'] },
});
const dimPlan = model('dim_plan', { folders: ['marts'], columns: columns({ id: 'int' }) });
const dimDate = model('dim_date', { folders: ['marts'], columns: columns({ id: 'int' }) });
const fctClaim = model('fct_claim', {
  folders: ['marts'],
  columns: columns({ id: 'int', plan_id: 'int' }),
  depends_on: { nodes: ['model.shop.stg_claims'] },
});
const report = model('claims_report', {
  folders: ['marts'],
  columns: columns({ id: 'int' }),
  depends_on: { nodes: ['model.shop.fct_claim', 'model.shop.dim_date'] },
});
const planTest = genericTest(
  'relationships',
  'model.shop.fct_claim',
  { to: "ref('dim_plan')", field: 'id' },
  { column: 'plan_id', dependsOn: ['model.shop.fct_claim', 'model.shop.dim_plan'] },
);
const m = withSources(
  manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest),
  source('raw', 'claims'),
  source('raw', 'plans'),
);

const names = (select: string[], state?: Entry, project: Entry = m) =>
  declareDbtProject({ manifest: project, ...(state === undefined ? {} : { state }) }, { select }, dbtReader)
    .declarations.map((d) => d.name)
    .sort();

describe('selectors as dbt ls resolves them', () => {
  it("@model: the model, its children, and the parents of both (the model's own parent too)", () => {
    // The relationships test is a child of fct_claim in dbt's graph: its other parent, dim_plan, is in.
    expect(names(['@fct_claim'])).toEqual([
      'claims_report',
      'dim_date',
      'dim_plan',
      'fct_claim',
      'stg_claims',
    ]);
    expect(names(['@claims_report'])).toEqual(['claims_report', 'dim_date', 'fct_claim', 'stg_claims']);
  });

  it('file: by the file name, with or without its extension; a bare name.sql is a file name', () => {
    expect(names(['file:dim_date.sql'])).toEqual(['dim_date']);
    expect(names(['dim_date.sql'])).toEqual(['dim_date']);
    expect(names(['file:dim_date'])).toEqual(['dim_date']);
    expect(names(['file:dim_*.sql'])).toEqual(['dim_date', 'dim_plan']);
    expect(names(['models/marts/dim_date.sql'])).toEqual(['dim_date']);
    expect(names(['path:models/marts/dim_date.sql'])).toEqual(['dim_date']);
    // dbt's file: compares the file's name alone: a path selects nothing, with a warning saying path: does.
    const byPath = declareDbtProject(
      { manifest: m },
      { select: ['file:models/marts/dim_date.sql'] },
      dbtReader,
    );
    expect(byPath.declarations).toEqual([]);
    expect(byPath.warnings).toContainEqual(
      expect.stringMatching(
        /--select file:models\/marts\/dim_date\.sql matches no enabled model.*path: selects by path/,
      ),
    );
  });

  it('source: selects the source, and + around it its children', () => {
    expect(names(['source:raw.claims+'])).toEqual(['claims_report', 'fct_claim', 'stg_claims']);
    expect(names(['source:raw+1'])).toEqual(['stg_claims']);
    expect(names(['source:shop.raw.claims+', 'dim_plan'])).toEqual([
      'claims_report',
      'dim_plan',
      'fct_claim',
      'stg_claims',
    ]);
    expect(names(['+source:raw.claims'])).toEqual([]);
    expect(() => names(['source:a.b.c.d'])).toThrow(DbtSelectionError);
  });
});

describe('which nodes each method searches, as dbt does', () => {
  const seed = (name: string): Entry => ({
    ...model(name),
    unique_id: `seed.shop.${name}`,
    resource_type: 'seed',
    original_file_path: `seeds/${name}.csv`,
  });
  const stgOrders = model('stg_orders', { depends_on: { nodes: ['source.shop.ecom.raw_orders'] } });
  const project = withSources(manifest(seed('raw_orders'), stgOrders), source('ecom', 'raw_orders'));

  const selected = (select: string) => selectNodes(readManifest(project), { select: [select] });

  it('a name or fqn: is searched among the nodes, not the sources: the seed, not the source of its name', () => {
    expect(selected('raw_orders+')).toEqual(['seed.shop.raw_orders']);
    expect(selected('fqn:raw_orders+')).toEqual(['seed.shop.raw_orders']);
    expect(selected('source:ecom+')).toEqual(['model.shop.stg_orders']);
    expect(selected('path:models/sources.yml+')).toEqual(['model.shop.stg_orders']);
  });

  // dbt 1.6.4 made resource_type: search its all_nodes, sources and exposures too (dbt-core #8589, backported
  // to 1.6.4; dbt-core #8730: "resource_type:source+" selected nothing on 1.6.3 and 1.5.9, works on 1.6.5 and
  // 1.7.8, docs.getdbt.com #5003 and #6115). Before, it searched the manifest's nodes only.
  it('resource_type:source selects the sources from dbt 1.6.4, and + their children; not before', () => {
    expect(selected('resource_type:source+')).toEqual(['model.shop.stg_orders']);
    const old = { ...project, metadata: { ...(project['metadata'] as Entry), dbt_version: '1.6.3' } };
    expect(selectNodes(readManifest(old), { select: ['resource_type:source+'] }, () => {})).toEqual([]);
  });

  it(
    'balboa (dbt 1.8.8): resource_type:source+ is source:*+, +resource_type:exposure is +exposure:*',
    needs(noSharedFixtures),
    () => {
      const balboa = readManifest(
        JSON.parse(
          readFileSync(`${sharedFixturesDir}real/dbt/balboa_snowflake_1.8.8.manifest.json`, 'utf8'),
        ) as Entry,
      );
      const chosen = (select: string) => selectNodes(balboa, { select: [select] });
      expect(chosen('source:*+').length).toBeGreaterThan(10);
      expect(chosen('resource_type:source+')).toEqual(chosen('source:*+'));
      expect(chosen('+exposure:*').length).toBeGreaterThan(0);
      expect(chosen('+resource_type:exposure')).toEqual(chosen('+exposure:*'));
    },
  );
});

describe('config.materialized: and resource_type: compare the value as it is, as dbt does (no glob)', () => {
  const table = model('fct_sales', { config: { enabled: true, materialized: 'table' } });
  const incremental = model('fct_events', { config: { enabled: true, materialized: 'incremental' } });
  const seed: Entry = { ...model('countries'), unique_id: 'seed.shop.countries', resource_type: 'seed' };
  const project = readManifest(manifest(table, incremental, seed));
  const selected = (select: string) => selectNodes(project, { select: [select] });

  it('config.materialized: the one materialization named; a pattern matches nothing', () => {
    expect(selected('config.materialized:table')).toEqual(['model.shop.fct_sales']);
    expect(selected('config.materialized:incremental')).toEqual(['model.shop.fct_events']);
    expect(selected('config.materialized:*')).toEqual([]);
    expect(selected('config.materialized:tab*')).toEqual([]);
  });

  it("resource_type: one of dbt's resource types; any other (a pattern) is an error, as in dbt", () => {
    expect(selected('resource_type:seed')).toEqual(['seed.shop.countries']);
    expect(selected('resource_type:model')).toEqual(['model.shop.fct_sales', 'model.shop.fct_events']);
    expect(() => selected('resource_type:*')).toThrow(DbtSelectionError);
    expect(() => selected('resource_type:mod*')).toThrow(
      /resource_type:mod\*: dbt's resource types are .*model/,
    );
  });

  // dbt 1.11's user-defined functions live in the manifest's `functions`; a model calling one
  // (`{{ function('area') }}`) lists it in its depends_on, and resource_type:function selects them (dbt-core
  // #11958, #12054).
  const udfManifest = (version: string): Entry => {
    const fn = (name: string, calls: string[]) =>
      graphNode('function', name, {
        original_file_path: `functions/${name}.sql`,
        tags: [],
        config: { enabled: true, type: 'scalar' },
        depends_on: { nodes: calls, macros: [] },
      });
    const area = fn('area', ['function.shop.pi']);
    const pi = fn('pi', []);
    const m = manifest(
      model('stg_circles'),
      model('fct_circles', { depends_on: { nodes: ['model.shop.stg_circles', 'function.shop.area'] } }),
    );
    (m['metadata'] as Entry)['dbt_version'] = version;
    return { ...m, functions: { 'function.shop.area': area, 'function.shop.pi': pi } };
  };

  it("resource_type:function selects dbt 1.11's user-defined functions, and + walks from them to the models that call them", () => {
    const read = readManifest(udfManifest('1.11.2'));
    expect(selectNodes(read, { select: ['resource_type:function+'] })).toEqual(['model.shop.fct_circles']);
    const warned: string[] = [];
    expect(selectNodes(read, { select: ['resource_type:function'] }, (w) => warned.push(w))).toEqual([]);
    expect(warned.join('\n')).toMatch(/resource_type:function matches no enabled model, seed or snapshot/);
    // A function is a parent of the models that call it: 1 step above fct_circles is area, 2 steps pi.
    expect(selectNodes(read, { select: ['+fct_circles'] })).toEqual([
      'model.shop.stg_circles',
      'model.shop.fct_circles',
    ]);
  });

  // dbt 1.11's node selection methods page (docs.getdbt.com, reference/node-selection/methods): a function is
  // selected by its name (`my_function`, `my_function+`), by file: (`file:my_function.sql`, `my_function.sql`)
  // and by path: (`path:functions/my_function.sql`, `functions/my_function.sql`); dbt-core #11968.
  it("a function's name, file and path select it as dbt 1.11 does, and + walks to the models calling it", () => {
    const read = readManifest(udfManifest('1.11.2'));
    for (const selector of [
      'area+',
      'fqn:area+',
      'shop.area+',
      'file:area.sql+',
      'area.sql+',
      'path:functions/area.sql+',
      'functions/area.sql+',
      'path:functions+',
      'pi+',
    ])
      expect(selectNodes(read, { select: [selector] }), selector).toEqual(['model.shop.fct_circles']);
    expect(selectNodes(read, { select: ['fct_circles'], exclude: ['area+'] })).toEqual([]);
  });

  it('before dbt 1.11 no method sees a function: that dbt read none', () => {
    const read = readManifest(udfManifest('1.10.6'));
    for (const selector of ['area+', 'file:area.sql+', 'functions/area.sql+']) {
      const warned: string[] = [];
      expect(
        selectNodes(read, { select: [selector] }, (w) => warned.push(w)),
        selector,
      ).toEqual([]);
      expect(warned.join('\n')).toMatch(/matches no enabled model, seed or snapshot/);
    }
  });

  it('resource_type:function is refused on a manifest of a dbt before 1.11, as that dbt refuses it', () => {
    expect(() =>
      selectNodes(readManifest(udfManifest('1.10.6')), { select: ['resource_type:function+'] }),
    ).toThrow(
      /dbt 1\.10\.6, which wrote the manifest, has no resource type function \(dbt 1\.11 added it\).*its resource types are model, .*semantic_model, fixture$/,
    );
  });
});

describe('names and fqn wildcards, as dbt-core matches them (is_selected_node)', () => {
  const versioned = (name: string, version: number) =>
    model(name, {
      folders: ['marts'],
      version,
      fqn: ['shop', 'marts', name, `v${version}`],
      unique_id: `model.shop.${name}.v${version}`,
    });
  const project = readManifest(
    manifest(
      model('stg_orders', { folders: ['staging'] }),
      model('fct_deep', { folders: ['marts', 'finance', 'sub'] }),
      model('fct_top', { folders: ['marts'] }),
      versioned('dim_accounts', 1),
      versioned('dim_accounts', 2),
      versioned('dim_other', 2),
    ),
  );
  const selected = (select: string) =>
    selectNodes(project, { select: [select] }).map((id) => id.replace('model.shop.', ''));

  it('from the first wildcard part on, one fnmatch over the rest of the fqn, where * spans folders', () => {
    expect(selected('*.sub.*')).toEqual(['fct_deep']);
    expect(selected('marts.*.fct_*')).toEqual(['fct_deep']);
    expect(selected('marts.fct_*')).toEqual(['fct_top']);
    expect(selected('shop.marts.*')).toEqual([
      'fct_deep',
      'fct_top',
      'dim_accounts.v1',
      'dim_accounts.v2',
      'dim_other.v2',
    ]);
    expect(selected('staging')).toEqual(['stg_orders']);
    // A bare name is the fqn's leaf exactly: dbt's stg_* is a pattern over the whole fqn.
    expect(selected('fct_deep')).toEqual(['fct_deep']);
    expect(selected('*fct_deep')).toEqual(['fct_deep']);
  });

  it('a versioned model: by name (every version), name_vN or name.vN; vN alone selects nothing', () => {
    expect(selected('dim_accounts')).toEqual(['dim_accounts.v1', 'dim_accounts.v2']);
    expect(selected('dim_accounts_v2')).toEqual(['dim_accounts.v2']);
    expect(selected('dim_accounts.v2')).toEqual(['dim_accounts.v2']);
    const warnings: string[] = [];
    expect(selectNodes(project, { select: ['v2'] }, (w) => warnings.push(w))).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/--select v2 matches no/)]);
  });

  it('name_vN selects a version from dbt 1.6 (dbt-core #7995); before, only name.vN does, as dbt 1.5 read it (dbt-core #7639)', () => {
    const m = manifest(versioned('dim_accounts', 1), versioned('dim_accounts', 2));
    (m['metadata'] as Entry)['dbt_version'] = '1.5.12';
    const old = readManifest(m);
    const warnings: string[] = [];
    const chosen = (select: string) =>
      selectNodes(old, { select: [select] }, (w) => warnings.push(w)).map((id) =>
        id.replace('model.shop.', ''),
      );
    expect(chosen('dim_accounts.v2')).toEqual(['dim_accounts.v2']);
    expect(chosen('dim_accounts')).toEqual(['dim_accounts.v1', 'dim_accounts.v2']);
    expect(chosen('dim_accounts_v2')).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/--select dim_accounts_v2 matches no/)]);
    (m['metadata'] as Entry)['dbt_version'] = '1.6.0';
    expect(selectNodes(readManifest(m), { select: ['dim_accounts_v2'] })).toEqual([
      'model.shop.dim_accounts.v2',
    ]);
  });
});

describe('path: as dbt globs it (pathlib)', () => {
  const project = readManifest(
    manifest(
      model('stg_orders', { folders: ['staging'], patch_path: 'shop://models/staging/_staging.yml' }),
      model('fct_top', { folders: ['marts'] }),
      model('fct_deep', { folders: ['marts', 'finance', 'sub'] }),
      model('root_model'),
    ),
  );
  const selected = (select: string) =>
    selectNodes(project, { select: [select] }, () => {}).map((id) => id.replace('model.shop.', ''));

  it('* stays within one folder, ** spans folders; a folder selects what is under it', () => {
    expect(selected('path:models/*.sql')).toEqual(['root_model']);
    expect(selected('path:models/*/fct_*.sql')).toEqual(['fct_top']);
    expect(selected('path:models/**/fct_*.sql')).toEqual(['fct_top', 'fct_deep']);
    expect(selected('path:models/marts/*')).toEqual(['fct_top', 'fct_deep']);
    expect(selected('path:models/marts')).toEqual(['fct_top', 'fct_deep']);
    expect(selected('models/*/finance')).toEqual(['fct_deep']);
  });

  it('the .yml that documents a node (its patch_path) selects it too', () => {
    expect(selected('path:models/staging/_staging.yml')).toEqual(['stg_orders']);
    expect(selected('path:models/**/_*.yml')).toEqual(['stg_orders']);
  });

  // dbt before 1.4 skipped every node whose root_path was not the project's (dbt-core #2258, 0.17; the check
  // went with root_path in 1.4, dbt-core #6171): a package's models/staging/ is no path of the project.
  it("before dbt 1.4, a package's nodes are not under the project's paths", () => {
    const m = manifest(
      model('stg_orders', { folders: ['staging'] }),
      model('stg_runs', { folders: ['staging'], package_name: 'dbt_artifacts' }),
    );
    const ids = (version: string, select: string) => {
      (m['metadata'] as Entry)['dbt_version'] = version;
      return selectNodes(readManifest(m), { select: [select] }, () => {});
    };
    for (const select of ['path:models/staging', 'models/staging', 'path:models/*/stg_*.sql'])
      expect(ids('1.3.0', select)).toEqual(['model.shop.stg_orders']);
    expect(ids('1.4.0', 'path:models/staging')).toEqual([
      'model.shop.stg_orders',
      'model.dbt_artifacts.stg_runs',
    ]);
  });

  it(
    "balboa (dbt 1.0.4): path:models is balboa's 25 models, not dbt_artifacts' 28 too",
    needs(noSharedFixtures),
    () => {
      const balboa = readManifest(
        JSON.parse(
          readFileSync(`${sharedFixturesDir}real/dbt/balboa_snowflake_1.0.4.manifest.json`, 'utf8'),
        ) as Entry,
      );
      const warnings: string[] = [];
      const chosen = (select: string) => selectNodes(balboa, { select: [select] }, (w) => warnings.push(w));
      const models = chosen('path:models');
      expect(models).toHaveLength(25);
      expect(models.every((id) => id.startsWith('model.balboa.'))).toBe(true);
      // dbt_artifacts' models/staging/ and models/incremental/: no folder of balboa's, so nothing.
      expect(chosen('models/staging models/incremental')).toEqual([]);
      expect(warnings).toEqual([
        expect.stringMatching(/--select models\/staging matches no/),
        expect.stringMatching(/--select models\/incremental matches no/),
      ]);
    },
  );
});

describe('state: against another manifest (--state)', () => {
  const changed = (node: Entry, change: Entry) => ({ ...node, ...change });
  const prod = manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest);
  const callsCents = (node: Entry) =>
    changed(node, { depends_on: { nodes: [], macros: ['macro.shop.cents'] } });
  const withCentsMacro = (sql: string, ...nodes: Entry[]) => ({
    ...manifest(...nodes),
    macros: {
      'macro.shop.cents': { unique_id: 'macro.shop.cents', macro_sql: sql, depends_on: { macros: [] } },
    },
  });

  it('state:modified is what changed, state:new what is new; + adds the children', () => {
    const pr = manifest(
      stgClaims,
      dimPlan,
      changed(dimDate, { raw_code: 'select 2 as id' }),
      fctClaim,
      report,
      model('dim_member', { columns: columns({ id: 'int' }) }),
    );
    expect(names(['state:modified'], prod, pr)).toEqual(['dim_date', 'dim_member']);
    expect(names(['state:new'], prod, pr)).toEqual(['dim_member']);
    expect(names(['state:modified.body'], prod, pr)).toEqual(['dim_date', 'dim_member']);
    expect(names(['state:modified+'], prod, pr)).toEqual(['claims_report', 'dim_date', 'dim_member']);
    expect(names(['state:modified.configs'], prod, pr)).toEqual(['dim_member']);
  });

  it('configs compare the unrendered config but schema, database and alias (modified.relation)', () => {
    const pr = manifest(
      changed(stgClaims, { unrendered_config: { materialized: 'table' } }),
      changed(dimPlan, { unrendered_config: { schema: 'marts' } }),
      dimDate,
      fctClaim,
      report,
    );
    const base = manifest(
      changed(stgClaims, { unrendered_config: { materialized: 'view' } }),
      changed(dimPlan, { unrendered_config: {} }),
      dimDate,
      fctClaim,
      report,
    );
    expect(names(['state:modified.configs'], base, pr)).toEqual(['stg_claims']);
    expect(names(['state:modified.relation'], base, pr)).toEqual(['dim_plan']);
    expect(names(['state:modified'], base, pr)).toEqual(['dim_plan', 'stg_claims']);
  });

  it("a source's relation, quoting, freshness or external table changed: the source is modified, not for its description", () => {
    const withClaims = (change: Entry) =>
      withSources(manifest(stgClaims, fctClaim, report, dimDate), changed(source('raw', 'claims'), change));
    const base = withClaims({});
    const downstream = ['claims_report', 'fct_claim', 'stg_claims'];
    expect(names(['state:modified+'], withClaims({ schema: 'raw_v2' }), base)).toEqual(downstream);
    expect(names(['state:modified.relation+'], withClaims({ schema: 'raw_v2' }), base)).toEqual(downstream);
    for (const change of [
      { identifier: 'claims_2024' },
      { database: 'archive' },
      { quoting: { identifier: true } },
      { loaded_at_field: 'loaded_at' },
      { freshness: { warn_after: { count: 1, period: 'day' } } },
      { external: { location: 's3://claims/' } },
    ])
      expect(names(['state:modified+'], base, withClaims(change)), JSON.stringify(change)).toEqual(
        downstream,
      );
    expect(names(['state:modified.relation+'], base, withClaims({ quoting: { identifier: true } }))).toEqual(
      [],
    );
    expect(names(['state:modified+'], base, withClaims({ description: 'claims as loaded' }))).toEqual([]);
  });

  // dbt's SourceDefinition.same_contents(None) is True ("existing when it didn't before"): state:modified
  // never selects a new source; modified.configs and .relation (`not old or …`) do.
  it('a source new to the project: new, modified.configs and .relation, but not modified, modified.body, .persisted_descriptions or .contract', () => {
    const base = manifest(stgClaims, fctClaim, report, dimDate);
    const pr = withSources(manifest(stgClaims, fctClaim, report, dimDate), source('raw', 'claims'));
    const downstream = ['claims_report', 'fct_claim', 'stg_claims'];
    expect(names(['state:new+'], base, pr)).toEqual(downstream);
    expect(names(['state:modified.configs+'], base, pr)).toEqual(downstream);
    expect(names(['state:modified.relation+'], base, pr)).toEqual(downstream);
    expect(names(['state:modified+'], base, pr)).toEqual([]);
    for (const selector of [
      'state:modified.body+',
      'state:modified.persisted_descriptions+',
      'state:modified.contract+',
    ])
      expect(names([selector], base, pr), selector).toEqual([]);
  });

  it('configs leave out tags and group, as dbt does (CompareBehavior.Exclude)', () => {
    const base = manifest(
      changed(stgClaims, { unrendered_config: { materialized: 'view' } }),
      changed(dimPlan, { unrendered_config: { materialized: 'table' } }),
    );
    const pr = manifest(
      changed(stgClaims, { unrendered_config: { materialized: 'view', tags: ['nightly'] } }),
      changed(dimPlan, { unrendered_config: { materialized: 'table', group: 'finance' } }),
    );
    expect(names(['state:modified.configs'], base, pr)).toEqual([]);
    expect(names(['state:modified'], base, pr)).toEqual([]);
  });

  it('modified.contract: only when a contract is enforced on either side', () => {
    const enforced = (node: Entry, type: string) =>
      changed(node, {
        config: { enabled: true, materialized: 'table', contract: { enforced: true } },
        columns: columns({ id: type }),
      });
    const base = manifest(enforced(dimDate, 'int'), changed(dimPlan, { columns: columns({ id: 'int' }) }));
    const pr = manifest(
      enforced(dimDate, 'bigint'),
      changed(dimPlan, { columns: columns({ id: 'bigint' }) }),
    );
    expect(names(['state:modified.contract'], base, pr)).toEqual(['dim_date']);
  });

  it('a macro a model calls, changed, makes it modified', () => {
    const withMacros = (sql: string) => withCentsMacro(sql, callsCents(dimDate), dimPlan);
    expect(names(['state:modified'], withMacros('a'), withMacros('b'))).toEqual(['dim_date']);
    expect(names(['state:modified.macros'], withMacros('a'), withMacros('b'))).toEqual(['dim_date']);
    expect(names(['state:modified'], withMacros('a'), withMacros('a'))).toEqual([]);
  });

  it('modified.macros: a new model that calls a changed macro too (dbt looks only at the macros)', () => {
    const base = withCentsMacro('a', callsCents(dimDate));
    const pr = withCentsMacro('b', callsCents(dimDate), callsCents(dimPlan), model('dim_member'));
    expect(names(['state:modified.macros'], base, pr)).toEqual(['dim_date', 'dim_plan']);
  });

  it('a test new or changed: its model is selected (dbt runs the test), + walks from the test as dbt does', () => {
    const notNull = (config: Entry = {}) =>
      genericTest('not_null', 'model.shop.dim_date', {}, { column: 'id', config });
    const base = manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest, notNull());
    const added = manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest, notNull());
    const before = manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest);
    expect(names(['state:new'], before, added)).toEqual(['dim_date']);
    expect(names(['state:modified'], before, added)).toEqual(['dim_date']);
    const warned = manifest(
      stgClaims,
      dimPlan,
      dimDate,
      fctClaim,
      report,
      planTest,
      notNull({ severity: 'warn' }),
    );
    expect(names(['state:modified'], base, warned)).toEqual(['dim_date']);
    expect(names(['state:modified.configs'], base, warned)).toEqual(['dim_date']);
    expect(names(['state:modified'], base, base)).toEqual([]);
    // The test has no children; its parents are its model's (dbt's graph).
    expect(names(['state:modified+'], base, warned)).toEqual(['dim_date']);
    const relationshipWarns = manifest(
      stgClaims,
      dimPlan,
      dimDate,
      fctClaim,
      report,
      { ...planTest, config: { ...(planTest['config'] as Entry), severity: 'warn' } },
      notNull(),
    );
    expect(names(['state:modified'], base, relationshipWarns)).toEqual(['fct_claim']);
    expect(names(['+state:modified'], base, relationshipWarns)).toEqual([
      'dim_plan',
      'fct_claim',
      'stg_claims',
    ]);
    // An unmodified test does not select its modified model's neighbours, nor an unmodified one.
    expect(names(['state:unmodified'], before, added)).toEqual([
      'claims_report',
      'dim_date',
      'dim_plan',
      'fct_claim',
      'stg_claims',
    ]);
  });

  it('--exclude state:modified leaves out a changed test, not its model (dbt still builds the model)', () => {
    const notNull = (config: Entry = {}) =>
      genericTest('not_null', 'model.shop.dim_date', {}, { column: 'id', config });
    const base = manifest(stgClaims, dimPlan, dimDate, fctClaim, report, planTest, notNull());
    const warned = manifest(
      stgClaims,
      dimPlan,
      dimDate,
      fctClaim,
      report,
      planTest,
      notNull({ severity: 'warn' }),
    );
    const excluded = declareDbtProject(
      { manifest: warned, state: base },
      { exclude: ['state:modified'] },
      dbtReader,
    )
      .declarations.map((d) => d.name)
      .sort();
    expect(excluded).toEqual(['claims_report', 'dim_date', 'dim_plan', 'fct_claim', 'stg_claims']);
  });

  it('a test of an older manifest (no attached_node): its model is found from depends_on', () => {
    const old = (config: Entry = {}) => {
      const { attached_node: _attached, ...test } = genericTest(
        'not_null',
        'model.shop.dim_date',
        {},
        { column: 'id', config },
      );
      return test;
    };
    const base = manifest(dimPlan, dimDate, old());
    expect(names(['state:modified'], base, manifest(dimPlan, dimDate, old({ severity: 'warn' })))).toEqual([
      'dim_date',
    ]);
  });

  it('a changed singular test selects the one model it reads', () => {
    const singular = (sql: string): Entry => ({
      unique_id: 'test.shop.assert_dates_past',
      resource_type: 'test',
      name: 'assert_dates_past',
      package_name: 'shop',
      fqn: ['shop', 'assert_dates_past'],
      raw_code: sql,
      depends_on: { nodes: ['model.shop.dim_date'] },
      config: { enabled: true, severity: 'ERROR' },
    });
    const base = manifest(dimPlan, dimDate, singular("select * from {{ ref('dim_date') }} where id < 0"));
    const pr = manifest(dimPlan, dimDate, singular("select * from {{ ref('dim_date') }} where id < 1"));
    expect(names(['state:modified'], base, pr)).toEqual(['dim_date']);
    expect(names(['state:modified.body'], base, pr)).toEqual(['dim_date']);
  });

  it('without --state, or an unknown state selector: a DbtSelectionError saying what to do', () => {
    expect(() => names(['state:modified'])).toThrow(/pass --state DIR/);
    expect(() => names(['state:changed'], prod)).toThrow(/state:modified.body/);
  });
});

const realManifests = noSharedFixtures
  ? []
  : [
      ...readdirSync(`${sharedFixturesDir}dbt/`)
        .filter((f) => f.endsWith('manifest.json'))
        .map((f) => `${sharedFixturesDir}dbt/${f}`),
      `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb/target/manifest.json`,
    ];

describe('on the real manifests', needs(noSharedFixtures), () => {
  it.each(realManifests)(
    '@x is dbt graph children and their parents, by its parent_map/child_map: %s',
    (path) => {
      const raw = JSON.parse(readFileSync(path, 'utf8')) as {
        parent_map: Record<string, string[]>;
        child_map: Record<string, string[]>;
      };
      const parsed = readManifest(raw);
      const declared = [...parsed.nodes.values()].filter(
        (n) => ['model', 'seed', 'snapshot'].includes(n.resourceType) && n.enabled,
      );
      expect(declared.length).toBeGreaterThan(0);
      for (const node of declared) {
        const reach = (from: string[], map: Record<string, string[]>, into: Set<string>) => {
          const pending = [...from];
          while (pending.length > 0) {
            for (const next of map[pending.pop() as string] ?? []) {
              if (into.has(next)) continue;
              pending.push(next);
              into.add(next);
            }
          }
        };
        const children = new Set<string>();
        reach([node.uniqueId], raw.child_map, children);
        const all = new Set([node.uniqueId, ...children]);
        reach([...all], raw.parent_map, all);
        const expected = declared.filter((n) => all.has(n.uniqueId)).map((n) => n.uniqueId);
        expect(selectNodes(parsed, { select: [`@${node.name}`] }).sort(), node.uniqueId).toEqual(
          expected.sort(),
        );
      }
    },
  );

  it("a seed and a source of the same name: a name selects the seed alone (dbt's child_map)", () => {
    const raw = JSON.parse(
      readFileSync(`${sharedFixturesDir}real/dbt/dap_v12_1.12.0.manifest.json`, 'utf8'),
    ) as { child_map: Record<string, string[]> };
    expect(raw.child_map['seed.jaffle_shop.raw_orders']).toEqual([]);
    const parsed = readManifest(raw);
    expect(selectNodes(parsed, { select: ['raw_orders+'] })).toEqual(['seed.jaffle_shop.raw_orders']);
    const everything = selectNodes(parsed, {});
    expect(everything).toHaveLength(19);
    expect(selectNodes(parsed, { exclude: ['raw_customers+'] })).toEqual(
      everything.filter((id) => id !== 'seed.jaffle_shop.raw_customers'),
    );
  });

  it.each(realManifests)(
    'state:modified against itself selects nothing; a changed body selects it: %s',
    (path) => {
      const text = readFileSync(path, 'utf8');
      const prod = JSON.parse(text) as { nodes: Record<string, Entry> };
      const pr = JSON.parse(text) as { nodes: Record<string, Entry> };
      const warnings: string[] = [];
      const parsed = readManifest(pr);
      expect(
        selectNodes(parsed, { select: ['state:modified'] }, (w) => warnings.push(w), readManifest(prod)),
      ).toEqual([]);
      expect(warnings).toEqual([expect.stringMatching(/--select state:modified matches no/)]);
      const [id, node] = Object.entries(pr.nodes).find(([k]) => k.startsWith('model.')) ?? [];
      if (id === undefined || node === undefined) throw new Error('no model');
      node['raw_code'] = `${String(node['raw_code'] ?? node['raw_sql'] ?? '')}\n-- changed`;
      node['raw_sql'] = node['raw_code'];
      node['checksum'] = { name: 'sha256', checksum: 'changed' };
      const again = readManifest(pr);
      const selected = selectNodes(again, { select: ['state:modified'] }, () => {}, readManifest(prod));
      expect(selected).toEqual([id]);
      const downstream = selectNodes(again, { select: ['state:modified+'] }, () => {}, readManifest(prod));
      expect(downstream).toEqual(selectNodes(again, { select: [`${String(node['name'])}+`] }));
    },
  );
});

describe('the tests dbt runs: --exclude of a test and indirect selection', () => {
  const customers = model('customers', { columns: columns({ id: 'int' }) });
  const orders = model('orders', {
    columns: columns({ id: 'int', customer_id: 'int' }),
    depends_on: { nodes: ['model.shop.customers'] },
  });
  const unique = genericTest('unique', 'model.shop.orders', {}, { column: 'id' });
  const notNull = {
    ...genericTest('not_null', 'model.shop.orders', {}, { column: 'customer_id' }),
    tags: ['slow'],
  };
  const toCustomers = genericTest(
    'relationships',
    'model.shop.orders',
    { to: "ref('customers')", field: 'id' },
    { column: 'customer_id', dependsOn: ['model.shop.orders', 'model.shop.customers'] },
  );
  const shop = manifest(customers, orders, unique, notNull, toCustomers);
  const selectors = (definition: unknown): Entry => ({
    ...shop,
    selectors: { pick: { name: 'pick', definition } },
  });
  const ordersTests = (
    selection: Parameters<typeof declareDbtProject>[1],
    project: Entry = shop,
  ): { mapped: string[]; excluded: string[] } => {
    const declared = declareDbtProject({ manifest: project }, selection, dbtReader).declarations.find(
      (d) => d.name === 'orders',
    );
    const short = (id: string) => id.split('.')[2] ?? id;
    return {
      mapped: [...new Set(declared?.mappedTests.map((t) => short(t.test)))].sort(),
      excluded: (declared?.notMappedTests ?? [])
        .filter((t) => t.excluded === true && /^excluded by the selection/.test(t.reason))
        .map((t) => short(t.test))
        .sort(),
    };
  };
  const all = ['not_null_orders_customer_id', 'relationships_orders_customer_id', 'unique_orders_id'];

  it('every test of a selected model is a rule by default (eager)', () => {
    expect(ordersTests({ select: ['orders'] })).toEqual({ mapped: all, excluded: [] });
  });

  it('--exclude of a test by name, test_name:, tag: or test_type: leaves it out of the rules, listed as excluded', () => {
    const only = (mapped: string[], excluded: string[]) => ({ mapped, excluded });
    expect(ordersTests({ select: ['orders'], exclude: ['not_null_orders_customer_id'] })).toEqual(
      only(['relationships_orders_customer_id', 'unique_orders_id'], ['not_null_orders_customer_id']),
    );
    expect(ordersTests({ select: ['orders'], exclude: ['test_name:not_null'] })).toEqual(
      only(['relationships_orders_customer_id', 'unique_orders_id'], ['not_null_orders_customer_id']),
    );
    expect(ordersTests({ exclude: ['tag:slow'] })).toEqual(
      only(['relationships_orders_customer_id', 'unique_orders_id'], ['not_null_orders_customer_id']),
    );
    expect(ordersTests({ select: ['orders'], exclude: ['test_type:generic'] })).toEqual(only([], all));
    expect(ordersTests({ select: ['orders'], exclude: ['test_type:singular'] })).toEqual(only(all, []));
    // dbt's eager exclusion: excluding customers leaves out every test that reads it.
    expect(ordersTests({ exclude: ['customers'] })).toEqual(
      only(['not_null_orders_customer_id', 'unique_orders_id'], ['relationships_orders_customer_id']),
    );
  });

  it("--exclude under cautious or buildable: dbt 1.5+ excludes in the flag's mode, before 1.5 eagerly", () => {
    // The relationships test reads orders and customers; customers is excluded. From dbt 1.5 the exclusion's
    // criteria have the flag's mode: under cautious the test is only held back by customers, not excluded,
    // and stays selected (orders is); before 1.5 the exclusion was eager, and took it out.
    const at = (version: string) => {
      const m = structuredClone(shop);
      (m['metadata'] as Entry)['dbt_version'] = version;
      return m;
    };
    const selection = { select: ['orders', 'customers'], exclude: ['customers'] };
    for (const mode of ['cautious', 'buildable'] as const) {
      expect(ordersTests({ ...selection, indirectSelection: mode }, at('1.8.0')).excluded).toEqual([]);
      expect(ordersTests({ ...selection, indirectSelection: mode }, at('1.4.9')).excluded).toEqual([
        'relationships_orders_customer_id',
      ]);
    }
    // Eager (the default) excludes it in every version.
    expect(ordersTests(selection, at('1.8.0')).excluded).toEqual(['relationships_orders_customer_id']);
  });

  it('--indirect-selection cautious, buildable and empty run the tests dbt runs', () => {
    expect(ordersTests({ select: ['orders'], indirectSelection: 'cautious' })).toEqual({
      mapped: ['not_null_orders_customer_id', 'unique_orders_id'],
      excluded: ['relationships_orders_customer_id'],
    });
    expect(ordersTests({ select: ['orders', 'customers'], indirectSelection: 'cautious' })).toEqual({
      mapped: all,
      excluded: [],
    });
    // customers is a parent of orders: buildable runs the test.
    expect(ordersTests({ select: ['orders'], indirectSelection: 'buildable' })).toEqual({
      mapped: all,
      excluded: [],
    });
    expect(ordersTests({ select: ['orders'], indirectSelection: 'empty' })).toEqual({
      mapped: [],
      excluded: all,
    });
    expect(ordersTests({ select: ['orders', 'unique_orders_id'], indirectSelection: 'empty' })).toEqual({
      mapped: ['unique_orders_id'],
      excluded: ['not_null_orders_customer_id', 'relationships_orders_customer_id'],
    });
  });

  it('before dbt 1.8 a YAML criterion without indirect_selection is eager whatever the flag (dbt-core #9776)', () => {
    const plain = selectors({ method: 'fqn', value: 'orders' });
    const at = (version: string): Entry => ({
      ...plain,
      metadata: { ...(plain['metadata'] as Entry), dbt_version: version },
    });
    const warnings: string[] = [];
    const run = (version: string) => {
      const declared = declareDbtProject(
        { manifest: at(version) },
        { selector: 'pick', indirectSelection: 'cautious' },
        dbtReader,
      );
      warnings.push(...declared.warnings);
      return declared.declarations
        .find((d) => d.name === 'orders')
        ?.notMappedTests.filter((t) => t.excluded === true)
        .map((t) => t.test.split('.')[2]);
    };
    expect(run('1.7.19')).toEqual([]);
    expect(warnings.join('\n')).toMatch(/ignores --indirect-selection cautious beside a YAML selector/);
    expect(run('1.8.0')).toEqual(['relationships_orders_customer_id']);
    // dbt 0.20 and 0.21: a criterion was not greedy unless it said so.
    expect(run('0.21.1')).toEqual(['relationships_orders_customer_id']);
  });

  it("a YAML selector's indirect_selection and exclude decide as dbt's; without it, the flag's mode", () => {
    const cautious = selectors({ method: 'fqn', value: 'orders', indirect_selection: 'cautious' });
    expect(ordersTests({ selector: 'pick' }, cautious).excluded).toEqual([
      'relationships_orders_customer_id',
    ]);
    const plain = selectors({ method: 'fqn', value: 'orders' });
    expect(ordersTests({ selector: 'pick' }, plain).excluded).toEqual([]);
    expect(ordersTests({ selector: 'pick', indirectSelection: 'cautious' }, plain).excluded).toEqual([
      'relationships_orders_customer_id',
    ]);
    const excluding = selectors({
      union: ['orders', { exclude: [{ method: 'test_name', value: 'unique' }] }],
    });
    expect(ordersTests({ selector: 'pick' }, excluding).excluded).toEqual(['unique_orders_id']);
    expect(() =>
      ordersTests(
        { selector: 'pick' },
        selectors({ method: 'fqn', value: 'orders', indirect_selection: 'lazy' }),
      ),
    ).toThrow(/indirect_selection must be one of eager, cautious, buildable, empty/);
  });

  it('an unknown test_type: is refused as dbt refuses it', () => {
    expect(() => ordersTests({ exclude: ['test_type:fancy'] })).toThrow(DbtSelectionError);
  });

  const writtenBy = (dbtVersion: string, project: Entry = shop): Entry => ({
    ...project,
    metadata: { ...(project['metadata'] as Entry), dbt_version: dbtVersion },
  });

  it('test_type:data is every data test from dbt 1.8, singular ones before', () => {
    expect(ordersTests({ select: ['orders'], exclude: ['test_type:data'] })).toEqual({
      mapped: [],
      excluded: all,
    });
    expect(ordersTests({ select: ['orders'], exclude: ['test_type:data'] }, writtenBy('1.7.19'))).toEqual({
      mapped: all,
      excluded: [],
    });
    expect(ordersTests({ select: ['orders'], exclude: ['test_type:data'] }, writtenBy('0.19.2'))).toEqual({
      mapped: all,
      excluded: [],
    });
  });

  it("a manifest of dbt 0.20 or 0.21 selects tests cautiously unless told (their default), 0.21's greedy: eagerly", () => {
    const cautiously = {
      mapped: ['not_null_orders_customer_id', 'unique_orders_id'],
      excluded: ['relationships_orders_customer_id'],
    };
    expect(ordersTests({ select: ['orders'] }, writtenBy('0.21.1'))).toEqual(cautiously);
    expect(ordersTests({ select: ['orders'] }, writtenBy('0.20.0rc1'))).toEqual(cautiously);
    expect(
      ordersTests({ select: ['orders'], indirectSelection: 'eager' }, writtenBy('0.21.1')).excluded,
    ).toEqual([]);
    expect(ordersTests({ select: ['orders'] }, writtenBy('0.19.2')).excluded).toEqual([]);
    expect(ordersTests({ select: ['orders'] }, writtenBy('1.0.0')).excluded).toEqual([]);
    const greedy = writtenBy('0.21.1', selectors({ method: 'fqn', value: 'orders', greedy: true }));
    expect(ordersTests({ selector: 'pick' }, greedy).excluded).toEqual([]);
    const notGreedy = writtenBy('0.21.1', selectors({ method: 'fqn', value: 'orders', greedy: false }));
    expect(ordersTests({ selector: 'pick' }, notGreedy).excluded).toEqual([
      'relationships_orders_customer_id',
    ]);
    // The key means nothing to dbt 1.0 and later.
    const ignored = selectors({ method: 'fqn', value: 'orders', greedy: false });
    expect(ordersTests({ selector: 'pick' }, ignored).excluded).toEqual([]);
  });
});

describe("fnmatch's character classes, as dbt's globs read them", () => {
  const tagged = readManifest(
    manifest(
      model('nightly_orders', { tags: ['nightly'] }),
      model('caret_orders', { tags: ['^ightly'] }),
      model('bracket_orders', { tags: [']ightly'] }),
    ),
  );
  const tags = (selector: string) =>
    selectNodes(tagged, { select: [selector] })
      .map((id) => id.split('.')[2])
      .sort();

  it('[!…] negates; [^…] is a class holding ^; a ] first in a class is one of its characters', () => {
    expect(tags('tag:[!x]ightly')).toEqual(['bracket_orders', 'caret_orders', 'nightly_orders']);
    expect(tags('tag:[!n]ightly')).toEqual(['bracket_orders', 'caret_orders']);
    expect(tags('tag:[^x]ightly')).toEqual(['caret_orders']);
    expect(tags('tag:[]x]ightly')).toEqual(['bracket_orders']);
    expect(tags('tag:[!]]ightly')).toEqual(['caret_orders', 'nightly_orders']);
    expect(tags('tag:[n]ightly')).toEqual(['nightly_orders']);
  });
});

describe('the methods of dbt before 1.5 compare exactly (wildcards came in 1.5, dbt-core #6598)', () => {
  const project = (dbtVersion: string) => {
    const m = manifest(
      model('nightly_orders', { tags: ['nightly'] }),
      model('star_orders', { tags: ['nightly*'] }),
      model('fct_revenue', { folders: ['marts', 'finance'] }),
    );
    (m['metadata'] as Record<string, unknown>)['dbt_version'] = dbtVersion;
    return readManifest(m);
  };
  const selected = (selector: string, version: string) =>
    selectNodes(project(version), { select: [selector] })
      .map((id) => id.replace('model.shop.', ''))
      .sort();

  it('tag:, package: and a name with a wildcard inside a part select only their exact text before 1.5', () => {
    expect(selected('tag:nightly*', '1.4.9')).toEqual(['star_orders']);
    expect(selected('tag:nightly*', '1.5.0')).toEqual(['nightly_orders', 'star_orders']);
    expect(selected('package:sh*', '1.4.9')).toEqual([]);
    expect(selected('package:sh*', '1.5.0')).toHaveLength(3);
    expect(selected('marts.finance.fct_*', '0.19.2')).toEqual([]);
    expect(selected('marts.finance.fct_*', '1.8.0')).toEqual(['fct_revenue']);
    expect(selected('*_orders', '1.3.2')).toEqual([]);
    expect(selected('*_orders', '1.10.1')).toEqual(['nightly_orders', 'star_orders']);
  });

  it('a whole dotted part `*` selected whatever followed it then, as now', () => {
    for (const version of ['1.4.9', '1.8.0']) {
      expect(selected('marts.*', version)).toEqual(['fct_revenue']);
      expect(selected('shop.marts.*.nothing', version)).toEqual(version === '1.4.9' ? ['fct_revenue'] : []);
      expect(selected('*', version)).toHaveLength(3);
    }
  });
});

describe("dbt 1.12's selector: method in --select and --exclude", () => {
  const project = (dbtVersion: string) => {
    const m = manifest(
      model('stg_orders', { tags: ['nightly'] }),
      model('orders', { depends_on: { nodes: ['model.shop.stg_orders'] } }),
      model('customers', { config: { materialized: 'view', meta: { owner: 'bob' } } }),
    );
    (m['metadata'] as Record<string, unknown>)['dbt_version'] = dbtVersion;
    m['selectors'] = {
      nightly: { name: 'nightly', definition: { method: 'tag', value: 'nightly' } },
      owned: { name: 'owned', definition: { method: 'config.meta.owner', value: 'bob' } },
      loop: { name: 'loop', definition: 'selector:loop' },
    };
    return readManifest(m);
  };
  const selected = (select: string[], exclude: string[] = [], version = '1.12.0') =>
    selectNodes(project(version), { select, exclude }).map((id) => id.replace('model.shop.', ''));

  it('selects what the named selector selects; graph operators and set operators apply to it', () => {
    expect(selected(['selector:nightly'])).toEqual(['stg_orders']);
    expect(selected(['selector:nightly+'])).toEqual(['stg_orders', 'orders']);
    expect(selected(['selector:nightly+,orders'])).toEqual(['orders']);
    expect(selected(['selector:owned'])).toEqual(['customers']);
    expect(selected(['*'], ['selector:nightly'])).toEqual(['orders', 'customers']);
    // A reader keeps the configs the named selector compares.
    expect(selectionReads({ select: ['selector:owned+'] }, project('1.12.0').selectors).configs).toBe(true);
    expect(selectionReads({ select: ['selector:nightly'] }, project('1.12.0').selectors).configs).toBe(false);
  });

  it('an unknown selector, one naming itself, or a manifest of dbt before 1.12: a DbtSelectionError', () => {
    expect(() => selected(['selector:nope'])).toThrow(/no selector "nope".*names nightly, owned, loop/);
    expect(() => selected(['selector:loop'])).toThrow(/names itself/);
    expect(() => selected(['selector:nightly'], [], '1.11.2')).toThrow(
      /dbt 1\.11\.2, which wrote the manifest, has no selector: method.*--selector nightly/,
    );
  });
});

describe('the methods of the dbt that wrote the manifest (metadata.dbt_version), as that dbt reads them', () => {
  const project = (dbtVersion: string) => {
    const m = manifest(
      model('orders', {
        access: 'public',
        config: { enabled: true, materialized: 'table', group: 'finance' },
      }),
      model('customers', { config: { enabled: true, materialized: 'view', group: 'marketing' } }),
    );
    (m['metadata'] as Record<string, unknown>)['dbt_version'] = dbtVersion;
    return readManifest(m);
  };
  const selected = (version: string, select: string[], exclude: string[] = [], warn = (_: string) => {}) =>
    selectNodes(project(version), { select, exclude }, warn).map((id) => id.replace('model.shop.', ''));

  it('group: compares the group exactly before dbt 1.8, as a glob from 1.8 (dbt-core #9811)', () => {
    for (const version of ['1.5.0', '1.7.19']) {
      expect(selected(version, ['group:finance'])).toEqual(['orders']);
      expect(selected(version, ['group:fin*'])).toEqual([]);
      expect(selected(version, ['group:*'])).toEqual([]);
    }
    expect(selected('1.8.0', ['group:fin*'])).toEqual(['orders']);
    expect(selected('1.10.1', ['group:*'])).toEqual(['orders', 'customers']);
  });

  it('group: globs from dbt 1.8.0b3, the prerelease that added it (its changelog); 1.8.0b1 and b2 compared exactly', () => {
    for (const version of ['1.8.0a1', '1.8.0b1', '1.8.0b2']) {
      expect([version, selected(version, ['group:fin*'])]).toEqual([version, []]);
      expect([version, selected(version, ['group:finance'])]).toEqual([version, ['orders']]);
    }
    for (const version of ['1.8.0b3', '1.8.0rc1', '1.8.1', '2.0.0-beta.46'])
      expect([version, selected(version, ['group:fin*'])]).toEqual([version, ['orders']]);
  });

  it('file: is the file name exactly from dbt 1.2, its stem too from 1.6; a plain orders.sql is a name before 1.2', () => {
    for (const version of ['1.2.0', '1.5.12']) {
      expect(selected(version, ['file:orders.sql'])).toEqual(['orders']);
      expect(selected(version, ['file:orders'])).toEqual([]);
      expect(selected(version, ['orders.sql'])).toEqual(['orders']);
    }
    expect(selected('1.6.0', ['file:orders'])).toEqual(['orders']);
    expect(selected('1.12.0', ['file:orders.sql'])).toEqual(['orders']);
    // dbt 1.1 had no file method: `orders.sql` is an fqn, which no model has (a warning says it selects nothing).
    const warnings: string[] = [];
    expect(selected('1.1.5', ['orders.sql'], [], (w) => warnings.push(w))).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/--select orders\.sql matches no enabled model/)]);
  });

  it.each([
    ['metric:revenue', '0.21.1', '1.0'],
    ['file:orders.sql', '1.1.5', '1.2'],
    ['file:orders', '0.19.2', '1.2'],
    ['source_status:fresher', '1.0.9', '1.1'],
    ['group:finance', '1.4.9', '1.5'],
    ['access:public', '1.4.9', '1.5'],
    ['version:latest', '1.4.9', '1.5'],
    ['semantic_model:orders', '1.5.12', '1.6.4'],
    // dbt-core #8589 reached 1.6 in its 1.6.4 patch (dbt-core #8749): 1.6.0 to 1.6.3 refuse the method.
    ['semantic_model:orders', '1.6.3', '1.6.4'],
    // dbt-core #4017 added result: after 0.21.0; dbt 1.0 is the first to read it.
    ['result:error', '0.21.1', '1.0'],
    ['saved_query:orders', '1.6.19', '1.7'],
    ['unit_test:orders', '1.7.19', '1.8'],
    ['selector:nightly', '0.21.1', '1.12'],
  ])(
    '%s on a manifest of dbt %s is refused, naming the dbt that added the method (%s), as dbt refuses it',
    (atom, version, added) => {
      const method = atom.slice(0, atom.indexOf(':'));
      const refusal = new RegExp(
        `dbt ${version.replace(/\./g, '\\.')}, which wrote the manifest, has no ${method}: method \\(dbt ${added.replace('.', '\\.')} added it`,
      );
      const warnings: string[] = [];
      expect(() => selected(version, [`${atom}+`], [], (w) => warnings.push(w))).toThrow(DbtSelectionError);
      expect(() => selected(version, [`${atom}+`])).toThrow(refusal);
      expect(() => selected(version, ['*'], [atom])).toThrow(refusal);
      expect(warnings).toEqual([]);
    },
  );

  it('a name of Object.prototype (constructor:, toString:) is a method gds does not know, not one dbt added', () => {
    for (const version of ['0.21.1', '1.12.0'])
      for (const atom of ['constructor:x', 'toString:x', '__proto__:x'])
        expect(() => selected(version, [atom])).toThrow(/gds does not know the selector method/);
  });

  // dbt's resource_type method is NodeType(value), which raises on a type that dbt's NodeType did not have yet:
  // groups 1.5, semantic models 1.6, saved queries 1.7 (the manifests of 1.4, 1.5, 1.6 and 1.7 add those
  // sections in turn), unit tests and their fixtures 1.8.
  it.each([
    ['group', '1.4.9', '1.5.0'],
    ['semantic_model', '1.5.12', '1.6.0'],
    ['saved_query', '1.6.19', '1.7.0'],
    ['unit_test', '1.7.19', '1.8.0'],
    ['fixture', '1.7.19', '1.8.0'],
  ])(
    'resource_type:%s is refused on a manifest of dbt %s and read from %s, as dbt',
    (type, before, since) => {
      const refusal = new RegExp(
        `resource_type:${type}: dbt ${before.replace(/\./g, '\\.')}, which wrote the manifest, has no resource type ${type}`,
      );
      expect(() => selected(before, [`+resource_type:${type}`])).toThrow(refusal);
      expect(() => selected(before, ['*'], [`resource_type:${type}`])).toThrow(refusal);
      const warnings: string[] = [];
      expect(selected(since, [`resource_type:${type}`, 'orders'], [], (w) => warnings.push(w))).toEqual([
        'orders',
      ]);
      expect(warnings).toEqual([expect.stringMatching(/matches no enabled model/)]);
    },
  );

  it('the dbt that added a method reads it', () => {
    expect(selected('1.5.0', ['group:finance', 'access:public'])).toEqual(['orders']);
    expect(selected('1.5.0', ['version:none'])).toEqual(['orders', 'customers']);
    expect(selected('1.2.0', ['file:customers.sql'])).toEqual(['customers']);
  });
});
