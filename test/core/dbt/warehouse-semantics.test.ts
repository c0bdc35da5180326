// What a mapped dbt test computes on its warehouse that Gate 1, in PostgreSQL, would compute otherwise: the
// proportion dbt_utils.not_null_proportion divides (Snowflake and BigQuery round it), the classes of a
// Snowflake regex, the clock a where: reads, and the trailing spaces Fabric's `=` ignores.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { readSharedFixture } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { columns, genericTest, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

type Entry = Record<string, unknown>;

const people = model('people', {
  columns: columns({ id: 'integer', name: 'text', created_at: 'timestamp', age: 'integer' }),
});

/**
 * The project `shop` on `adapter`: its one table's declaration, gate1.yml and the plan's warnings; `macros`,
 * the manifest's macros (by unique id, their SQL).
 */
function declare(adapter: string, tests: Entry[], macros: Record<string, string> = {}) {
  const m = manifest(people, ...tests);
  (m['metadata'] as Entry)['adapter_type'] = adapter;
  m['macros'] = Object.fromEntries(
    Object.entries(macros).map(([id, sql]) => [
      id,
      {
        unique_id: id,
        name: id.split('.')[2],
        package_name: id.split('.')[1],
        macro_sql: sql,
        depends_on: { macros: [] },
      },
    ]),
  );
  const project = declareDbtProject({ manifest: m }, {}, dbtReader);
  const [declaration] = project.declarations;
  if (!declaration) throw new Error('no declaration');
  return {
    declaration,
    warnings: project.warnings,
    rules: parse(declaration.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>,
  };
}

const proportion = (atLeast: number | string, id = 'p', atMost?: number | string) =>
  genericTest(
    'not_null_proportion',
    'model.shop.people',
    { at_least: atLeast, ...(atMost === undefined ? {} : { at_most: atMost }) },
    { column: 'name', namespace: 'dbt_utils', id: `test.shop.not_null_proportion_${id}.abc` },
  );

const nullRateOf = (adapter: string, atLeast: number | string, macros: Record<string, string> = {}) =>
  // Snowflake folds the column's unquoted name to NAME.
  declare(adapter, [proportion(atLeast)], macros).rules['fieldOverrides']?.find(
    (o) => String(o['field']).toLowerCase() === 'name',
  )?.['nullRate'] as { warn: number; fail: number } | undefined;

/**
 * Whether dbt_utils' not_null_proportion fails a column of `rows` rows with `nulls` NULLs, its proportion
 * `(rows - nulls) / rows` rounded half up to `scale` decimals (as Snowflake's NUMBER and BigQuery's NUMERIC
 * division round it), then compared with at_least (`atLeast / 10^decimals`) exactly.
 */
function dbtFails(
  rows: bigint,
  nulls: bigint,
  atLeast: bigint,
  decimals: number,
  scale: number,
  mode: 'half up' | 'truncated' = 'half up',
): boolean {
  const unit = 10n ** BigInt(scale);
  const rounded =
    mode === 'half up' ? (2n * (rows - nulls) * unit + rows) / (2n * rows) : ((rows - nulls) * unit) / rows;
  return rounded * 10n ** BigInt(decimals) < atLeast * unit;
}

/**
 * For each row count, the NULL counts around the limit `fail` (where rounding decides) and a few others: the
 * gate's `nulls / rows > fail` fails exactly the columns `dbt` fails.
 */
function expectGateAsDbt(
  label: string,
  fail: number,
  rowCounts: bigint[],
  dbt: (rows: bigint, nulls: bigint) => boolean,
): void {
  for (const rows of rowCounts) {
    const around = BigInt(Math.floor(fail * Number(rows)));
    for (const nulls of [0n, 1n, 2n, around - 1n, around, around + 1n, around + 2n]) {
      if (nulls < 0n || nulls > rows) continue;
      const seen = { label, rows: String(rows), nulls: String(nulls) };
      expect({ ...seen, fails: Number(nulls) / Number(rows) > fail }).toEqual({
        ...seen,
        fails: dbt(rows, nulls),
      });
    }
  }
}

describe("dbt_utils.not_null_proportion: the proportion as the warehouse's division rounds it", () => {
  // dbt_utils writes `sum(case when col is null then 0 else 1 end) / cast(count(*) as numeric)` (0.x to 1.1)
  // or `… as {{ dbt.type_numeric() }}` (numeric(28,6)); on Snowflake an integer divided by either is a
  // NUMBER of scale 6 (max(s1, min(s1 + 6, 12))), rounded; on BigQuery a NUMERIC of scale 9, rounded half
  // away from zero.
  it('snowflake: 1 NULL in 2,500,000 rows is a proportion of 1.000000, which passes at_least 1: the gate fails above 0.00005 %', () => {
    expect(nullRateOf('snowflake', 1)).toEqual({ warn: 5e-7, fail: 5e-7 });
    expect(nullRateOf('snowflake', 0.9)).toEqual({ warn: 0.1000005, fail: 0.1000005 });
    // 0.99999951 to 6 decimals: a rounded proportion below it is 0.999999 at most.
    expect(nullRateOf('snowflake', 0.99999951)).toEqual({ warn: 5e-7, fail: 5e-7 });
    expect(nullRateOf('bigquery', 1)).toEqual({ warn: 5e-10, fail: 5e-10 });
    expect(nullRateOf('postgres', 1)).toEqual({ warn: 0, fail: 0 });
  });

  it("the gate's `nulls / rows > fail` fails exactly the columns dbt's rounded proportion fails", () => {
    const cases: Array<[string, number, bigint, number, number]> = [
      ['snowflake', 1, 1n, 0, 6],
      ['snowflake', 0.9, 9n, 1, 6],
      ['snowflake', 0.9999995, 9999995n, 7, 6],
      ['snowflake', 0.99999951, 99999951n, 8, 6],
      ['bigquery', 1, 1n, 0, 9],
      ['bigquery', 0.75, 75n, 2, 9],
    ];
    for (const [adapter, atLeast, scaled, decimals, scale] of cases)
      expectGateAsDbt(
        `${adapter} ${atLeast}`,
        nullRateOf(adapter, atLeast)?.fail ?? Number.NaN,
        [10n, 1_000_000n, 1_999_999n, 2_000_000n, 2_000_001n, 4_000_000n, 2_000_000_000n],
        (rows, nulls) => dbtFails(rows, nulls, scaled, decimals, scale),
      );
  });

  it('an adapter whose rounding gds does not know: mapped exactly, with a warning naming the test', () => {
    const { declaration, warnings } = declare('trino', [proportion(0.99)]);
    expect(declaration.mappedTests).toEqual([
      { test: 'test.shop.not_null_proportion_p.abc', rule: 'nullRate:name' },
    ]);
    const [warning, ...others] = warnings.filter((w) => w.includes('not_null_proportion'));
    expect(others).toEqual([]);
    expect(warning).toMatch(
      /^model\.shop\.people: test\.shop\.not_null_proportion_p\.abc: on trino gds does not know to how many decimals/,
    );
    expect(declare('snowflake', [proportion(0.99)]).warnings.join('\n')).not.toContain('not_null_proportion');
    expect(declare('postgres', [proportion(0.99)]).warnings.join('\n')).not.toContain('not_null_proportion');
  });
});

/** dbt_utils' default__test_not_null_proportion, dividing by `divisor` (as 0.x to 1.1, or later, write it). */
const proportionMacro = (divisor: string) => ({
  'macro.dbt_utils.default__test_not_null_proportion':
    'with validation as (\n  select\n    sum(case when {{ column_name }} is null then 0 else 1 end) / ' +
    `cast(count(*) as ${divisor}) as not_null_proportion\n  from {{ model }}\n)\nselect * from validation`,
  'macro.dbt.default__type_numeric':
    '{% macro default__type_numeric() %}\n    {{ return(api.Column.numeric_type("numeric", 28, 6)) }}\n{% endmacro %}',
  'macro.dbt.type_numeric': "{{ return(adapter.dispatch('type_numeric', 'dbt')()) }}",
});
const CAST_NUMERIC = proportionMacro('numeric');
const CAST_TYPE_NUMERIC = proportionMacro('{{ dbt.type_numeric() }}');

describe('dbt_utils.not_null_proportion on Spark, Databricks, Redshift, SQL Server and DuckDB: the rounding their documented rules give', () => {
  // Spark's DecimalPrecision (allowPrecisionLoss, its default): BIGINT sum / DECIMAL(10,0) is DECIMAL(31,11);
  // / DECIMAL(28,6) is DECIMAL(55,29), adjusted to DECIMAL(38,12); rounded HALF_UP.
  it('spark and databricks: 11 decimals with cast(count(*) as numeric), 12 with dbt.type_numeric(), and no warning', () => {
    for (const adapter of ['spark', 'databricks']) {
      expect(nullRateOf(adapter, 1, CAST_NUMERIC)).toEqual({ warn: 5e-12, fail: 5e-12 });
      expect(nullRateOf(adapter, 1, CAST_TYPE_NUMERIC)).toEqual({ warn: 5e-13, fail: 5e-13 });
      expect(nullRateOf(adapter, 0.9, CAST_TYPE_NUMERIC)).toEqual({
        warn: 0.1000000000005,
        fail: 0.1000000000005,
      });
      expect(declare(adapter, [proportion(0.99)], CAST_NUMERIC).warnings.join('\n')).not.toContain(
        'not_null_proportion',
      );
      expect(declare(adapter, [proportion(0.99)], CAST_TYPE_NUMERIC).warnings.join('\n')).not.toContain(
        'not_null_proportion',
      );
    }
  });

  it("spark: the gate's `nulls / rows > fail` fails exactly the columns Spark's rounded proportion fails", () => {
    const cases: Array<[Record<string, string>, number, bigint, number, number]> = [
      [CAST_NUMERIC, 1, 1n, 0, 11],
      [CAST_NUMERIC, 0.95, 95n, 2, 11],
      [CAST_TYPE_NUMERIC, 1, 1n, 0, 12],
      [CAST_TYPE_NUMERIC, 0.9, 9n, 1, 12],
      [CAST_TYPE_NUMERIC, 0.9999999999995, 9999999999995n, 13, 12],
    ];
    for (const [macros, atLeast, scaled, decimals, scale] of cases)
      expectGateAsDbt(
        `${atLeast} to ${scale} decimals`,
        nullRateOf('spark', atLeast, macros)?.fail ?? Number.NaN,
        [10n, 1_000_000n, 1_999_999_999n, 2_000_000_000n, 2_000_000_001n],
        (rows, nulls) => dbtFails(rows, nulls, scaled, decimals, scale),
      );
  });

  it('spark without the macro, or with a type_numeric of the project dispatched first: the warning stays', () => {
    const warned = (macros: Record<string, string>) =>
      declare('databricks', [proportion(0.99)], macros).warnings.filter((w) =>
        w.includes('not_null_proportion'),
      );
    expect(warned({})).toHaveLength(1);
    expect(warned({ ...CAST_TYPE_NUMERIC, 'macro.shop.spark__type_numeric': 'decimal(38, 2)' })).toHaveLength(
      1,
    );
    expect(warned(proportionMacro('double'))).toHaveLength(1);
    // Another package's own type_numeric (dbt_utils 0.8's) is not what dbt.type_numeric() dispatches to.
    expect(
      warned({ ...CAST_TYPE_NUMERIC, 'macro.dbt_utils.default__type_numeric': 'numeric(28, 6)' }),
    ).toEqual([]);
  });

  // Redshift keeps max(4, s1 + p2 - s2 + 1) decimals (19 over numeric, DECIMAL(18,0); 23 over numeric(28,6));
  // SQL Server max(6, s1 + p2 + 1), reduced to fit 38 digits (19; 22). Neither says whether it rounds or
  // truncates: where that cannot change the comparison with at_least for any row count, no warning.
  it('redshift and sql server: exact where the decimals they keep cannot decide, else the warning stays', () => {
    const warned = (adapter: string, atLeast: number, macros: Record<string, string>) =>
      declare(adapter, [proportion(atLeast)], macros).warnings.some((w) => w.includes('not_null_proportion'));
    expect(nullRateOf('redshift', 0.99, CAST_NUMERIC)).toEqual({ warn: 0.01, fail: 0.01 });
    expect(warned('redshift', 0.99, CAST_NUMERIC)).toBe(false);
    // 0.995 within 19 decimals: a proportion 10^-3 / rows below it reaches it when rounded, past 5·10^15 rows.
    expect(warned('redshift', 0.995, CAST_NUMERIC)).toBe(true);
    expect(warned('redshift', 0.995, CAST_TYPE_NUMERIC)).toBe(false);
    expect(warned('redshift', 0.99, {})).toBe(true);
    // SQL Server's INT sum and count(*) fail past 2^31 - 1 rows.
    expect(warned('sqlserver', 0.999999999, CAST_NUMERIC)).toBe(false);
    expect(warned('sqlserver', 0.9999999999, CAST_NUMERIC)).toBe(true);
    expect(warned('fabric', 0.999999999999, CAST_TYPE_NUMERIC)).toBe(false);
    for (const [adapter, atLeast, scaled, decimals, kept, rowsBelow] of [
      ['redshift', 0.99, 99n, 2, 19, 2n ** 53n],
      ['sqlserver', 0.999999999, 999999999n, 9, 19, 2n ** 31n],
    ] as const)
      for (const mode of ['half up', 'truncated'] as const)
        expectGateAsDbt(
          `${adapter} ${atLeast} ${mode}`,
          nullRateOf(adapter, atLeast, CAST_NUMERIC)?.fail ?? Number.NaN,
          [10n, 2_000_000_000n, rowsBelow - 1n],
          (rows, nulls) => dbtFails(rows, nulls, scaled, decimals, kept, mode),
        );
  });

  it("duckdb: its proportion is a DOUBLE, as the gate's share of NULLs: 1 - at_least, no warning", () => {
    expect(nullRateOf('duckdb', 1)).toEqual({ warn: 0, fail: 0 });
    expect(nullRateOf('duckdb', 0.9, CAST_TYPE_NUMERIC)).toEqual({ warn: 0.1, fail: 0.1 });
    expect(declare('duckdb', [proportion(0.99)]).warnings.join('\n')).not.toContain('not_null_proportion');
  });

  it("reads the divisor from the real dbt_utils macros' text", needs(noSharedFixtures), () => {
    const macrosOf = (file: string) => {
      const all = (JSON.parse(readSharedFixture(`real/dbt/${file}`)) as { macros: Record<string, Entry> })
        .macros;
      return Object.fromEntries(
        ['macro.dbt_utils.default__test_not_null_proportion', 'macro.dbt.default__type_numeric']
          .filter((id) => all[id] !== undefined)
          .map((id) => [id, String(all[id]?.['macro_sql'])]),
      );
    };
    // dbt_utils 0.8 (cast(count(*) as numeric)) and 1.x ({{ dbt.type_numeric() }}).
    expect(nullRateOf('spark', 1, macrosOf('balboa_snowflake_1.0.4.manifest.json'))).toEqual({
      warn: 5e-12,
      fail: 5e-12,
    });
    expect(nullRateOf('spark', 1, macrosOf('balboa_snowflake_1.8.8.manifest.json'))).toEqual({
      warn: 5e-13,
      fail: 5e-13,
    });
  });
});

// dbt_utils writes `not_null_proportion < {{ at_least }}`: what YAML read (PyYAML reads 1e-3, without a dot, as the
// string "1e-3", and 9.5E-1 as the float 0.95, which Python prints 0.95, and 1.0e-5 as 1e-05) is SQL as printed.
describe('dbt_utils.not_null_proportion with at_least or at_most written with an exponent', () => {
  const mapping = (adapter: string, tests: Entry[], macros: Record<string, string> = {}) => {
    const { declaration, warnings } = declare(adapter, tests, macros);
    return {
      mapped: declaration.mappedTests.map((t) => t.rule),
      notMapped: declaration.notMappedTests.map((t) => t.reason),
      warned: warnings.some((w) => w.includes('not_null_proportion')),
    };
  };

  it("a string 1e-3 or 9.5E-1 is the SQL number dbt's macro compares with: the same limit as 0.001 or 0.95", () => {
    expect(nullRateOf('postgres', '1e-3')).toEqual({ warn: 0.999, fail: 0.999 });
    expect(nullRateOf('postgres', '9.5E-1')).toEqual({ warn: 0.05, fail: 0.05 });
    expect(nullRateOf('postgres', '95e-2')).toEqual(nullRateOf('postgres', 0.95));
    expect(nullRateOf('postgres', '0.950')).toEqual(nullRateOf('postgres', 0.95));
    // A float Python prints with an exponent (1e-05): JSON and JavaScript read it as 0.00001.
    expect(nullRateOf('postgres', 1e-5)).toEqual({ warn: 0.99999, fail: 0.99999 });
    expect(nullRateOf('postgres', 1e-7)).toEqual({ warn: 0.9999999, fail: 0.9999999 });
  });

  it("the warehouse's rounding still applies: Snowflake, BigQuery and Spark fail exactly where dbt does", () => {
    expect(nullRateOf('snowflake', '9.5E-1')).toEqual(nullRateOf('snowflake', 0.95));
    expect(nullRateOf('snowflake', '1E0')).toEqual({ warn: 5e-7, fail: 5e-7 });
    expect(nullRateOf('bigquery', '1e-3')).toEqual(nullRateOf('bigquery', 0.001));
    expect(nullRateOf('spark', '9.99e-1', CAST_TYPE_NUMERIC)).toEqual(
      nullRateOf('spark', 0.999, CAST_TYPE_NUMERIC),
    );
    for (const [adapter, atLeast, scaled, decimals, scale] of [
      ['snowflake', '1e-3', 1n, 3, 6],
      ['snowflake', '99999951E-8', 99999951n, 8, 6],
      ['bigquery', '7.5e-1', 75n, 2, 9],
    ] as const)
      expectGateAsDbt(
        `${adapter} ${atLeast}`,
        nullRateOf(adapter, atLeast)?.fail ?? Number.NaN,
        [10n, 1_000_000n, 1_999_999n, 2_000_000n, 2_000_001n, 2_000_000_000n],
        (rows, nulls) => dbtFails(rows, nulls, scaled, decimals, scale),
      );
  });

  it('at_most written with an exponent: 1e0 or "10E-1" fails nothing and is mapped; 9e-1 is not', () => {
    expect(mapping('postgres', [proportion(0.5, 'a', '1e0')]).mapped).toEqual(['nullRate:name']);
    expect(mapping('postgres', [proportion(0.5, 'a', '10E-1')]).mapped).toEqual(['nullRate:name']);
    expect(mapping('postgres', [proportion(0.5, 'a', '9e-1')]).notMapped).toEqual([
      expect.stringMatching(/^its at_most "9e-1": it fails a column with too few NULLs/),
    ]);
  });

  it('an exponent gds cannot read exactly, or no number, is not mapped, saying why', () => {
    expect(mapping('postgres', [proportion('1e-20')]).notMapped).toEqual([
      'its at_least "1e-20" has 20 decimals; gds reads a limit of at most 15 exactly',
    ]);
    expect(mapping('postgres', [proportion('2e0')]).notMapped).toEqual([
      'its at_least "2e0" is no decimal from 0 to 1',
    ]);
    expect(mapping('postgres', [proportion('1e-3 or true')]).notMapped).toEqual([
      'its at_least "1e-3 or true" is no decimal from 0 to 1',
    ]);
    expect(mapping('postgres', [proportion(0.5, 'a', '1e400')]).notMapped).toEqual([
      'its at_most "1e400" has more digits than gds reads exactly',
    ]);
  });

  it('on SQL Server an exponent makes at_least a float, of some 15 decimals: the warning comes sooner', () => {
    // 0.999999 is a numeric; the proportion keeps 19 decimals, which no rounding moves past it under 2^31 rows.
    expect(mapping('sqlserver', [proportion(0.999999)], CAST_NUMERIC).warned).toBe(false);
    expect(mapping('sqlserver', [proportion('0.999999')], CAST_NUMERIC).warned).toBe(false);
    // T-SQL reads 9.99999e-1 as a float: the proportion is compared as a double, whose rounding may decide.
    expect(mapping('sqlserver', [proportion('9.99999e-1')], CAST_NUMERIC).warned).toBe(true);
    expect(declare('sqlserver', [proportion('9.99999e-1')], CAST_NUMERIC).warnings).toContainEqual(
      expect.stringContaining('its at_least, written with an exponent, may be read as a float'),
    );
    // Python prints the float 0.000001 as 1e-06.
    expect(mapping('sqlserver', [proportion(0.000001)], CAST_NUMERIC).warned).toBe(true);
    expect(mapping('sqlserver', [proportion('1e-2')], CAST_NUMERIC).warned).toBe(false);
    expect(nullRateOf('sqlserver', '9.99999e-1', CAST_NUMERIC)).toEqual({ warn: 0.000001, fail: 0.000001 });
  });
});

const matches = (regex: string, id = 'r') =>
  genericTest(
    'expect_column_values_to_match_regex',
    'model.shop.people',
    // is_raw: Snowflake's macro writes the regex between $$, BigQuery's as r'…', where a backslash is itself.
    { regex, is_raw: true },
    { column: 'name', namespace: 'dbt_expectations', id: `test.shop.match_${id}.abc` },
  );

describe("match_regex on Snowflake: its classes as Snowflake's documentation says they are", () => {
  const regexOf = (regex: string) =>
    declare('snowflake', [matches(regex)]).rules['patternChecks']?.[0]?.['regex'];

  it("\\d is 0-9 and \\w a-z, A-Z, _ or a digit (ASCII; PostgreSQL's \\w holds é): written as those ranges", () => {
    expect(regexOf('^\\w+$')).toBe('^[0-9A-Za-z_]+$');
    expect(regexOf('^\\d{3}-\\D$')).toBe('^[0-9]{3}-[^0-9]$');
    expect(regexOf('^[\\w.]+@\\W$')).toBe('^[0-9A-Za-z_.]+@[^0-9A-Za-z_]$');
    const { declaration } = declare('snowflake', [matches('^[\\W.]+$')]);
    expect(declaration.mappedTests).toEqual([]);
    expect(declaration.notMappedTests[0]?.reason).toBe(
      'its class \\W inside a bracket holds other characters on snowflake than in PostgreSQL',
    );
  });

  it('\\s and the POSIX classes, which Snowflake does not define beyond ASCII: mapped, with a warning naming the test and class', () => {
    const { declaration, warnings } = declare('snowflake', [
      matches('^[[:alpha:]]+$', 'alpha'),
      matches('^\\S+$', 'space'),
      matches('^[a-z]+$', 'plain'),
    ]);
    expect(declaration.notMappedTests).toEqual([]);
    const regexWarnings = warnings.filter((w) => w.includes('regex'));
    expect(regexWarnings).toEqual([
      expect.stringMatching(
        /^model\.shop\.people: test\.shop\.match_alpha\.abc: its regex's class \[:alpha:\]/,
      ),
      expect.stringMatching(/^model\.shop\.people: test\.shop\.match_space\.abc: its regex's class \\S/),
    ]);
    expect(regexWarnings[0]).toContain('é');
  });
});

describe('a where: reading the clock (current_date, now())', () => {
  const recent = (where: string, id = 'w') =>
    genericTest(
      'not_null',
      'model.shop.people',
      {},
      {
        column: 'id',
        config: { where },
        id: `test.shop.not_null_recent_${id}.abc`,
      },
    );

  it('is carried into the predicate as written, read when the gate runs: a warning names the test and says so', () => {
    for (const adapter of ['postgres', 'snowflake']) {
      const { rules, warnings } = declare(adapter, [recent('created_at >= current_date - 7')]);
      expect(rules['customPredicates']?.[0]?.['sql']).toMatch(
        /^NOT \("?(created_at|CREATED_AT)"? >= current_date - 7\) OR/,
      );
      const clock = warnings.filter((w) => w.includes('clock'));
      expect(clock).toEqual([
        expect.stringMatching(
          /^model\.shop\.people: test\.shop\.not_null_recent_w\.abc: its SQL reads the clock \(current_date\)/,
        ),
      ]);
      expect(clock[0]).toContain('--exclude not_null_recent_w');
    }
  });

  it('now() and current_timestamp warn too; a clock word inside a string, or no clock at all, does not', () => {
    const { warnings } = declare('postgres', [
      recent("created_at > now () - interval '1 day'", 'n'),
      recent('created_at <= CURRENT_TIMESTAMP', 't'),
      recent("name <> 'now()'", 'a'),
      recent('age > 1', 'b'),
    ]);
    expect(warnings.filter((w) => w.includes('clock'))).toEqual([
      expect.stringMatching(/not_null_recent_n\.abc: its SQL reads the clock \(now\(\)\)/),
      expect.stringMatching(/not_null_recent_t\.abc: its SQL reads the clock \(CURRENT_TIMESTAMP\)/),
    ]);
  });
});

describe("fabric: `=` ignores trailing spaces (ANSI padding), whatever the collation's case", () => {
  const tests = [
    genericTest('accepted_values', 'model.shop.people', { values: ['a'] }, { column: 'name' }),
    genericTest('unique', 'model.shop.people', {}, { column: 'name' }),
    genericTest('not_null', 'model.shop.people', {}, { column: 'id' }),
  ];

  it('the tests comparing text are mapped with a warning naming them and the trailing spaces, not case', () => {
    const { declaration, warnings } = declare('fabric', tests);
    expect(declaration.mappedTests).toHaveLength(3);
    const [warning, ...others] = warnings.filter((w) => w.includes('trailing spaces'));
    expect(others).toEqual([]);
    expect(warning).toMatch(/^model\.shop\.people: .*accepted_values_people_name.*unique_people_name/);
    expect(warning).not.toContain('not_null');
    expect(warning).toContain("'placed ' is 'placed'");
    expect(warning).not.toMatch(/case-insensitive/);
  });
});

describe("match_regex starting with PostgreSQL's embedded options (?b), (?e), (?q), … or a director ***=", () => {
  // PostgreSQL 9.7.3.4: an ARE may start with ***= (the rest a literal string), ***: or (?xyz), options that
  // change how the rest reads: b a basic regex, e an extended one, q a literal string, x expanded syntax,
  // n/m/p/w newline-sensitivity, c/i case, s/t the defaults. RE2 knows only i, m, s and U; Snowflake documents
  // none.
  const outcome = (adapter: string, regex: string) => {
    const { declaration, rules } = declare(adapter, [matches(regex)]);
    return declaration.mappedTests.length > 0
      ? { mapped: rules['patternChecks']?.[0]?.['regex'] }
      : { notMapped: declaration.notMappedTests[0]?.reason };
  };

  it('postgres reads them as the gate does: mapped as written', () => {
    for (const regex of ['(?b)^a+$', '(?e)^a+$', '(?q)a.b', '(?x)^a b$', '***=a.b'])
      expect(outcome('postgres', regex)).toEqual({ mapped: regex });
  });

  it('snowflake, bigquery, duckdb: (?b), (?e), (?q), (?x), (?n), … and ***= are not mapped, saying what PostgreSQL makes of them', () => {
    for (const adapter of ['snowflake', 'bigquery', 'duckdb']) {
      expect(outcome(adapter, '(?b)^a+$').notMapped).toMatch(
        /^its regex starts with the embedded option \(\?b\): PostgreSQL reads the rest as a basic regex/,
      );
      expect(outcome(adapter, '(?e)^a+$').notMapped).toMatch(
        /PostgreSQL reads the rest as an extended regex/,
      );
      // Before, each was a pattern check of another meaning: (?q)a[^\n]b, a literal string in PostgreSQL.
      expect(outcome(adapter, '(?q)a.b').notMapped).toMatch(/PostgreSQL reads the rest as a literal string/);
      expect(outcome(adapter, '***=a.b').notMapped).toMatch(/^its regex starts with \*\*\*=/);
      for (const regex of ['(?x)^a b$', '(?n)^a.$', '(?c)^a$', '(?p)^a$', '(?w)^a$', '(?t)^a$', '***:^a$'])
        expect(outcome(adapter, regex)).toEqual({
          notMapped: expect.stringMatching(/^its regex starts with/),
        });
    }
    expect(outcome('bigquery', '(?x)^a b$').notMapped).toMatch(/knows no flag x .*: dbt's test errors$/);
    expect(outcome('snowflake', '(?i)^abc$').notMapped).toMatch(/documents no embedded option/);
  });

  it("RE2's (?i) and (?s) mean what they mean in PostgreSQL: mapped, (?s)'s . left matching a newline", () => {
    for (const adapter of ['bigquery', 'duckdb']) {
      expect(outcome(adapter, '(?i)^a.c$')).toEqual({ mapped: '(?i)^a[^\\n]c$' });
      // Under (?s), RE2's . matches a newline, as PostgreSQL's does: before, [^\n] failed a\nb, which dbt passes.
      expect(outcome(adapter, '(?s)^a.b$')).toEqual({ mapped: '(?s)^a.b$' });
      expect(outcome(adapter, '(?is)^\\w.b$')).toEqual({ mapped: '(?is)^[0-9A-Za-z_].b$' });
    }
  });
});
