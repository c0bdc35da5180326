// dbt Fusion writes some generic tests without test_metadata, or with its kwargs stripped (dbt-fusion #1575,
// #1243). A not_null or unique test Fusion named as dbt names one (`<test>_<model>_<column>`) means the same
// rule as the test dbt-core writes; one whose arguments Fusion left out (accepted_values' values,
// relationships' to and field) is refused, never turned into another predicate.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/core/dbt/manifest.js';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import { selectDbt } from '../../../src/core/dbt/select.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import type { DbtDeclaration } from '../../../src/core/dbt/types.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, genericTest, manifest, model, source } from './helpers.js';

type Entry = Record<string, unknown>;

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

const orders = model('orders', {
  columns: columns({ order_id: 'integer', status: 'text' }),
});

/** A test node as the Fusion fixture writes one: no test_metadata, no column_name, under generic_tests/. */
function fusionTest(name: string, extra: Entry = {}): Entry {
  return {
    unique_id: `test.shop.${name}`,
    resource_type: 'test',
    name,
    package_name: 'shop',
    fqn: ['shop', name],
    path: `generic_tests/${name}.sql`,
    original_file_path: `target/generic_tests/${name}.sql`,
    raw_code: '',
    depends_on: { macros: [], nodes: ['model.shop.orders'] },
    config: { enabled: true, error_if: '!= 0', fail_calc: 'count(*)', warn_if: '!= 0' },
    ...extra,
  };
}

/** A macro of the manifest, `pkg`'s `name` (a test macro's is `test_<test>`). */
const macro = (pkg: string, name: string) => ({
  unique_id: `macro.${pkg}.${name}`,
  resource_type: 'macro',
  name,
  package_name: pkg,
  macro_sql: '',
  depends_on: { macros: [] },
});

function declare(version: string, ...tests: Entry[]): DbtDeclaration {
  const m = manifest(orders, ...tests);
  (m['metadata'] as Entry)['dbt_version'] = version;
  const [declaration] = declareDbtProject({ manifest: m }, { select: ['orders'] }, dbtReader).declarations;
  if (!declaration) throw new Error('no declaration');
  return declaration;
}

/** What a user notices of a declaration's tests: the rules made, the tests refused, the gate1.yml checks. */
const rules = (d: DbtDeclaration) => ({
  mapped: d.mappedTests.map((t) => t.rule),
  required: d.columns.filter((c) => c.required).map((c) => c.name),
  gate1: (d.gate1Yaml ?? '').replace(/^#.*\n/gm, '').replace(/ *# dbt test .*$/gm, ''),
});

describe('generic tests dbt Fusion wrote without test_metadata or kwargs', () => {
  it('not_null and unique without test_metadata mean the rules the same tests of dbt-core make', () => {
    const core = declare(
      '1.10.6',
      genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id' }),
      genericTest('unique', 'model.shop.orders', {}, { column: 'order_id' }),
    );
    const fusion = declare(
      '2.0.0-beta.46',
      fusionTest('not_null_orders_order_id'),
      fusionTest('unique_orders_order_id'),
    );
    expect(rules(fusion)).toEqual(rules(core));
    expect(fusion.mappedTests).toEqual([
      { test: 'test.shop.not_null_orders_order_id', rule: 'required:order_id' },
      { test: 'test.shop.unique_orders_order_id', rule: 'grainKey' },
    ]);
    expect(fusion.notMappedTests).toEqual([]);
  });

  it('test_metadata without kwargs: the column from column_name, else from the name dbt gave the test', () => {
    const withoutKwargs = (name: string, column: string | null) =>
      fusionTest(name, {
        test_metadata: { name: 'not_null', namespace: null },
        column_name: column,
        attached_node: 'model.shop.orders',
      });
    const d = declare(
      '2.0.0-beta.46',
      withoutKwargs('not_null_orders_status', null),
      withoutKwargs('not_null_orders_renamed', 'order_id'),
    );
    expect(d.mappedTests.map((t) => t.rule).sort()).toEqual(['required:order_id', 'required:status']);
    expect(d.notMappedTests).toEqual([]);
  });

  it('accepted_values and relationships whose arguments Fusion left out are refused, not made other checks', () => {
    const stripped = (name: string, kind: string) =>
      fusionTest(name, {
        test_metadata: {
          name: kind,
          namespace: null,
          kwargs: { column_name: 'status', model: "{{ get_where_subquery(ref('orders')) }}" },
        },
        column_name: 'status',
        attached_node: 'model.shop.orders',
      });
    const d = declare(
      '2.0.0-beta.46',
      stripped('accepted_values_orders_status__a__b', 'accepted_values'),
      stripped('relationships_orders_status__id__ref_customers_', 'relationships'),
    );
    expect(d.mappedTests).toEqual([]);
    expect(d.gate1Yaml ?? '').not.toMatch(/predicate|reference/i);
    expect(d.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringMatching(/values/),
      expect.stringMatching(/to: or field:/),
    ]);
  });

  it('a test named like a generic one but without test_metadata is one only under generic_tests/: a singular test stays refused', () => {
    const singular = fusionTest('not_null_orders_order_id', {
      path: 'not_null_orders_order_id.sql',
      original_file_path: 'tests/not_null_orders_order_id.sql',
      raw_code: "select * from {{ ref('orders') }} where order_id < 0",
    });
    const d = declare('2.0.0-beta.46', singular);
    expect(d.mappedTests).toEqual([]);
    expect(d.notMappedTests[0]?.reason).toMatch(/singular test/);
  });

  it('a singular test in a folder named generic_tests, or one dbt-core wrote there, stays refused as singular', () => {
    const inTests = fusionTest('not_null_orders_order_id', {
      original_file_path: 'tests/generic_tests/not_null_orders_order_id.sql',
      raw_code: "select * from {{ ref('orders') }} where order_id < 0",
    });
    const byCore = fusionTest('unique_orders_order_id', {
      raw_code: "select * from {{ ref('orders') }} where order_id < 0",
    });
    for (const d of [declare('2.0.0-beta.46', inTests), declare('1.10.6', byCore)]) {
      expect(d.mappedTests).toEqual([]);
      expect(d.notMappedTests[0]?.reason).toMatch(/singular test/);
    }
  });

  it('a Fusion test whose name names no column of the table is refused, saying so', () => {
    const d = declare('2.0.0-beta.46', fusionTest('not_null_orders_'));
    expect(d.mappedTests).toEqual([]);
    expect(d.notMappedTests[0]?.reason).toMatch(/dbt Fusion .*without test_metadata/);
  });
});

describe('test_name: and test_type: select the generic tests Fusion wrote without test_metadata as dbt does', () => {
  // dbt names a generic test `<test>_<model>_<arguments>` (a source's `source_<test>_<source>_<table>_…`):
  // test_name: matches the <test> part, and test_type: takes the test for a generic one.
  const values = model('values');
  const customers = model('customers');
  const fusionTests = [
    fusionTest('not_null_orders_order_id'),
    fusionTest('unique_orders_order_id'),
    fusionTest('accepted_values_orders_status__a__b'),
    fusionTest('relationships_orders_customer_id__id__ref_customers_', {
      depends_on: { macros: [], nodes: ['model.shop.customers', 'model.shop.orders'] },
    }),
    // A model named like a part of its test's name: the name is still split at the model that follows the test.
    fusionTest('accepted_values_values_kind__x', {
      depends_on: { macros: [], nodes: ['model.shop.values'] },
    }),
    fusionTest('source_not_null_raw_orders_id', {
      depends_on: { macros: [], nodes: ['source.shop.raw.orders'] },
    }),
  ];
  const singular = fusionTest('assert_no_negative_orders', {
    path: 'assert_no_negative_orders.sql',
    original_file_path: 'tests/assert_no_negative_orders.sql',
    raw_code: "select * from {{ ref('orders') }} where order_id < 0",
  });
  const written = (version: string, ...tests: Entry[]) => {
    const m = manifest(orders, values, customers, ...tests);
    (m['metadata'] as Entry)['dbt_version'] = version;
    m['sources'] = { 'source.shop.raw.orders': source('raw', 'orders') };
    return readManifest(m);
  };
  const fusion = written('2.0.0-beta.46', ...fusionTests, singular);
  const selected = (select: string, m = fusion) =>
    [...selectDbt(m, { select: [select] }).tests].map((id) => id.slice('test.shop.'.length)).sort();

  it('test_name: matches the generic test the name says, globs too', () => {
    expect(selected('test_name:not_null')).toEqual([
      'not_null_orders_order_id',
      'source_not_null_raw_orders_id',
    ]);
    expect(selected('test_name:unique')).toEqual(['unique_orders_order_id']);
    expect(selected('test_name:accepted_values')).toEqual([
      'accepted_values_orders_status__a__b',
      'accepted_values_values_kind__x',
    ]);
    expect(selected('test_name:relationships')).toEqual([
      'relationships_orders_customer_id__id__ref_customers_',
    ]);
    expect(selected('test_name:not_*')).toEqual([
      'not_null_orders_order_id',
      'source_not_null_raw_orders_id',
    ]);
    expect(selected('test_name:accepted')).toEqual([]);
    expect(selected('test_name:assert_no_negative_orders')).toEqual([]);
  });

  it('test_type:generic selects them, test_type:singular only the test of tests/, test_type:data both', () => {
    const generic = fusionTests.map((t) => t['name'] as string).sort();
    expect(selected('test_type:generic')).toEqual(generic);
    expect(selected('test_type:singular')).toEqual(['assert_no_negative_orders']);
    expect(selected('test_type:data')).toEqual([...generic, 'assert_no_negative_orders'].sort());
  });

  it('--exclude test_type:singular keeps them among the rules of the table', () => {
    const kept = selectDbt(fusion, { select: ['orders'], exclude: ['test_type:singular'] }).tests;
    expect(kept.has('test.shop.not_null_orders_order_id')).toBe(true);
    expect(kept.has('test.shop.assert_no_negative_orders')).toBe(false);
  });

  it('dbt-core wrote no generic test without test_metadata: there, such a test is singular', () => {
    const core = written('1.10.6', fusionTest('not_null_orders_order_id'));
    expect(selected('test_name:not_null', core)).toEqual([]);
    expect(selected('test_type:singular', core)).toEqual(['not_null_orders_order_id']);
  });
});

describe("test_name: a package's generic test Fusion wrote without test_metadata, as dbt-core's test_metadata names it", () => {
  // dbt-core's test_name: method globs test_metadata.name alone (`expression_is_true`), never the namespace
  // (`dbt_utils`); dbt names such a test `<namespace>_<test>_<model>_…`, and the manifest's macros name the
  // generic tests there are (`macro.dbt_utils.test_expression_is_true`).
  const macros = Object.fromEntries(
    [
      macro('dbt', 'test_not_null'),
      macro('dbt_utils', 'test_expression_is_true'),
      macro('dbt_utils', 'test_accepted_range'),
      macro('dbt_utils', 'get_url_parameter'),
      macro('shop', 'test_is_positive'),
    ].map((m) => [m.unique_id, m]),
  );
  const tests: [string, { name: string; namespace?: string; parent?: string }][] = [
    [
      'dbt_utils_expression_is_true_orders_order_id_0',
      { name: 'expression_is_true', namespace: 'dbt_utils' },
    ],
    ['expression_is_true_orders_status_x', { name: 'expression_is_true' }],
    ['is_positive_orders_order_id', { name: 'is_positive' }],
    ['not_null_orders_order_id', { name: 'not_null' }],
    [
      'source_dbt_utils_accepted_range_raw_orders_id__0',
      { name: 'accepted_range', namespace: 'dbt_utils', parent: 'source.shop.raw.orders' },
    ],
  ];
  const written = (version: string) => {
    const m = manifest(
      orders,
      ...tests.map(([name, t]) => {
        const parent = t.parent ?? 'model.shop.orders';
        const depends_on = { macros: [], nodes: [parent] };
        return version.startsWith('2.')
          ? fusionTest(name, { depends_on })
          : genericTest(
              t.name,
              parent,
              {},
              {
                id: `test.shop.${name}`,
                dependsOn: [parent],
                ...(t.namespace === undefined ? {} : { namespace: t.namespace }),
              },
            );
      }),
    );
    (m['metadata'] as Entry)['dbt_version'] = version;
    m['sources'] = { 'source.shop.raw.orders': source('raw', 'orders') };
    m['macros'] = macros;
    return readManifest(m);
  };
  const selected = (m: ReturnType<typeof readManifest>, select: string) =>
    [...selectDbt(m, { select: [select] }).tests].map((id) => id.slice('test.shop.'.length)).sort();

  it('test_name:expression_is_true selects the dbt_utils test, as test_metadata.name does in dbt-core', () => {
    const fusion = written('2.0.0-beta.46');
    expect(selected(fusion, 'test_name:expression_is_true')).toEqual([
      'dbt_utils_expression_is_true_orders_order_id_0',
      'expression_is_true_orders_status_x',
    ]);
    expect(selected(fusion, 'test_name:accepted_range')).toEqual([
      'source_dbt_utils_accepted_range_raw_orders_id__0',
    ]);
    expect(selected(fusion, 'test_name:is_positive')).toEqual(['is_positive_orders_order_id']);
  });

  it('the namespace is no part of the name: dbt_utils.expression_is_true and dbt_utils_expression_is_true select nothing', () => {
    const fusion = written('2.0.0-beta.46');
    expect(selected(fusion, 'test_name:dbt_utils.expression_is_true')).toEqual([]);
    expect(selected(fusion, 'test_name:dbt_utils_expression_is_true')).toEqual([]);
    expect(selected(fusion, 'test_name:dbt_utils*')).toEqual([]);
  });

  it('every test_name: selects the same tests of the Fusion manifest as of the dbt-core one', () => {
    const fusion = written('2.0.0-beta.46');
    const core = written('1.10.6');
    for (const select of [
      'test_name:expression_is_true',
      'test_name:expression_*',
      'test_name:*_is_true',
      'test_name:accepted_range',
      'test_name:is_positive',
      'test_name:not_null',
      'test_name:dbt_utils.expression_is_true',
      'test_name:dbt_utils_expression_is_true',
      'test_name:dbt_utils_accepted_range',
      'test_name:*',
    ])
      expect([select, selected(fusion, select)]).toEqual([select, selected(core, select)]);
  });

  it("without the macro among the manifest's macros, the name before the model is the test's, as before", () => {
    const m = manifest(orders, fusionTest('my_pkg_check_orders_order_id'));
    (m['metadata'] as Entry)['dbt_version'] = '2.0.0-beta.46';
    expect(selected(readManifest(m), 'test_name:my_pkg_check')).toEqual(['my_pkg_check_orders_order_id']);
    expect(selected(readManifest(m), 'test_name:check')).toEqual([]);
  });
});

describe(
  'real dbt-core manifests of ../shared/fixtures, rewritten as dbt Fusion writes them',
  needs(noSharedFixtures),
  () => {
    // Each generic test without test_metadata, under target/generic_tests/, as the Fusion manifest of the fixtures
    // holds its not_null test: test_name: selects what it selected in dbt-core's manifest.
    const asFusion = (raw: Entry): Entry => {
      const nodes = Object.fromEntries(
        Object.entries(raw['nodes'] as Record<string, Entry>).map(([id, n]) => {
          if (n['test_metadata'] === undefined || n['test_metadata'] === null) return [id, n];
          const name = n['name'] as string;
          return [
            id,
            {
              ...n,
              test_metadata: null,
              attached_node: null,
              column_name: null,
              path: `generic_tests/${name}.sql`,
              original_file_path: `target/generic_tests/${name}.sql`,
              depends_on: { ...(n['depends_on'] as Entry), macros: [] },
            },
          ];
        }),
      );
      return { ...raw, metadata: { ...(raw['metadata'] as Entry), dbt_version: '2.0.0-beta.46' }, nodes };
    };
    for (const file of ['dap_v12_1.12.0.manifest.json', 'balboa_snowflake_1.8.8.manifest.json']) {
      it(`${file}: test_name: selects the same tests, a package's generic tests too`, () => {
        const raw = JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/${file}`, 'utf8')) as Entry;
        const core = readManifest(raw);
        const fusion = readManifest(asFusion(raw));
        const names = new Set<string>();
        for (const n of Object.values(raw['nodes'] as Record<string, Entry>)) {
          const meta = n['test_metadata'] as Entry | null | undefined;
          if (!meta) continue;
          names.add(`test_name:${meta['name'] as string}`);
          if (typeof meta['namespace'] === 'string') {
            names.add(`test_name:${meta['namespace']}.${meta['name'] as string}`);
            names.add(`test_name:${meta['namespace']}_${meta['name'] as string}`);
          }
        }
        expect([...names].some((s) => s.includes('dbt_utils'))).toBe(true);
        const tests = (m: ReturnType<typeof readManifest>, select: string) =>
          [...selectDbt(m, { select: [select] }).tests].sort();
        for (const select of names)
          expect([select, tests(fusion, select)]).toEqual([select, tests(core, select)]);
      });
    }
  },
);

describe('the Fusion manifest of ../shared/fixtures', needs(noSharedFixtures), () => {
  it('test_name:not_null and test_type:generic select its not_null test; test_type:singular does not', () => {
    const m = readManifest(
      JSON.parse(
        readFileSync(`${sharedFixturesDir}real/dbt/a7med_bigquery_1.10.6_generate.manifest.json`, 'utf8'),
      ) as unknown,
    );
    const tests = (select: string) => [...selectDbt(m, { select: [select] }).tests];
    const test = 'test.sales_analytics.not_null_sales_final_';
    expect(tests('test_name:not_null')).toEqual([test]);
    expect(tests('test_type:generic')).toEqual([test]);
    expect(tests('test_type:singular')).toEqual([]);
  });

  it("its not_null test, written without test_metadata and naming no column, is refused as Fusion's, not as a singular test", () => {
    const text = readFileSync(
      `${sharedFixturesDir}real/dbt/a7med_bigquery_1.10.6_generate.manifest.json`,
      'utf8',
    );
    const project = declareDbtProject(
      { manifest: JSON.parse(text) as unknown },
      { select: ['sales_final'] },
      dbtReader,
    );
    const refusals = [...project.declarations, ...project.refusals].flatMap((d) => d.notMappedTests);
    expect(refusals).toEqual([
      {
        test: 'test.sales_analytics.not_null_sales_final_',
        reason: expect.stringMatching(/dbt Fusion .*without test_metadata/) as unknown,
      },
    ]);
  });
});

describe("test_name: a Fusion test of a long name, which Fusion names by its `<test>_<target>`'s first 30 characters and an MD5", () => {
  // dbt Fusion names a generic test `<test>_<target>_<arguments>` (a package's test `<package>_…`), and one of
  // 64 characters or more `<test>_<target>` cut to 30, `_`, and the MD5 of the whole name (dbt-core's short
  // name, which it gives the node's alias and file, not its name): the cut may fall inside the model's name,
  // or the test's. Its generic test is the one of the manifest's test macros whose `<test>_<target>` so cut
  // is that name's start.
  const long = model('customer_orders_summary');
  const macros = Object.fromEntries(
    [
      macro('dbt', 'test_not_null'),
      macro('dbt', 'test_accepted_values'),
      macro('dbt_utils', 'test_expression_is_true'),
      macro('dbt_expectations', 'test_expect_column_values_to_be_between'),
      macro('dbt_expectations', 'test_expect_column_values_to_not_be_null'),
      macro('dbt_expectations', 'test_expect_column_values_to_not_be_in_set'),
    ].map((m) => [m.unique_id, m]),
  );
  /** Fusion's name of a test whose whole name is `identifier_arguments`: cut when 64 characters or more. */
  const hashed = (identifier: string, whole: string) =>
    whole.length >= 64
      ? `${identifier.slice(0, 30)}_${createHash('md5').update(whole).digest('hex')}`
      : whole;
  const onLong = { depends_on: { macros: [], nodes: ['model.shop.customer_orders_summary'] } };
  const names = {
    accepted: hashed(
      'accepted_values_customer_orders_summary',
      'accepted_values_customer_orders_summary_status__placed__shipped__returned',
    ),
    expression: hashed(
      'expression_is_true_customer_orders_summary',
      'dbt_utils_expression_is_true_customer_orders_summary_amount_0',
    ),
    between: hashed(
      'expect_column_values_to_be_between_customer_orders_summary',
      'dbt_expectations_expect_column_values_to_be_between_customer_orders_summary_amount__0',
    ),
    notNullOrInSet: hashed(
      'expect_column_values_to_not_be_null_customer_orders_summary',
      'dbt_expectations_expect_column_values_to_not_be_null_customer_orders_summary_amount',
    ),
  };
  const m = manifest(long, ...Object.values(names).map((name) => fusionTest(name, onLong)));
  (m['metadata'] as Entry)['dbt_version'] = '2.0.0-beta.46';
  m['macros'] = macros;
  const fusion = readManifest(m);
  const selected = (select: string) =>
    [...selectDbt(fusion, { select: [select] }).tests].map((id) => id.slice('test.shop.'.length)).sort();

  it('the names are as Fusion writes them: 30 characters, _, 32 hexadecimal digits', () => {
    expect(names.accepted).toMatch(/^accepted_values_customer_order_[0-9a-f]{32}$/);
    expect(names.between).toMatch(/^expect_column_values_to_be_bet_[0-9a-f]{32}$/);
  });

  it('test_name: selects the test whose macro the cut name starts with, the cut in the model or the test', () => {
    expect(selected('test_name:accepted_values')).toEqual([names.accepted]);
    expect(selected('test_name:expression_is_true')).toEqual([names.expression]);
    expect(selected('test_name:expect_column_values_to_be_between')).toEqual([names.between]);
    expect(selected('test_name:accepted_*')).toEqual([names.accepted]);
    expect(selected('test_type:generic')).toHaveLength(4);
  });

  it('a cut two test macros start alike (to_not_be_null, to_not_be_in_set) names neither: not selected', () => {
    expect(selected('test_name:expect_column_values_to_not_be_null')).toEqual([]);
    expect(selected('test_name:expect_column_values_to_not_be_in_set')).toEqual([]);
  });

  it("a cut that keeps the package, as dbt-core's short names do (dbt_utils_expression_is_true_…), is read too", () => {
    const whole = 'dbt_utils_expression_is_true_customer_orders_summary_amount_____0';
    const cut = hashed('dbt_utils_expression_is_true_customer_orders_summary', whole);
    expect(cut).toMatch(/^dbt_utils_expression_is_true_c_[0-9a-f]{32}$/);
    const kept = manifest(long, fusionTest(cut, onLong));
    (kept['metadata'] as Entry)['dbt_version'] = '2.0.0-beta.46';
    kept['macros'] = macros;
    const read = readManifest(kept);
    expect([...selectDbt(read, { select: ['test_name:expression_is_true'] }).tests]).toEqual([
      `test.shop.${cut}`,
    ]);
    expect([...selectDbt(read, { select: ['test_name:accepted_values'] }).tests]).toEqual([]);
  });

  it('the cut is of 30 characters exactly: a name whose start is 29 or 31 of them is no test of that macro', () => {
    const identifier = 'accepted_values_customer_orders_summary';
    const whole = `${identifier}_status__placed__shipped__returned`;
    const md5 = createHash('md5').update(whole).digest('hex');
    const cutAt = (length: number) => `${identifier.slice(0, length)}_${md5}`;
    const cuts = manifest(long, ...[29, 30, 31].map((length) => fusionTest(cutAt(length), onLong)));
    (cuts['metadata'] as Entry)['dbt_version'] = '2.0.0-beta.46';
    cuts['macros'] = macros;
    const read = readManifest(cuts);
    const chosen = [...selectDbt(read, { select: ['test_name:accepted_values'] }).tests];
    expect(chosen).toEqual([`test.shop.${cutAt(30)}`]);
  });
});
