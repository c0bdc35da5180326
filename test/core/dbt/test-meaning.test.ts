// A dbt test's rule means what the macro dbt runs for it means: a project's own implementation of a test,
// and the regex dbt_expectations matches on the adapter, decide what gds may map.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, genericTest, manifest, matchRegexTest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

type Entry = Record<string, unknown>;

const people = model('people', { columns: columns({ id: 'integer', name: 'text', age: 'integer' }) });

/** The project `shop` on `adapter`, its manifest defining `macros` (their unique ids) besides the tests. */
function declare(adapter: string, tests: Entry[], macros: string[] = []) {
  const m = manifest(people, ...tests);
  (m['metadata'] as Entry)['adapter_type'] = adapter;
  m['macros'] = Object.fromEntries(
    macros.map((id) => [id, { unique_id: id, macro_sql: '', depends_on: { macros: [] } }]),
  );
  const [declaration] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
  if (!declaration) throw new Error('no declaration');
  return {
    declaration,
    rules: parse(declaration.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>,
  };
}

/** `test` is the one test not mapped, its reason holding `reason`, and no predicate was made. */
function expectOnlyRefused(result: ReturnType<typeof declare>, test: Entry, reason: string) {
  expect(result.rules['customPredicates']).toBeUndefined();
  expect(result.declaration.notMappedTests).toEqual([
    { test: test['unique_id'], reason: expect.stringContaining(reason) as unknown },
  ]);
}

const DBT_TESTS = [
  'macro.dbt.test_not_null',
  'macro.dbt.default__test_not_null',
  'macro.dbt.test_unique',
  'macro.dbt.default__test_unique',
  'macro.dbt.test_accepted_values',
  'macro.dbt.default__test_accepted_values',
];
const status = genericTest(
  'accepted_values',
  'model.shop.people',
  { values: ['a', 'b'] },
  { column: 'name' },
);
const unique = genericTest('unique', 'model.shop.people', {}, { column: 'id' });
const notNull = genericTest('not_null', 'model.shop.people', {}, { column: 'id' });
const expressionIsTrue = (expression: string) =>
  genericTest('expression_is_true', 'model.shop.people', { expression }, { namespace: 'dbt_utils' });

describe("a project's own macro for a test gds maps", () => {
  it('snowflake__test_accepted_values of the project (dbt dispatches to it first): not mapped, naming it', () => {
    expectOnlyRefused(
      declare('snowflake', [status], [...DBT_TESTS, 'macro.shop.snowflake__test_accepted_values']),
      status,
      'the project runs its own macro macro.shop.snowflake__test_accepted_values for accepted_values tests',
    );
  });

  // dbt-core's dispatch in the namespace `dbt` searches the root project, then dbt's own packages
  // (BaseDatabaseWrapper._get_search_packages: `dbt` is among the project's dependencies): another package's
  // default__test_unique is never run, only a `dispatch:` search_order (not in the manifest) would add it.
  it("another package's default__test_unique is not dispatched to: mapped; the project's own is, not mapped", () => {
    const packaged = declare(
      'postgres',
      [unique, notNull],
      [...DBT_TESTS, 'macro.audit.default__test_unique', 'macro.audit.postgres__test_unique'],
    );
    expect(packaged.declaration.notMappedTests).toEqual([]);
    expect(packaged.declaration.mappedTests.map((t) => t.rule)).toEqual(['required:id', 'grainKey']);
    const overridden = declare(
      'postgres',
      [unique, notNull],
      [...DBT_TESTS, 'macro.shop.default__test_unique'],
    );
    expect(overridden.declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining('macro.shop.default__test_unique') as unknown,
    ]);
    expect(overridden.rules['fieldOverrides']).toContainEqual({
      field: 'id',
      nullRate: { warn: 0, fail: 0 },
    });
    const elsewhere = declare(
      'postgres',
      [unique, notNull],
      [...DBT_TESTS, 'macro.shop.snowflake__test_unique'],
    );
    expect(elsewhere.declaration.notMappedTests).toEqual([]);
  });

  it("the project's own test_not_null replaces dbt's: not mapped, the column not required", () => {
    const { declaration, rules } = declare('duckdb', [notNull], [...DBT_TESTS, 'macro.shop.test_not_null']);
    expect(declaration.notMappedTests[0]?.reason).toContain('macro.shop.test_not_null');
    expect(declaration.columns.find((c) => c.name === 'id')?.required).toBeUndefined();
    expect(rules['fieldOverrides']).toContainEqual({ field: 'id', nullRate: { warn: 1, fail: 1 } });
  });

  it("dbt-bigquery's own bigquery__test_unique is dbt's: mapped; the project's default__ comes before it", () => {
    const adapters = declare(
      'bigquery',
      [unique, notNull],
      [...DBT_TESTS, 'macro.dbt_bigquery.bigquery__test_unique'],
    );
    expect(adapters.declaration.notMappedTests).toEqual([]);
    expect(adapters.declaration.mappedTests.map((t) => t.rule)).toEqual(['required:id', 'grainKey']);
    // The root project is searched with every prefix before dbt's packages are.
    const root = declare(
      'bigquery',
      [unique, notNull],
      [...DBT_TESTS, 'macro.dbt_bigquery.bigquery__test_unique', 'macro.shop.default__test_unique'],
    );
    expect(root.declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining('macro.shop.default__test_unique') as unknown,
    ]);
  });

  it("dbt_utils: the root project's default__test_accepted_range is searched before dbt_utils'; another package's is not", () => {
    const range = genericTest(
      'accepted_range',
      'model.shop.people',
      { min_value: 0 },
      { column: 'age', namespace: 'dbt_utils' },
    );
    const utils = ['macro.dbt_utils.test_accepted_range', 'macro.dbt_utils.default__test_accepted_range'];
    const root = declare('postgres', [range], [...utils, 'macro.shop.default__test_accepted_range']);
    expect(root.declaration.notMappedTests[0]?.reason).toContain('macro.shop.default__test_accepted_range');
    const other = declare('postgres', [range], [...utils, 'macro.audit.default__test_accepted_range']);
    expect(other.rules['customPredicates']).toEqual([expect.objectContaining({ sql: 'age >= 0' })]);
  });
});

describe("match_regex: the regex as the adapter's engine reads it", () => {
  const matches = (regex: string, extra: Entry = {}) => matchRegexTest('people', 'name', regex, extra);
  const regexOf = (adapter: string, regex: string, extra: Entry = {}) =>
    declare(adapter, [matches(regex, extra)]).rules['patternChecks']?.[0]?.['regex'];

  it("RE2 (DuckDB, BigQuery) and Snowflake: '.' matches no newline, as [^\\n] does in PostgreSQL (where '.' matches it)", () => {
    expect(regexOf('duckdb', '^.+$')).toBe('^[^\\n]+$');
    expect(regexOf('snowflake', '^a.c$', { is_raw: true })).toBe('^a[^\\n]c$');
    expect(regexOf('snowflake', '^[.a-z]+[[:alpha:].]?$')).toBe('^[.a-z]+[[:alpha:].]?$');
    expect(regexOf('duckdb', '^a\\.b$')).toBe('^a\\.b$');
    expect(regexOf('postgres', '^.+$')).toBe('^.+$');
  });

  it("RE2's classes hold ASCII only (PostgreSQL's follow the locale: é is \\w there): written as their ranges", () => {
    expect(regexOf('duckdb', '^\\w+@\\S+$')).toBe('^[0-9A-Za-z_]+@[^\\t\\n\\f\\r ]+$');
    expect(regexOf('bigquery', '^[[:alpha:]\\s-]+\\d?$', { is_raw: true })).toBe(
      '^[A-Za-z\\t\\n\\f\\r -]+[0-9]?$',
    );
    expect(regexOf('duckdb', '^[^[:upper:]]+$')).toBe('^[^A-Z]+$');
    expect(regexOf('postgres', '^\\w+$')).toBe('^\\w+$');
    const negated = declare('duckdb', [matches('^[\\W.]+$')]).declaration;
    expect(negated.notMappedTests[0]?.reason).toBe(
      'its class \\W inside a bracket holds other characters in RE2 than in PostgreSQL',
    );
  });

  it('\\b, a word boundary in RE2, is a backspace in PostgreSQL: not mapped on DuckDB and BigQuery, mapped on PostgreSQL', () => {
    const duckdb = declare('duckdb', [matches('\\bshop\\b')]).declaration;
    expect(duckdb.mappedTests).toEqual([]);
    expect(duckdb.notMappedTests[0]?.reason).toMatch(
      /its regex means another thing on PostgreSQL, where Gate 1 runs, than on duckdb: \\b means a backspace/,
    );
    const bigquery = declare('bigquery', [matches('\\bshop', { is_raw: true })]).declaration;
    expect(bigquery.notMappedTests[0]?.reason).toMatch(/than on bigquery/);
    expect(regexOf('postgres', '\\bshop')).toBe('\\bshop');
  });

  it("Databricks and Spark count the first match's length, other engines are unknown: not mapped, saying why", () => {
    for (const adapter of ['databricks', 'spark']) {
      const { declaration } = declare(adapter, [matches('^[0-9]*$')]);
      expect(declaration.mappedTests).toEqual([]);
      expect(declaration.notMappedTests[0]?.reason).toMatch(/length\(regexp_extract\(…, 0\)\)/);
    }
    for (const adapter of ['trino', 'redshift']) {
      const { declaration } = declare(adapter, [matches('^[a-z]+$')]);
      expect(declaration.notMappedTests[0]?.reason).toMatch(
        new RegExp(`gds does not know that ${adapter}'s regex engine reads a regex as PostgreSQL`),
      );
    }
  });
});

describe("an expression's division: a fraction on most warehouses, truncated in PostgreSQL", () => {
  const ratio = expressionIsTrue('age / 2 >= 1');

  it('Snowflake, BigQuery, DuckDB, Databricks: 1 / 2 is 0.5 there and 0 in PostgreSQL, so not mapped, saying why', () => {
    for (const adapter of ['snowflake', 'bigquery', 'duckdb', 'databricks']) {
      const { declaration, rules } = declare(adapter, [ratio]);
      expect(rules['customPredicates']).toBeUndefined();
      expect(declaration.notMappedTests[0]?.reason).toMatch(
        new RegExp(
          `its SQL divides \\(/\\): on ${adapter} an integer divided by an integer keeps its fraction`,
        ),
      );
    }
  });

  it('PostgreSQL and Redshift truncate too: mapped; a / in a string is no division', () => {
    expect(declare('postgres', [ratio]).rules['customPredicates']).toEqual([
      expect.objectContaining({ sql: 'age / 2 >= 1' }),
    ]);
    expect(declare('redshift', [ratio]).declaration.notMappedTests).toEqual([]);
    const slash = genericTest(
      'accepted_values',
      'model.shop.people',
      { values: ['a/b'] },
      { column: 'name' },
    );
    expect(declare('snowflake', [slash]).declaration.notMappedTests).toEqual([]);
  });
});

describe("dbt_utils.not_accepted_values: its macro's `value_field in (…)`", () => {
  const refused = (values: unknown[], extra: Entry = {}, column = 'name') =>
    genericTest(
      'not_accepted_values',
      'model.shop.people',
      { values, ...extra },
      { column, namespace: 'dbt_utils', id: `test.shop.not_accepted_values_${values.join('_')}.abc` },
    );

  it('a predicate NOT IN the values as dbt writes them (a NULL passes, as dbt never returns it)', () => {
    const { declaration, rules } = declare('postgres', [
      refused(['x', "it''s"]),
      // Numbers of a number column: on a text one PostgreSQL compares no text with a number (compared-types.test.ts).
      refused([0, 1.5], { quote: false }, 'age'),
    ]);
    expect(rules['customPredicates']?.map((p) => p['sql'])).toEqual([
      'age NOT IN (0, 1.5)',
      "name NOT IN ('x', 'it''s')",
    ]);
    expect(declaration.mappedTests.map((t) => t.rule)).toEqual([
      expect.stringMatching(/^predicate:/),
      expect.stringMatching(/^predicate:/),
    ]);
  });

  it("a value that breaks dbt's quoting is not mapped, as for accepted_values", () => {
    const { declaration } = declare('postgres', [refused(["O'Brien"])]);
    expect(declaration.notMappedTests[0]?.reason).toMatch(/dbt writes it between single quotes unescaped/);
  });
});

describe('dbt_utils.not_null_proportion: the share of NULLs above which its macro fails', () => {
  const proportion = (kwargs: Entry, config: Entry = {}, id = 'p') =>
    genericTest('not_null_proportion', 'model.shop.people', kwargs, {
      column: 'name',
      namespace: 'dbt_utils',
      config,
      id: `test.shop.not_null_proportion_${id}.abc`,
    });
  const rateOf = (...tests: Entry[]) => {
    const { declaration, rules } = declare('postgres', tests);
    return {
      declaration,
      nullRate: rules['fieldOverrides']?.find((o) => o['field'] === 'name')?.['nullRate'],
    };
  };

  it('at_least 0.9 fails above 10 % of NULLs, in decimal (a float 1 - 0.9 would fail exactly 10 %)', () => {
    const { declaration, nullRate } = rateOf(proportion({ at_least: 0.9 }));
    expect(nullRate).toEqual({ warn: 0.1, fail: 0.1 });
    expect(declaration.rules).toContain(
      `name: warns above 10 % NULL, fails above 10 % (dbt test test.shop.not_null_proportion_p.abc)`,
    );
  });

  it('severity warn only warns; with not_null (warn) the stricter limit of each holds', () => {
    expect(rateOf(proportion({ at_least: 0.95 }, { severity: 'warn' })).nullRate).toEqual({
      warn: 0.05,
      fail: 1,
    });
    const notNullWarn = genericTest(
      'not_null',
      'model.shop.people',
      {},
      { column: 'name', config: { severity: 'warn' } },
    );
    expect(rateOf(notNullWarn, proportion({ at_least: 0.75 })).nullRate).toEqual({ warn: 0, fail: 0.25 });
  });

  it('what no null rate expresses is not mapped: at_most below 1, group_by_columns, a where:', () => {
    const { declaration, nullRate } = rateOf(
      proportion({ at_least: 0.5, at_most: 0.9 }, {}, 'a'),
      proportion({ at_least: 0.5, group_by_columns: ['age'] }, {}, 'b'),
      proportion({ at_least: 0.5 }, { where: 'age > 1' }, 'c'),
    );
    expect(nullRate).toEqual({ warn: 1, fail: 1 });
    expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringMatching(/at_most 0.9: it fails a column with too few NULLs/),
      expect.stringMatching(/group_by_columns/),
      expect.stringMatching(/a where: condition/),
    ]);
  });
});

describe('SQL a test writes as it is, read as its warehouse reads it', () => {
  const inList = genericTest(
    'accepted_values',
    'model.shop.people',
    { values: ['a', 'b'] },
    { column: 'name', config: { where: 'name != "id"' } },
  );
  const noUnderscore = expressionIsTrue("name not like '%\\_%'");

  it('"id" is a string on BigQuery and the column id in PostgreSQL: not mapped, saying so', () => {
    const { declaration, rules } = declare('bigquery', [inList]);
    expect(rules['customPredicates']).toBeUndefined();
    expect(declaration.notMappedTests[0]?.reason).toBe(
      'its SQL (name != "id") writes "…", a string on bigquery and a column name in PostgreSQL, where Gate 1 runs: write the string between single quotes',
    );
    expect(declare('postgres', [inList]).declaration.notMappedTests).toEqual([]);
  });

  it('a backslash in a string escapes on Snowflake and is itself in PostgreSQL: not mapped there, mapped on PostgreSQL', () => {
    expect(declare('snowflake', [noUnderscore]).declaration.notMappedTests[0]?.reason).toMatch(
      /has a backslash in a string, which on snowflake escapes the character after it/,
    );
    expect(declare('postgres', [noUnderscore]).rules['customPredicates']).toEqual([
      expect.objectContaining({ sql: "name not like '%\\_%'" }),
    ]);
  });
});

describe('a column_name that is an expression', () => {
  it('not mapped, its reason saying it is an expression dbt tests as it is (not a missing column)', () => {
    const test = genericTest('not_null', 'model.shop.people', {}, { column: 'coalesce(name, age)' });
    const { declaration } = declare('postgres', [test]);
    expect(declaration.notMappedTests[0]?.reason).toBe(
      "its column_name coalesce(name, age) is an SQL expression, which dbt tests as it is; gds maps a test of one of the table's columns",
    );
    const missing = genericTest('not_null', 'model.shop.people', {}, { column: 'email' });
    expect(declare('postgres', [missing]).declaration.notMappedTests[0]?.reason).toMatch(
      /^the table has no column "email"/,
    );
  });
});

describe("balboa's real manifest (Snowflake, dbt 1.0.4)", needs(noSharedFixtures), () => {
  it("its unique test of manifest_exposure_id || '-' || output_feeds is reported as an expression", () => {
    const read = JSON.parse(
      readFileSync(`${sharedFixturesDir}real/dbt/balboa_snowflake_1.0.4.manifest.json`, 'utf8'),
    ) as unknown;
    const reasons = declareDbtProject({ manifest: read }, {}, dbtReader).declarations.flatMap((d) =>
      d.notMappedTests.map((t) => t.reason),
    );
    expect(reasons).toContain(
      "its column_name manifest_exposure_id || '-' || output_feeds is an SQL expression, which dbt tests as it is; gds maps a test of one of the table's columns",
    );
  });
});

describe("a where: applied by the project's own get_where_subquery", () => {
  const recent = genericTest(
    'not_null',
    'model.shop.people',
    {},
    { column: 'name', config: { where: 'age > 17' } },
  );
  const where = ['macro.dbt.get_where_subquery', 'macro.dbt.default__get_where_subquery'];

  it("dbt's own: the predicate guards the rows as dbt's subquery does", () => {
    expect(declare('postgres', [recent], where).rules['customPredicates']).toEqual([
      expect.objectContaining({ sql: 'NOT (age > 17) OR (name IS NOT NULL)' }),
    ]);
  });

  it("the project's (dbt's documented override for dynamic where:): a test with a where: is not mapped, naming it", () => {
    const result = declare(
      'postgres',
      [recent, notNull],
      [...where, 'macro.shop.default__get_where_subquery'],
    );
    expectOnlyRefused(
      result,
      recent,
      "its where: condition is applied by the project's own macro macro.shop.default__get_where_subquery",
    );
    expect(result.declaration.mappedTests.map((t) => t.rule)).toEqual(['required:id']);
  });

  it("another package's default__get_where_subquery is not dispatched to: mapped", () => {
    expect(
      declare('postgres', [recent], [...where, 'macro.audit.default__get_where_subquery']).rules[
        'customPredicates'
      ],
    ).toEqual([expect.objectContaining({ sql: 'NOT (age > 17) OR (name IS NOT NULL)' })]);
  });

  // The test's SQL calls get_where_subquery by its bare name, which the node's macro namespace resolves to the
  // root project's or dbt's (dbt-core's MacroNamespaceBuilder): another package's is not seen.
  it("another package's get_where_subquery is not called: mapped; the project's is, not mapped", () => {
    expect(
      declare('postgres', [recent], [...where, 'macro.audit.get_where_subquery']).rules['customPredicates'],
    ).toEqual([expect.objectContaining({ sql: 'NOT (age > 17) OR (name IS NOT NULL)' })]);
    expectOnlyRefused(
      declare('postgres', [recent], [...where, 'macro.shop.get_where_subquery']),
      recent,
      "its where: condition is applied by the project's own macro macro.shop.get_where_subquery",
    );
  });
});
