// A project's `dispatch:` search orders (dbt_project.yml), which the manifest does not hold: dbt-core's
// adapter.dispatch(macro, namespace) searches exactly the packages a search_order lists, in its order, each with
// every prefix (BaseDatabaseWrapper._get_search_packages, Project.get_macro_search_order). A shim package listed
// there (tsql_utils, spark_utils) whose implementation dbt then runs decides what the test checks; a package
// not listed, the root project included, never does.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { columns, genericTest, manifest, model } from '../core/dbt/helpers.js';

type Entry = Record<string, unknown>;

const people = model('people', { columns: columns({ id: 'integer', name: 'text', age: 'integer' }) });
const adult = genericTest(
  'expression_is_true',
  'model.shop.people',
  { expression: 'age >= 18' },
  {
    namespace: 'dbt_utils',
  },
);
const unique = genericTest('unique', 'model.shop.people', {}, { column: 'id' });
const notNull = genericTest('not_null', 'model.shop.people', {}, { column: 'id' });
const recent = genericTest(
  'not_null',
  'model.shop.people',
  {},
  { column: 'name', config: { where: 'age > 17' }, id: 'test.shop.not_null_people_name_recent.abc' },
);

const UTILS = ['macro.dbt_utils.test_expression_is_true', 'macro.dbt_utils.default__test_expression_is_true'];
const DBT = [
  'macro.dbt.test_not_null',
  'macro.dbt.default__test_not_null',
  'macro.dbt.test_unique',
  'macro.dbt.default__test_unique',
  'macro.dbt.get_where_subquery',
  'macro.dbt.default__get_where_subquery',
];

/** A dbt_project.yml of project shop whose `dispatch:` has an entry per [namespace, search order]. */
const dispatching = (...entries: Array<[string, string]>) =>
  `name: shop\ndispatch:\n${entries.map(([namespace, order]) => `  - macro_namespace: ${namespace}\n    search_order: [${order}]\n`).join('')}`;

describe("dbt_project.yml's dispatch: search orders", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gds-dbt-dispatch-'));
    await mkdir(join(dir, 'target'));
  });
  afterAll(async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /**
   * The project on `adapter`, its manifest defining `macros` (an id, or an id and its SQL), its dbt_project.yml
   * `project` (none: undefined).
   */
  async function plan(
    adapter: string,
    tests: Entry[],
    macros: Array<string | [string, string]>,
    project: string | undefined,
  ) {
    const m = manifest(people, ...tests);
    (m['metadata'] as Entry)['adapter_type'] = adapter;
    m['macros'] = Object.fromEntries(
      macros.map((macro) => {
        const [id, sql] = typeof macro === 'string' ? [macro, ''] : macro;
        return [id, { unique_id: id, macro_sql: sql, depends_on: { macros: [] } }];
      }),
    );
    await writeFile(join(dir, 'target', 'manifest.json'), JSON.stringify(m));
    await rm(join(dir, 'dbt_project.yml'), { force: true });
    if (project !== undefined) await writeFile(join(dir, 'dbt_project.yml'), project);
    const loaded = await loadDbtProject(dir, {});
    const [declaration] = loaded.declarations;
    if (!declaration) throw new Error('no declaration');
    return Object.assign(declaration, { warnings: loaded.warnings });
  }

  const shimmed = dispatching(['dbt_utils', 'shop, tsql_utils, dbt_utils']);

  it('a shim package listed before dbt_utils whose sqlserver__ implementation runs: not mapped, naming it and the search order', async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const declaration = await plan('sqlserver', [adult], macros, shimmed);
    expect(declaration.notMappedTests).toEqual([
      {
        test: adult['unique_id'],
        reason: expect.stringContaining(
          "dbt_project.yml's dispatch: search_order for dbt_utils (shop, tsql_utils, dbt_utils) runs macro.tsql_utils.sqlserver__test_expression_is_true",
        ) as unknown,
      },
    ]);
    // Without the search order, dbt dispatches to the root project, then dbt_utils: the shim is never run.
    const plain = await plan('sqlserver', [adult], macros, 'name: shop\n');
    expect(plain.notMappedTests).toEqual([]);
    expect(plain.mappedTests).toHaveLength(1);
  });

  it('a listed shim that implements nothing for the test leaves dbt_utils to run: mapped', async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__dateadd'];
    const declaration = await plan('sqlserver', [adult], macros, shimmed);
    expect(declaration.notMappedTests).toEqual([]);
    expect(declaration.mappedTests).toHaveLength(1);
  });

  it("a search order that does not list the root project: the project's own default__ is not run, mapped", async () => {
    const macros = [...UTILS, 'macro.shop.default__test_expression_is_true'];
    const unlisted = dispatching(['dbt_utils', 'spark_utils, dbt_utils']);
    expect((await plan('databricks', [adult], macros, unlisted)).notMappedTests).toEqual([]);
    // Listed (or no search order: root project, then dbt_utils), it is run.
    expect((await plan('databricks', [adult], macros, shimmed)).notMappedTests).toHaveLength(1);
    expect((await plan('databricks', [adult], macros, 'name: shop\n')).notMappedTests).toHaveLength(1);
  });

  it("a search order of another namespace changes nothing of dbt_utils' dispatch", async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const other = dispatching(['dbt_date', 'tsql_utils, dbt_date']);
    expect((await plan('sqlserver', [adult], macros, other)).notMappedTests).toEqual([]);
  });

  it("dbt's own namespace: a package listed before dbt whose implementation runs unmaps unique and a where:", async () => {
    const macros = [...DBT, 'macro.audit.default__test_unique', 'macro.audit.default__get_where_subquery'];
    const project = dispatching(['dbt', 'shop, audit, dbt']);
    const declaration = await plan('postgres', [unique, notNull, recent], macros, project);
    expect(declaration.notMappedTests).toEqual([
      {
        test: recent['unique_id'],
        reason: expect.stringContaining(
          "its where: condition is applied by macro.audit.default__get_where_subquery, which dbt_project.yml's dispatch: search_order for dbt (shop, audit, dbt) runs",
        ) as unknown,
      },
      {
        test: unique['unique_id'],
        reason: expect.stringContaining('runs macro.audit.default__test_unique') as unknown,
      },
    ]);
    expect(declaration.mappedTests.map((t) => t.rule)).toEqual(['required:id']);
    // Without the search order another package's default__ is never dispatched to.
    expect(
      (await plan('postgres', [unique, notNull, recent], macros, 'name: shop\n')).notMappedTests,
    ).toEqual([]);
  });

  it('the first entry of a namespace is the one dbt reads', async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const twice = dispatching(['dbt_utils', 'dbt_utils'], ['dbt_utils', 'tsql_utils, dbt_utils']);
    expect((await plan('sqlserver', [adult], macros, twice)).notMappedTests).toEqual([]);
  });

  it('no dbt_project.yml read: a shim that implements the test is named in a warning, the test still mapped', async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const unread = await plan('sqlserver', [adult], macros, undefined);
    expect(unread.notMappedTests).toEqual([]);
    expect(unread.warnings).toEqual([
      expect.stringContaining(
        "macro.tsql_utils.sqlserver__test_expression_is_true, which dbt runs instead of dbt_utils' own where dbt_project.yml's dispatch: lists tsql_utils first for dbt_utils; gds read no dbt_project.yml",
      ),
    ]);
    // Read, without a search order for dbt_utils: dbt never runs it, no warning.
    expect((await plan('sqlserver', [adult], macros, 'name: shop\n')).warnings).toEqual([]);
  });

  it("a search order that lists no package implementing the test: dbt's dispatch errors, so not mapped, saying why", async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__dateadd'];
    const none = dispatching(['dbt_utils', 'shop, tsql_utils']);
    const declaration = await plan('sqlserver', [adult], macros, none);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests).toEqual([
      {
        test: adult['unique_id'],
        reason: expect.stringContaining(
          "dbt_project.yml's dispatch: search_order for dbt_utils (shop, tsql_utils) lists no package implementing test_expression_is_true, so dbt's test errors (In dispatch: No macro named 'test_expression_is_true' found within namespace: 'dbt_utils')",
        ) as unknown,
      },
    ]);
    // dbt's own namespace, without dbt in its search order: dbt's tests fail alike.
    const own = await plan('postgres', [unique, recent], DBT, dispatching(['dbt', 'shop, audit']));
    expect(own.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining("No macro named 'test_not_null' found within namespace: 'dbt'"),
      expect.stringContaining("No macro named 'test_unique' found within namespace: 'dbt'"),
    ]);
  });

  it('a search order entry written as Jinja is not read: the dispatch is unknown, mapped with the warning naming the macro', async () => {
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const templated = dispatching(['dbt_utils', `"{{ var('shim') }}", dbt_utils`]);
    const declaration = await plan('sqlserver', [adult], macros, templated);
    expect(declaration.notMappedTests).toEqual([]);
    expect(declaration.mappedTests).toHaveLength(1);
    expect(declaration.warnings).toEqual([
      expect.stringContaining(
        "macro.tsql_utils.sqlserver__test_expression_is_true, which dbt runs instead of dbt_utils' own where dbt_project.yml's dispatch: lists tsql_utils first for dbt_utils; its search_order for dbt_utils ({{ var('shim') }}, dbt_utils) is a Jinja template, which dbt renders and gds does not",
      ),
    ]);
    // Alone in the search order, it is no reason to call the test undispatchable.
    const alone = dispatching(['dbt_utils', `"{{ var('shim') }}"`]);
    expect((await plan('sqlserver', [adult], [...UTILS], alone)).notMappedTests).toEqual([]);
  });

  it('a search order written as one Jinja expression (dbt renders it into a list) is as unknown: mapped with the warning', async () => {
    // dbt renders dbt_project.yml natively: "{{ var('order') }}" becomes the list var('order') is.
    const macros = [...UTILS, 'macro.tsql_utils.sqlserver__test_expression_is_true'];
    const whole = `name: shop\ndispatch:\n  - macro_namespace: dbt_utils\n    search_order: "{{ var('order') }}"\n`;
    const { mappedTests, warnings } = await plan('sqlserver', [adult], macros, whole);
    expect(mappedTests.map((t) => t.rule)).toHaveLength(1);
    expect(warnings.join('\n')).toMatch(
      /macro\.tsql_utils\.sqlserver__test_expression_is_true, which dbt runs instead .* its search_order for dbt_utils \(\{\{ var\('order'\) \}\}\) is a Jinja template/,
    );
  });

  it("an adapter's own package listed (dbt_postgres) is searched only as dbt: its implementation is dbt's, mapped", async () => {
    // dbt-core keeps dbt_postgres among its internal packages: MacroNamespace.get_from_package finds none of
    // them by name (PackageNotFoundForMacroError, which dispatch passes over), only under dbt, merged into it.
    const macros = [...DBT, 'macro.dbt_postgres.postgres__test_unique'];
    for (const order of ['dbt_postgres, dbt', 'shop, dbt_postgres, dbt']) {
      const declaration = await plan('postgres', [unique], macros, dispatching(['dbt', order]));
      expect(declaration.notMappedTests, order).toEqual([]);
      expect(declaration.mappedTests.map((t) => t.rule)).toEqual(['unique:unique_people_id']);
    }
    // A parent adapter's too (dbt-redshift builds on dbt-postgres).
    const redshift = await plan('redshift', [unique], macros, dispatching(['dbt', 'dbt_postgres, dbt']));
    expect(redshift.notMappedTests).toEqual([]);
    // Listed alone, it leaves dbt's test undispatchable, as in dbt, saying why.
    const alone = await plan('postgres', [unique], macros, dispatching(['dbt', 'shop, dbt_postgres']));
    expect(alone.mappedTests).toEqual([]);
    expect(alone.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining(
        "search_order for dbt (shop, dbt_postgres) lists no package implementing test_unique (dbt_postgres: dbt's own, which dispatch searches only as dbt), so dbt's test errors",
      ),
    ]);
  });

  it("a type macro the test's SQL calls that the search order dispatches to nothing: dbt's test errors, so not mapped", async () => {
    // dbt_utils' not_null_proportion divides by cast(count(*) as {{ dbt.type_numeric() }}), which dbt dispatches
    // in its own namespace (adapter.dispatch('type_numeric', 'dbt')).
    const present = genericTest(
      'not_null_proportion',
      'model.shop.people',
      { at_least: 0.9 },
      { column: 'name', namespace: 'dbt_utils' },
    );
    const proportion: Array<string | [string, string]> = [
      'macro.dbt_utils.test_not_null_proportion',
      [
        'macro.dbt_utils.default__test_not_null_proportion',
        'select sum(case when {{ column_name }} is null then 0 else 1 end) / cast(count(*) as {{ dbt.type_numeric() }}) as not_null_proportion from {{ model }}',
      ],
      'macro.dbt.type_numeric',
      ['macro.dbt.default__type_numeric', '{{ return(api.Column.numeric_type("numeric", 28, 6)) }}'],
    ];
    const none = await plan('postgres', [present], proportion, dispatching(['dbt', 'shop, audit']));
    expect(none.mappedTests).toEqual([]);
    expect(none.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining(
        "its SQL calls dbt.type_numeric(), dispatched in dbt: dbt_project.yml's dispatch: search_order for dbt (shop, audit) lists no package implementing type_numeric, so dbt's test errors (In dispatch: No macro named 'type_numeric' found within namespace: 'dbt')",
      ),
    ]);
    // dbt listed, or no search order: dbt's default__type_numeric, mapped.
    for (const project of [dispatching(['dbt', 'shop, dbt']), 'name: shop\n'])
      expect((await plan('postgres', [present], proportion, project)).mappedTests).toHaveLength(1);

    // dbt_expectations' be_in_set casts its values with dbt_utils.type_string() (before dbt 1.2), dispatched in
    // dbt_utils.
    const inSet = genericTest(
      'expect_column_values_to_be_in_set',
      'model.shop.people',
      { value_set: ['a'] },
      { column: 'name', namespace: 'dbt_expectations' },
    );
    const typed: Array<string | [string, string]> = [
      [
        'macro.dbt_expectations.test_expect_column_values_to_be_in_set',
        "select cast('{{ value }}' as {{ dbt_utils.type_string() }}) as value_field",
      ],
      'macro.dbt_utils.type_string',
      'macro.dbt_utils.default__type_string',
    ];
    const unlisted = await plan('postgres', [inSet], typed, dispatching(['dbt_utils', 'shop']));
    expect(unlisted.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining(
        "its SQL calls dbt_utils.type_string(), dispatched in dbt_utils: dbt_project.yml's dispatch: search_order for dbt_utils (shop) lists no package implementing type_string",
      ),
    ]);
    expect((await plan('postgres', [inSet], typed, 'name: shop\n')).notMappedTests).toEqual([]);
  });

  it('a type macro named only where nothing renders it (a Jinja comment, an untaken branch, SQL text) is no call', async () => {
    // A project's own not_null_proportion, cast as numeric; its earlier cast left in a Jinja comment, in a
    // branch that is never taken, or named in an SQL comment's text: dbt never calls dbt.type_numeric().
    const present = genericTest(
      'not_null_proportion',
      'model.shop.people',
      { at_least: 0.9 },
      { column: 'name', namespace: 'dbt_utils' },
    );
    const cast = (left: string) =>
      [
        'macro.dbt_utils.test_not_null_proportion',
        [
          'macro.dbt_utils.default__test_not_null_proportion',
          `${left}\nselect sum(case when {{ column_name }} is null then 0 else 1 end) / cast(count(*) as numeric) as not_null_proportion from {{ model }}`,
        ],
        'macro.dbt.type_numeric',
        ['macro.dbt.default__type_numeric', '{{ return(api.Column.numeric_type("numeric", 28, 6)) }}'],
      ] as Array<string | [string, string]>;
    const order = dispatching(['dbt', 'shop, audit']);
    for (const left of [
      '{# was: cast(count(*) as {{ dbt.type_numeric() }}) #}',
      '{% if false %}{% set t = dbt.type_numeric() %}{% endif %}',
      '{% if true %}{% set t = "numeric" %}{% else %}{% set t = dbt.type_numeric() %}{% endif %}',
      '-- dbt.type_numeric() is what dbt_utils 1.1 casts with',
      '/* cast(count(*) as dbt.type_numeric()) */',
    ]) {
      const declaration = await plan('postgres', [present], cast(left), order);
      expect(declaration.notMappedTests, left).toEqual([]);
      expect(declaration.mappedTests, left).toHaveLength(1);
    }
    // What renders still counts: a taken branch, and a call in an SQL comment (Jinja renders it there too).
    for (const left of [
      '{% if true %}{% set t = dbt.type_numeric() %}{% endif %}',
      '{% if false %}{% else %}{% set t = dbt.type_numeric() %}{% endif %}',
      '-- cast as {{ dbt.type_numeric() }}',
      // A for loop's own else (run when it loops over nothing) is no branch of the if around it: the if's
      // else still runs where its condition is false.
      '{% if target.name == "ci" %}{% for c in [] %}{% else %}{% endfor %}{% else %}{% set t = dbt.type_numeric() %}{% endif %}',
      '{% if true %}{% for c in [] %}{% else %}{% endfor %}{% set t = dbt.type_numeric() %}{% endif %}',
    ]) {
      const declaration = await plan('postgres', [present], cast(left), order);
      expect(declaration.mappedTests, left).toEqual([]);
      expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringContaining('its SQL calls dbt.type_numeric(), dispatched in dbt'),
      ]);
    }
  });

  it("a where: whose get_where_subquery the search order for dbt dispatches to nothing: dbt's test errors, so not mapped", async () => {
    const where = genericTest(
      'expression_is_true',
      'model.shop.people',
      { expression: 'age >= 18' },
      { namespace: 'dbt_utils', config: { where: 'age is not null' } },
    );
    const declaration = await plan(
      'postgres',
      [where],
      [...UTILS, ...DBT],
      dispatching(['dbt', 'shop, audit']),
    );
    expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining(
        "its where: condition is applied by dbt's get_where_subquery: dbt_project.yml's dispatch: search_order for dbt (shop, audit) lists no package implementing get_where_subquery",
      ),
    ]);
    expect((await plan('postgres', [where], [...UTILS, ...DBT], 'name: shop\n')).mappedTests).toHaveLength(1);
  });

  it("without a where: too, as dbt (1.0 and later) selects every generic test's model through get_where_subquery", async () => {
    // kwargs.model is {{ get_where_subquery(ref('people')) }} whether or not the test has a where:.
    const declaration = await plan(
      'postgres',
      [adult],
      [...UTILS, ...DBT],
      dispatching(['dbt', 'shop, audit']),
    );
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringMatching(
        /selects its model through dbt's get_where_subquery .*: dbt_project\.yml's dispatch: search_order for dbt \(shop, audit\) lists no package implementing get_where_subquery/,
      ),
    ]);
  });

  describe("dbt_expectations' helpers, dispatched in its namespace", () => {
    // As dbt_expectations 0.10 writes them: its tests call expression_is_true, which adapter.dispatch'es, and
    // default__expression_is_true calls truth_expression, which dispatches too; compound uniqueness goes through
    // ignore_row_if_expression; be_in_set casts with dbt.type_string().
    const dispatcher = (name: string): [string, string] => [
      `macro.dbt_expectations.${name}`,
      `{% macro ${name}(x) %}{{ adapter.dispatch('${name}', 'dbt_expectations') (x) }}{% endmacro %}`,
    ];
    const EXPECTATIONS: Array<string | [string, string]> = [
      [
        'macro.dbt_expectations.test_expect_column_values_to_not_be_null',
        '{% set expression = column_name ~ " is not null" %}{{ dbt_expectations.expression_is_true(model, expression=expression) }}',
      ],
      [
        'macro.dbt_expectations.test_expect_column_values_to_be_between',
        '{{ dbt_expectations.expression_between(model, expression=column_name, min_value=min_value) }}',
      ],
      [
        'macro.dbt_expectations.expression_between',
        '{{ dbt_expectations.expression_is_true(model, expression=expression) }}',
      ],
      dispatcher('expression_is_true'),
      [
        'macro.dbt_expectations.default__expression_is_true',
        'select {{ dbt_expectations.truth_expression(expression) }} from {{ model }}',
      ],
      dispatcher('truth_expression'),
      ['macro.dbt_expectations.default__truth_expression', '{{ expression }} as expression'],
    ];
    const expectation = (name: string, column: string, kwargs: Entry = {}) =>
      genericTest(name, 'model.shop.people', kwargs, { column, namespace: 'dbt_expectations' });
    const notNullName = expectation('expect_column_values_to_not_be_null', 'name');
    const between = expectation('expect_column_values_to_be_between', 'age', { min_value: 0 });

    it('a search order that leaves expression_is_true no implementation: dbt errors, not mapped, naming the helper', async () => {
      const none = await plan(
        'postgres',
        [notNullName, between],
        EXPECTATIONS,
        dispatching(['dbt_expectations', 'shop']),
      );
      expect(none.mappedTests).toEqual([]);
      expect(none.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringContaining(
          "its SQL goes through dbt_expectations.expression_is_true(), dispatched in dbt_expectations: dbt_project.yml's dispatch: search_order for dbt_expectations (shop) lists no package implementing expression_is_true, so dbt's test errors (In dispatch: No macro named 'expression_is_true' found within namespace: 'dbt_expectations')",
        ),
        expect.stringContaining("No macro named 'expression_is_true'"),
      ]);
      // dbt_expectations listed, or no search order: its own implementations run, mapped.
      for (const project of [dispatching(['dbt_expectations', 'shop, dbt_expectations']), 'name: shop\n']) {
        const listed = await plan('postgres', [notNullName, between], EXPECTATIONS, project);
        expect(listed.notMappedTests).toEqual([]);
        expect(listed.mappedTests.map((t) => t.rule)).toEqual([
          'predicate:expect_column_values_to_be_between_people_age',
          'required:name',
        ]);
      }
    });

    it('a shim listed first whose truth_expression runs (reached through default__expression_is_true): not mapped, naming it', async () => {
      const shim = [...EXPECTATIONS, 'macro.tsql_shim.sqlserver__truth_expression'];
      const declaration = await plan(
        'sqlserver',
        [notNullName],
        shim,
        dispatching(['dbt_expectations', 'tsql_shim, dbt_expectations']),
      );
      expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringContaining(
          "dbt_project.yml's dispatch: search_order for dbt_expectations (tsql_shim, dbt_expectations) runs macro.tsql_shim.sqlserver__truth_expression for dbt_expectations.expect_column_values_to_not_be_null tests, not the one gds maps",
        ),
      ]);
      // Unlisted, the shim is never run.
      expect((await plan('sqlserver', [notNullName], shim, 'name: shop\n')).notMappedTests).toEqual([]);
      // No dbt_project.yml read: mapped, with the warning naming the shim's macro.
      const unread = await plan('sqlserver', [notNullName], shim, undefined);
      expect(unread.notMappedTests).toEqual([]);
      expect(unread.warnings).toEqual([
        expect.stringContaining(
          "the manifest holds macro.tsql_shim.sqlserver__truth_expression, which dbt runs instead of dbt_expectations' own where dbt_project.yml's dispatch: lists tsql_shim first for dbt_expectations; gds read no dbt_project.yml",
        ),
      ]);
    });

    it("the root project's own default__expression_is_true runs under the default search order: not mapped", async () => {
      const own = await plan(
        'postgres',
        [notNullName],
        [...EXPECTATIONS, 'macro.shop.default__expression_is_true'],
        'name: shop\n',
      );
      expect(own.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringContaining('the project runs its own macro macro.shop.default__expression_is_true'),
      ]);
    });

    it("a type macro a helper calls that dbt's search order dispatches to nothing: not mapped", async () => {
      const typed: Array<string | [string, string]> = [
        ...EXPECTATIONS.filter((m) => typeof m === 'string' || !m[0].endsWith('default__truth_expression')),
        [
          'macro.dbt_expectations.default__truth_expression',
          'cast({{ expression }} as {{ dbt.type_boolean() }}) as expression',
        ],
        'macro.dbt.type_boolean',
        'macro.dbt.default__type_boolean',
      ];
      const declaration = await plan('postgres', [notNullName], typed, dispatching(['dbt', 'shop']));
      expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringContaining(
          "its SQL calls dbt.type_boolean(), dispatched in dbt: dbt_project.yml's dispatch: search_order for dbt (shop) lists no package implementing type_boolean",
        ),
      ]);
      expect((await plan('postgres', [notNullName], typed, 'name: shop\n')).notMappedTests).toEqual([]);
    });

    describe("dbt 0.20's releases: helpers dispatched with packages = dbt_expectations._get_namespaces()", () => {
      // dbt_expectations for dbt 0.19 and 0.20 dispatches with the `packages` argument (before macro_namespace):
      // dbt searches the list it is given, var('dbt_expectations_dispatch_list', []) then dbt_expectations,
      // neither the root project nor a dispatch: search order (dbt-core 0.20's BaseDatabaseWrapper.dispatch).
      const byPackages = (name: string): [string, string] => [
        `macro.dbt_expectations.${name}`,
        `{% macro ${name}(x) %}\n  {{ adapter.dispatch('${name}', packages = dbt_expectations._get_namespaces()) (x) }}\n{%- endmacro %}`,
      ];
      const OLD: Array<string | [string, string]> = [
        ...EXPECTATIONS.map((m) =>
          typeof m !== 'string' && /\.(?:expression_is_true|truth_expression)$/.test(m[0])
            ? byPackages(m[0].split('.')[2] ?? '')
            : m,
        ),
        [
          'macro.dbt_expectations._get_namespaces',
          "{% macro _get_namespaces() %}\n  {% set override_namespaces = var('dbt_expectations_dispatch_list', []) %}\n  {% do return(override_namespaces + ['dbt_expectations']) %}\n{% endmacro %}",
        ],
      ];
      const varNamed = (macro: string, pkg: string) =>
        expect.stringContaining(
          `the manifest holds ${macro}, which dbt runs instead of dbt_expectations' own where the var dbt_expectations_dispatch_list lists ${pkg}`,
        );

      it("followed into the package's implementations: a shim's truth_expression is named in a warning, the test mapped", async () => {
        const shim = [...OLD, 'macro.tsql_shim.sqlserver__truth_expression'];
        for (const project of [
          'name: shop\n',
          undefined,
          dispatching(['dbt_expectations', 'tsql_shim, dbt_expectations']),
        ]) {
          const declaration = await plan('sqlserver', [notNullName], shim, project);
          expect(declaration.notMappedTests, String(project)).toEqual([]);
          expect(declaration.mappedTests).toHaveLength(1);
          expect(declaration.warnings).toEqual([
            varNamed('macro.tsql_shim.sqlserver__truth_expression', 'tsql_shim'),
          ]);
        }
      });

      it('a dispatch: search order is not what dbt searches there: one without dbt_expectations leaves it mapped', async () => {
        const declaration = await plan(
          'postgres',
          [notNullName, between],
          OLD,
          dispatching(['dbt_expectations', 'shop']),
        );
        expect(declaration.notMappedTests).toEqual([]);
        expect(declaration.mappedTests).toHaveLength(2);
        expect(declaration.warnings).toEqual([]);
      });

      it("the root project's own default__expression_is_true is not searched unless the var lists it: mapped, with the warning", async () => {
        const own = await plan(
          'postgres',
          [notNullName],
          [...OLD, 'macro.shop.default__expression_is_true'],
          'name: shop\n',
        );
        expect(own.notMappedTests).toEqual([]);
        expect(own.warnings).toEqual([varNamed('macro.shop.default__expression_is_true', 'shop')]);
      });
    });
  });

  it("an empty search order is dbt's default search (get_macro_search_order's [] is falsy): the root project, then the package", async () => {
    const empty = dispatching(['dbt_utils', '']);
    const declaration = await plan('postgres', [adult], UTILS, empty);
    expect(declaration.notMappedTests).toEqual([]);
    expect(declaration.mappedTests).toHaveLength(1);
    const own = await plan(
      'postgres',
      [adult],
      [...UTILS, 'macro.shop.default__test_expression_is_true'],
      empty,
    );
    expect(own.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining('the project runs its own macro macro.shop.default__test_expression_is_true'),
    ]);
  });
});
