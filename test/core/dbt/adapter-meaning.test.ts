// What a dbt test's SQL means on its adapter: the case an unquoted column name is folded to, a value dbt
// writes between quotes unescaped, and a collation that compares text without case.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { columns, genericTest, manifest, matchRegexTest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

type Entry = Record<string, unknown>;

/** A catalog listing each model's columns as the warehouse holds them, by model name. */
function catalogOf(tables: Record<string, string[]>): Entry {
  return {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' },
    nodes: Object.fromEntries(
      Object.entries(tables).map(([table, names]) => [
        `model.shop.${table}`,
        {
          unique_id: `model.shop.${table}`,
          metadata: { schema: 'analytics', name: table },
          columns: Object.fromEntries(names.map((name, i) => [name, { name, type: 'text', index: i + 1 }])),
        },
      ]),
    ),
    sources: {},
  };
}

/** One model `people` on `adapter`, its columns as the catalog lists them when `catalog` is given. */
function declare(adapter: string, tests: Entry[], catalog?: string[], documented: Entry = {}) {
  const m = manifest(model('people', { columns: documented }), ...tests);
  (m['metadata'] as Entry)['adapter_type'] = adapter;
  const artifacts =
    catalog === undefined ? { manifest: m } : { manifest: m, catalog: catalogOf({ people: catalog }) };
  const project = declareDbtProject(artifacts, {}, dbtReader);
  const [declaration] = project.declarations;
  if (!declaration) throw new Error('no declaration');
  return { declaration, warnings: project.warnings };
}

const notNull = (column: string) => genericTest('not_null', 'model.shop.people', {}, { column });

describe("a test's column, folded as the adapter folds an unquoted name", () => {
  it('postgres: an unquoted Email is email to dbt, so against a column "Email" dbt errors: not mapped, naming both', () => {
    const { declaration } = declare('postgres', [notNull('Email')], ['id', 'Email']);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests).toEqual([
      {
        test: 'test.shop.not_null_people_Email.abc',
        reason: expect.stringMatching(
          /column Email is unquoted, so dbt's SQL on postgres reads it as email; the table's column is "Email" \(another case\)/,
        ) as unknown,
      },
    ]);
  });

  it('postgres: an unquoted name reaching the lower-case column, and a quoted one its exact name, are mapped', () => {
    expect(
      declare('postgres', [notNull('EMAIL')], ['id', 'email']).declaration.mappedTests.map((t) => t.rule),
    ).toEqual(['required:email']);
    expect(
      declare('postgres', [notNull('"Email"')], ['id', 'Email']).declaration.mappedTests.map((t) => t.rule),
    ).toEqual(['required:Email']);
  });

  it('postgres: a column with quote: true, which dbt writes quoted ("Email"), held as email: not mapped', () => {
    const { declaration } = declare('postgres', [notNull('"Email"')], ['id', 'email'], {
      Email: { name: 'Email', quote: true, data_type: 'text', meta: {} },
    });
    expect(declaration.mappedTests).toEqual([]);
    const reason = declaration.notMappedTests[0]?.reason;
    expect(reason).toMatch(
      /column "Email" is quoted, so dbt's SQL on postgres reads it as Email; the table's column is "email"/,
    );
    expect(reason).not.toMatch(/set quote: true/);
  });

  it('snowflake: an unquoted email is EMAIL, so a column created as "Email" errors; EMAIL is mapped', () => {
    const mixed = declare('snowflake', [notNull('email')], ['ID', 'Email']).declaration;
    expect(mixed.notMappedTests[0]?.reason).toMatch(/reads it as EMAIL; the table's column is "Email"/);
    expect(
      declare('snowflake', [notNull('email')], ['ID', 'EMAIL']).declaration.mappedTests.map((t) => t.rule),
    ).toEqual(['required:EMAIL']);
  });

  it.each(['bigquery', 'sqlserver', 'synapse', 'databricks', 'duckdb'])(
    '%s: column names are case-insensitive, so Email reaches "EMAIL"',
    (adapter) => {
      const { declaration } = declare(adapter, [notNull('Email')], ['ID', 'EMAIL']);
      expect(declaration.mappedTests.map((t) => t.rule)).toEqual(['required:EMAIL']);
    },
  );

  it('fabric: column names are case-sensitive under its default collation, and T-SQL folds no name', () => {
    const { declaration } = declare('fabric', [notNull('Email')], ['ID', 'EMAIL']);
    expect(declaration.notMappedTests[0]?.reason).toMatch(
      /column Email is unquoted, so dbt's SQL on fabric reads it as Email; the table's column is "EMAIL"/,
    );
  });

  it('a combination of columns: one in another case is not mapped', () => {
    const { declaration } = declare(
      'postgres',
      [
        genericTest(
          'unique_combination_of_columns',
          'model.shop.people',
          { combination_of_columns: ['id', 'Email'] },
          { namespace: 'dbt_utils' },
        ),
      ],
      ['id', 'Email'],
    );
    expect(declaration.notMappedTests[0]?.reason).toMatch(/column Email is unquoted.*"Email"/);
  });

  it('quote_columns: true quotes each column as dbt_utils and dbt_expectations do (adapter.quote)', () => {
    const combination = (kind: string, names: string[], namespace: string) =>
      genericTest(
        kind,
        'model.shop.people',
        {
          ...(kind === 'unique_combination_of_columns'
            ? { combination_of_columns: names }
            : { column_list: names, ignore_row_if: 'any_value_is_missing' }),
          quote_columns: true,
        },
        { namespace },
      );
    for (const [kind, namespace] of [
      ['unique_combination_of_columns', 'dbt_utils'],
      ['expect_compound_columns_to_be_unique', 'dbt_expectations'],
    ] as const) {
      // PostgreSQL: "Email" quoted reaches the column Email, which unquoted would not.
      const postgres = declare('postgres', [combination(kind, ['id', 'Email'], namespace)], ['id', 'Email']);
      expect(postgres.declaration.notMappedTests, kind).toEqual([]);
      expect(postgres.declaration.mappedTests, kind).toHaveLength(1);
      // Snowflake: "email" quoted is not the column EMAIL, which unquoted it would be: dbt's test errors.
      const snowflake = declare(
        'snowflake',
        [combination(kind, ['id', 'email'], namespace)],
        ['ID', 'EMAIL'],
      );
      expect(snowflake.declaration.mappedTests, kind).toEqual([]);
      expect(snowflake.declaration.notMappedTests[0]?.reason, kind).toMatch(
        /column "id" is quoted, so dbt's SQL on snowflake reads it as id; the table's column is "ID"/,
      );
    }
  });

  it('without a catalog the columns are not known exactly: matched as before', () => {
    const { declaration } = declare('postgres', [notNull('Email')], undefined, {
      Email: { name: 'Email', data_type: 'text', meta: {} },
    });
    expect(declaration.mappedTests.map((t) => t.rule)).toEqual(['required:email']);
  });
});

describe('accepted_values: a value dbt writes between single quotes unescaped', () => {
  const accepted = (values: unknown[], extra: Entry = {}) =>
    genericTest('accepted_values', 'model.shop.people', { values, ...extra }, { column: 'name' });
  const predicates = (d: ReturnType<typeof declare>['declaration']) =>
    (parse(d.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>> | undefined>)[
      'customPredicates'
    ];

  it("O'Brien breaks dbt's SQL ('O'Brien'): not mapped, saying so", () => {
    const { declaration } = declare('postgres', [accepted(['Smith', "O'Brien"])], ['name']);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests[0]?.reason).toMatch(
      /its value "O'Brien": dbt writes it between single quotes unescaped \('O'Brien'\)/,
    );
  });

  it("a value whose quotes are doubled is the literal dbt writes ('it''s' is it's): mapped as dbt reads it", () => {
    const { declaration } = declare('postgres', [accepted(["it''s"])], ['name']);
    expect(declaration.notMappedTests).toEqual([]);
    expect(predicates(declaration)?.[0]?.['sql']).toBe("name IN ('it''s')");
  });

  it('a backslash: itself on PostgreSQL, an escape on BigQuery (not mapped there)', () => {
    const postgres = declare('postgres', [accepted(['a\\b'])], ['name']).declaration;
    expect(predicates(postgres)?.[0]?.['sql']).toBe("name IN ('a\\b')");
    const bigquery = declare('bigquery', [accepted(['a\\b'])], ['name']).declaration;
    expect(bigquery.notMappedTests[0]?.reason).toMatch(/on bigquery a backslash in a string escapes/);
  });

  it('quote: false writes the value as SQL: a quote there is the SQL the user wrote', () => {
    const { declaration } = declare('postgres', [accepted(["'x'"], { quote: false })], ['name']);
    expect(predicates(declaration)?.[0]?.['sql']).toBe("name IN ('x')");
  });

  it('dbt_expectations in_set: the same', () => {
    const { declaration } = declare(
      'postgres',
      [
        genericTest(
          'expect_column_values_to_be_in_set',
          'model.shop.people',
          { value_set: ["O'Brien"] },
          { column: 'name', namespace: 'dbt_expectations' },
        ),
      ],
      ['name'],
    );
    expect(declaration.notMappedTests[0]?.reason).toMatch(/unescaped/);
  });
});

describe('an adapter whose default collation compares text without case', () => {
  const tests = [
    genericTest('accepted_values', 'model.shop.people', { values: ['a'] }, { column: 'name' }),
    genericTest('unique', 'model.shop.people', {}, { column: 'name' }),
    notNull('id'),
  ];

  it.each(['sqlserver', 'synapse'])(
    '%s: the tests comparing text are mapped with a warning naming them',
    (adapter) => {
      const { declaration, warnings } = declare(adapter, tests, ['id', 'name']);
      expect(declaration.mappedTests).toHaveLength(3);
      const [warning, ...others] = warnings.filter((w) => w.includes('collation'));
      expect(others).toEqual([]);
      expect(warning).toMatch(/^model\.shop\.people: .*accepted_values_people_name.*unique_people_name/);
      expect(warning).not.toContain('not_null');
      expect(warning).toMatch(/case-insensitive/);
      expect(warning).toContain("it also compares text ignoring trailing spaces ('placed ' is 'placed'");
    },
  );

  it("mysql (8's default collation is NO PAD): case, not trailing spaces", () => {
    const [warning] = declare('mysql', tests, ['id', 'name']).warnings.filter((w) => w.includes('collation'));
    expect(warning).toMatch(/case-insensitive/);
    expect(warning).not.toContain('trailing spaces');
  });

  it('postgres compares with case: no warning', () => {
    expect(declare('postgres', tests, ['id', 'name']).warnings.join('\n')).not.toContain('collation');
  });
});

describe('match_regex: the regex dbt writes between single quotes unescaped', () => {
  const matches = (regex: string, extra: Entry = {}) => matchRegexTest('people', 'name', regex, extra);
  const patterns = (d: ReturnType<typeof declare>['declaration']) =>
    (parse(d.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>> | undefined>)[
      'patternChecks'
    ];

  it("a quote breaks dbt's SQL ('^[a-z']+$'): not mapped, saying so", () => {
    const { declaration } = declare('postgres', [matches("^[a-z']+$")], ['name']);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests[0]?.reason).toMatch(
      /its regex "\^\[a-z'\]\+\$": dbt writes it between single quotes unescaped \('\^\[a-z'\]\+\$'\)/,
    );
  });

  it("a doubled quote is one quote to the warehouse: the regex dbt's SQL matches is mapped", () => {
    const { declaration } = declare('postgres', [matches("^[a-z'']+$")], ['name']);
    expect(declaration.notMappedTests).toEqual([]);
    expect(patterns(declaration)?.[0]?.['regex']).toBe("^[a-z']+$");
  });

  it('a backslash: itself on PostgreSQL, an escape in a Snowflake string (not mapped there)', () => {
    const postgres = declare('postgres', [matches('^\\d+$')], ['name']).declaration;
    expect(patterns(postgres)?.[0]?.['regex']).toBe('^\\d+$');
    const snowflake = declare('snowflake', [matches('^\\d+$')], ['NAME']).declaration;
    expect(snowflake.mappedTests).toEqual([]);
    expect(snowflake.notMappedTests[0]?.reason).toMatch(/on snowflake a backslash in a string escapes/);
  });

  it('is_raw on Snowflake writes $$…$$: a backslash and a quote are themselves', () => {
    const { declaration } = declare('snowflake', [matches("^\\d'+$", { is_raw: true })], ['NAME']);
    // Snowflake's \d is 0-9 (warehouse-semantics.test.ts: Snowflake's classes).
    expect(patterns(declaration)?.[0]?.['regex']).toBe("^[0-9]'+$");
  });

  it("is_raw on BigQuery writes r'…': a backslash is itself, a quote still ends the string", () => {
    const raw = declare('bigquery', [matches('^\\d+$', { is_raw: true })], ['name']).declaration;
    // RE2's \d is [0-9] (test-meaning.test.ts: RE2's classes).
    expect(patterns(raw)?.[0]?.['regex']).toBe('^[0-9]+$');
    const quoted = declare('bigquery', [matches("^a''b$", { is_raw: true })], ['name']).declaration;
    expect(quoted.notMappedTests[0]?.reason).toMatch(/its regex/);
  });

  it('under a condition the predicate holds the regex as dbt reads it', () => {
    const { declaration } = declare(
      'postgres',
      [matches("^it''s$", { row_condition: 'name is not null' })],
      ['name'],
    );
    const predicates = (
      parse(declaration.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>
    )['customPredicates'];
    expect(predicates?.[0]?.['sql']).toBe("NOT (name is not null) OR (name::text ~ '^it''s$')");
  });
});

describe("match_regex on PostgreSQL: dbt_expectations' postgres__regexp_instr decides what a NULL does", () => {
  const matches = genericTest(
    'expect_column_values_to_match_regex',
    'model.shop.people',
    { regex: '^[a-z]+$' },
    { column: 'name', namespace: 'dbt_expectations' },
  );
  /** The project on `adapter`, its manifest holding dbt_expectations' postgres__regexp_instr as `sql`. */
  const declareWith = (adapter: string, sql: string) => {
    const m = manifest(model('people', { columns: columns({ name: 'text' }) }), matches);
    (m['metadata'] as Entry)['adapter_type'] = adapter;
    m['macros'] = {
      'macro.dbt_expectations.postgres__regexp_instr': {
        unique_id: 'macro.dbt_expectations.postgres__regexp_instr',
        macro_sql: sql,
        depends_on: { macros: [] },
      },
    };
    const [declaration] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
    if (!declaration) throw new Error('no declaration');
    return {
      declaration,
      rules: parse(declaration.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>,
    };
  };
  // dbt-expectations 0.8.4 and later (0.10.x): no match (a NULL too) counts 0, and `0 > 0` fails the row.
  const current =
    "{% macro postgres__regexp_instr(source_value, regexp, position, occurrence, is_raw, flags) %}\ncoalesce(array_length((select regexp_matches({{ source_value }}, '{{ regexp }}', '{{ flags }}')), 1), 0)\n{% endmacro %}";
  // Before 0.8.4: no match is NULL, `NULL > 0` is no failure, so the test fails no row.
  const before =
    "{% macro postgres__regexp_instr(source_value, regexp, position, occurrence, is_raw) %}\narray_length((select regexp_matches({{ source_value }}, '{{ regexp }}')), 1)\n{% endmacro %}";

  it('0.8.4 and later: a NULL fails, as in dbt (a pattern check would pass it): a predicate', () => {
    const { declaration, rules } = declareWith('postgres', current);
    expect(rules['patternChecks']).toBeUndefined();
    expect(rules['customPredicates']).toEqual([
      expect.objectContaining({ sql: "name IS NOT NULL AND name::text ~ '^[a-z]+$'", severity: 'HARD_FAIL' }),
    ]);
    expect(declaration.mappedTests[0]?.rule).toMatch(/^predicate:/);
  });

  it('before 0.8.4 dbt fails no row on postgres: not mapped, saying why', () => {
    const { declaration } = declareWith('postgres', before);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests[0]?.reason).toMatch(/fails no row.*update dbt_expectations/);
  });

  it('another adapter does not call postgres__regexp_instr: still a pattern check', () => {
    const { rules } = declareWith('duckdb', current);
    expect(rules['patternChecks']?.[0]).toMatchObject({ column: 'name', regex: '^[a-z]+$' });
  });
});

describe("dbt_expectations' uniqueness: its version's expect_compound_columns_to_be_unique decides the NULLs", () => {
  const compound = genericTest(
    'expect_compound_columns_to_be_unique',
    'model.shop.people',
    { column_list: ['name', 'city'] },
    { namespace: 'dbt_expectations', id: 'test.shop.compound.1' },
  );
  const unique = genericTest(
    'expect_column_values_to_be_unique',
    'model.shop.people',
    {},
    { column: 'name', namespace: 'dbt_expectations', id: 'test.shop.unique_name.2' },
  );
  /** The project, its manifest holding dbt_expectations' expect_compound_columns_to_be_unique as `sql`. */
  const declareWith = (sql: string) => {
    const m = manifest(
      model('people', { columns: columns({ name: 'text', city: 'text' }) }),
      compound,
      unique,
    );
    (m['metadata'] as Entry)['adapter_type'] = 'postgres';
    const id = 'macro.dbt_expectations.test_expect_compound_columns_to_be_unique';
    m['macros'] = { [id]: { unique_id: id, macro_sql: sql, depends_on: { macros: [] } } };
    const [declaration] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
    if (!declaration) throw new Error('no declaration');
    const rules = parse(declaration.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>;
    return { declaration, uniqueChecks: rules['uniqueChecks'] };
  };
  const grouped =
    'group by {% for column in columns -%}{{ column }}{% if not loop.last %},{% endif %}{%- endfor %}\nhaving count(*) > 1';
  // A dbt-expectations release of the dbt 1.0 era (balboa's dbt 1.0.4 manifest): row_condition_ext is set from ignore_row_if, and the query never uses it.
  const ignoring = `{% set row_condition_ext %}{% if ignore_row_if == "all_values_are_missing" %}(...){% endif %}{% endset %}\nselect * from {{ model }} where 1=1 {% if row_condition %} and {{ row_condition }} {% endif %}\n${grouped}`;
  // Later: the query filters on it.
  const applying = `{%- set row_condition_ext -%}{{ dbt_expectations.ignore_row_if_expression(ignore_row_if, columns) }}{%- endset -%}\nselect * from {{ model }} where 1=1 {%- if row_condition_ext %} and {{ row_condition_ext }} {% endif %}\n${grouped}`;

  it('a version that never applies ignore_row_if groups NULL as a value, as dbt_utils: checks counting NULL as a value', () => {
    const { declaration, uniqueChecks } = declareWith(ignoring);
    expect(declaration.notMappedTests).toEqual([]);
    expect(declaration.contract?.grainKeyColumns).toEqual(['name']);
    expect(uniqueChecks).toEqual([
      { name: 'compound', columns: ['name', 'city'], severity: 'HARD_FAIL', nullsDistinct: false },
    ]);
  });

  it('a version that applies it skips the rows it names', () => {
    const { declaration, uniqueChecks } = declareWith(applying);
    expect(declaration.contract?.grainKeyColumns).toBeUndefined();
    expect(uniqueChecks).toEqual([{ name: 'unique_name', columns: ['name'], severity: 'HARD_FAIL' }]);
    expect(declaration.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringContaining('all_values_are_missing'),
    ]);
  });
});

describe("a doubled quote on a warehouse that does not read '' as one quote", () => {
  it("bigquery: accepted_values it''s is not mapped", () => {
    const { declaration } = declare(
      'bigquery',
      [genericTest('accepted_values', 'model.shop.people', { values: ["it''s"] }, { column: 'name' })],
      ['name'],
    );
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests[0]?.reason).toMatch(/on bigquery '' in a string is not one quote/);
  });
});

describe("relationships: the target's column, reached as the adapter resolves field:", () => {
  /** people.customer_id related to customers' `field`, the catalog listing customers' columns as given. */
  const related = (adapter: string, field: string, customers: string[] | undefined) => {
    const test = genericTest(
      'relationships',
      'model.shop.people',
      { to: "ref('customers')", field },
      { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.people'] },
    );
    const m = manifest(
      model('people', { columns: columns({ customer_id: 'text' }) }),
      model('customers', { columns: columns({ CustomerId: 'text' }) }),
      test,
    );
    (m['metadata'] as Entry)['adapter_type'] = adapter;
    const catalog = catalogOf({
      people: ['customer_id'],
      ...(customers === undefined ? {} : { customers }),
    });
    const project = declareDbtProject({ manifest: m, catalog }, { select: ['people'] }, dbtReader);
    const [declaration] = project.declarations;
    if (!declaration) throw new Error('no declaration');
    return declaration;
  };

  it('postgres: field CustomerId is customerid to dbt, so against a column "CustomerId" dbt errors: not mapped', () => {
    const d = related('postgres', 'CustomerId', ['CustomerId']);
    expect(d.mappedTests).toEqual([]);
    expect(d.notMappedTests[0]?.reason).toMatch(
      /its field CustomerId is unquoted, so dbt's SQL on postgres reads it as customerid; the column of analytics\.customers is "CustomerId" \(another case\)/,
    );
  });

  it('postgres: field CustomerId reaches a column customerid, and a quoted "CustomerId" its exact name', () => {
    expect(
      related('postgres', 'CustomerId', ['customerid']).columns.find((c) => c.name === 'customer_id')
        ?.references,
    ).toBe('analytics.customers.customerid');
    expect(
      related('postgres', '"CustomerId"', ['CustomerId']).columns.find((c) => c.name === 'customer_id')
        ?.references,
    ).toBe('analytics.customers.CustomerId');
  });

  it("a field the target's catalog does not hold: dbt's query fails, not mapped", () => {
    expect(related('postgres', 'client_id', ['customerid']).notMappedTests[0]?.reason).toMatch(
      /analytics\.customers has no column "client_id"/,
    );
  });

  it('bigquery compares column names without case: CustomerId reaches CUSTOMERID', () => {
    expect(
      related('bigquery', 'CustomerId', ['CUSTOMERID']).columns.find((c) => c.name === 'customer_id')
        ?.references,
    ).toBe('analytics.customers.CUSTOMERID');
  });

  it('without the target in the catalog its columns are not known exactly: matched as before', () => {
    expect(
      related('postgres', 'CustomerId', undefined).columns.find((c) => c.name === 'customer_id')?.references,
    ).toBe('analytics.customers.customerid');
  });
});

describe("a contract's foreign_key: the target's column, reached as the adapter resolves it", () => {
  /** people.customer_id's foreign key, to_columns or the SQL before dbt 1.9, customers' columns as the catalog lists them. */
  const constrained = (adapter: string, constraint: Entry, customers: string[] | undefined) => {
    const m = manifest(
      model('people', {
        config: { enabled: true, materialized: 'table', contract: { enforced: true } },
        columns: {
          customer_id: { name: 'customer_id', data_type: 'text', constraints: [constraint] },
        },
        depends_on: { nodes: ['model.shop.customers'] },
      }),
      // Without the catalog's columns, customers' are not known: a name is folded as the adapter folds it.
      model('customers', customers === undefined ? {} : { columns: columns({ CustomerId: 'text' }) }),
    );
    (m['metadata'] as Entry)['adapter_type'] = adapter;
    const catalog = catalogOf({ people: ['customer_id'], ...(customers === undefined ? {} : { customers }) });
    const [d] = declareDbtProject({ manifest: m, catalog }, { select: ['people'] }, dbtReader).declarations;
    if (!d) throw new Error('no declaration');
    return {
      references: d.columns.find((c) => c.name === 'customer_id')?.references,
      notMapped: d.notMappedTests.map((t) => t.reason),
    };
  };
  const written = (column: string): Entry => ({
    type: 'foreign_key',
    expression: `analytics.customers (${column})`,
  });
  const to = (column: string): Entry => ({
    type: 'foreign_key',
    to: "ref('customers')",
    to_columns: [column],
  });

  it('postgres: an unquoted CustomerId is customerid, so against a column "CustomerId" dbt fails: not mapped', () => {
    for (const constraint of [written('CustomerId'), to('CustomerId')]) {
      const { references, notMapped } = constrained('postgres', constraint, ['CustomerId']);
      expect(references).toBeUndefined();
      expect(notMapped).toEqual([
        expect.stringMatching(
          /its foreign key's column CustomerId is unquoted, so dbt's SQL on postgres reads it as customerid; the column of analytics\.customers is "CustomerId" \(another case\), so dbt's build of the table fails on its foreign key: write the foreign key's column \(to_columns, or the column of its SQL\) as the warehouse names the column, quoted \("CustomerId"\)/,
        ),
      ]);
    }
  });

  it('postgres: a quoted name is the column of exactly that name', () => {
    expect(constrained('postgres', written('"CustomerId"'), ['CustomerId']).references).toBe(
      'analytics.customers.CustomerId',
    );
    expect(constrained('postgres', written('"customerid"'), ['CustomerId']).notMapped).toEqual([
      expect.stringMatching(/its .* is quoted, so dbt's SQL on postgres reads it as customerid/),
    ]);
  });

  it("without the target's columns: a quoted name kept as written, an unquoted one folded", () => {
    expect(constrained('postgres', written('"CustomerId"'), undefined).references).toBe(
      'analytics.customers.CustomerId',
    );
    expect(constrained('postgres', written('CustomerId'), undefined).references).toBe(
      'analytics.customers.customerid',
    );
  });

  it('postgres: an unquoted CustomerId reaches a column customerid; duckdb matches without case', () => {
    for (const constraint of [written('CustomerId'), to('CustomerId')]) {
      expect(constrained('postgres', constraint, ['customerid']).references).toBe(
        'analytics.customers.customerid',
      );
      expect(constrained('duckdb', constraint, ['CUSTOMERID']).references).toBe(
        'analytics.customers.CUSTOMERID',
      );
      // BigQuery never enforces a foreign key (dbt writes it `not enforced`): no reference, said why.
      expect(constrained('bigquery', constraint, ['CUSTOMERID'])).toEqual({
        references: undefined,
        notMapped: [expect.stringMatching(/bigquery does not enforce a foreign_key constraint/)],
      });
    }
  });
});

describe('a contract constraint on a column with quote: true', () => {
  it('postgres: dbt creates the column quoted ("Email") and constrains it so: mapped on Email', () => {
    const m = manifest(
      model('people', {
        config: { enabled: true, materialized: 'table', contract: { enforced: true } },
        columns: {
          id: { name: 'id', data_type: 'integer' },
          Email: { name: 'Email', data_type: 'text', quote: true, constraints: [{ type: 'not_null' }] },
        },
      }),
    );
    const project = declareDbtProject(
      { manifest: m, catalog: catalogOf({ people: ['id', 'Email'] }) },
      {},
      dbtReader,
    );
    const [declaration] = project.declarations;
    expect(declaration?.notMappedTests).toEqual([]);
    expect(declaration?.mappedTests.map((t) => t.rule)).toEqual(['required:Email']);
  });
});
