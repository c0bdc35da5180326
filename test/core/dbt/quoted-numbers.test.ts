// accepted_values (and its kin) with quote: true, its default, on a number column: dbt writes each value
// between quotes (`age in ('1','2')`), and the warehouse decides how a number compares with a string. Gate 1
// runs the predicate in PostgreSQL, which reads '1' as a number of the column's type; BigQuery and Trino never
// compare a number with a string (dbt's test errors), others may compare otherwise.
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { columns, genericTest, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

type Entry = Record<string, unknown>;

function declare(adapter: string, types: Record<string, string>, tests: Entry[]) {
  const m = manifest(model('people', { columns: columns(types) }), ...tests);
  (m['metadata'] as Entry)['adapter_type'] = adapter;
  const project = declareDbtProject({ manifest: m }, {}, dbtReader);
  const [declaration] = project.declarations;
  if (!declaration) throw new Error('no declaration');
  const rules = parse(declaration.gate1Yaml ?? '{}') as Record<string, unknown[] | undefined>;
  return { declaration, predicates: rules['customPredicates'] ?? [], warnings: project.warnings };
}

const accepted = (values: unknown[], extra: Entry = {}, name = 'accepted_values', namespace?: string) =>
  genericTest(
    name,
    'model.shop.people',
    { values, ...extra },
    {
      column: 'status',
      ...(namespace === undefined ? {} : { namespace }),
    },
  );

describe('quoted values on a number column', () => {
  it("BigQuery and Trino compare no number with a string: dbt's test errors, so not mapped, saying why", () => {
    for (const [adapter, type] of [
      ['bigquery', 'INT64'],
      ['bigquery', 'NUMERIC'],
      ['trino', 'integer'],
      ['athena', 'bigint'],
    ] as const) {
      const { declaration, predicates } = declare(adapter, { status: type }, [accepted([1, 2])]);
      expect(predicates).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('accepted_values') as unknown,
          reason: expect.stringMatching(
            new RegExp(
              `its column status is ${type} and dbt writes each value quoted \\('1', '2'\\): on ${adapter} .*so dbt's test errors.*quote: false`,
            ),
          ) as unknown,
        },
      ]);
    }
  });

  it('the same values quoted on a text column, or with quote: false, are mapped there', () => {
    expect(declare('bigquery', { status: 'STRING' }, [accepted([1, 2])]).predicates).toEqual([
      expect.objectContaining({ sql: "status IN ('1', '2')" }),
    ]);
    expect(declare('bigquery', { status: 'INT64' }, [accepted([1, 2], { quote: false })]).predicates).toEqual(
      [expect.objectContaining({ sql: 'status IN (1, 2)' })],
    );
  });

  it('not_accepted_values and be_in_set write their values so too: not mapped on BigQuery', () => {
    for (const test of [
      accepted([3], { quote_values: true }, 'not_accepted_values', 'dbt_utils'),
      accepted([3], {}, 'expect_column_values_to_be_in_set', 'dbt_expectations'),
    ])
      expect(declare('bigquery', { status: 'INT64' }, [test]).declaration.notMappedTests).toHaveLength(1);
  });

  it('Snowflake, Databricks: mapped with a warning unless each value is an integer as the column prints it', () => {
    for (const [adapter, type, values] of [
      ['snowflake', 'NUMBER', [1.5, 2]],
      ['databricks', 'int', ['01', '2']],
      ['spark', 'decimal(10,2)', [1.5]],
    ] as const) {
      const { declaration, predicates, warnings } = declare(adapter, { status: type }, [
        accepted([...values]),
      ]);
      expect(declaration.notMappedTests).toEqual([]);
      expect(predicates).toHaveLength(1);
      expect(warnings).toEqual([
        expect.stringMatching(
          new RegExp(
            // Snowflake's unquoted names are upper case.
            `its column (?:status|STATUS) is ${type.replace(/[()]/g, '\\$&')} and dbt writes each value quoted .*on ${adapter}`,
          ),
        ),
      ]);
    }
    // An integer column and integers written as it prints them: a number or a text comparison agree.
    expect(declare('databricks', { status: 'bigint' }, [accepted([1, 2])]).warnings).toEqual([]);
  });

  it('Snowflake converts a quoted integer to the NUMBER it is compared with, as Gate 1 reads it: mapped, no warning', () => {
    // Snowflake's catalog types every fixed-point column NUMBER, integers too; its columns' own type NUMBER(38,0).
    for (const type of ['NUMBER', 'NUMBER(38,0)', 'NUMBER(10,2)', 'FLOAT'])
      for (const values of [
        ['1', '2'],
        [1, 2],
        ['01', '-3'],
      ]) {
        const { declaration, predicates, warnings } = declare('snowflake', { status: type }, [
          accepted(values),
        ]);
        expect(declaration.notMappedTests, `${type} ${values.join()}`).toEqual([]);
        expect(predicates).toHaveLength(1);
        expect(warnings, `${type} ${values.join()}`).toEqual([]);
      }
  });

  it("Snowflake cannot convert a string that is no number to one: dbt's test errors, so not mapped, saying why", () => {
    for (const values of [['active', 'closed'], ['1', 'n/a'], ['']]) {
      const { declaration, predicates, warnings } = declare('snowflake', { status: 'NUMBER' }, [
        accepted(values),
      ]);
      expect(predicates).toEqual([]);
      expect(warnings).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('accepted_values') as unknown,
          reason: expect.stringMatching(
            /its column STATUS is NUMBER and dbt writes each value quoted .*: on snowflake .* is none \(Numeric value is not recognized\), so dbt's test errors/,
          ) as unknown,
        },
      ]);
    }
  });

  it("Snowflake converts 'NaN', 'inf', 'Infinity' to FLOAT's special values, as PostgreSQL's float reads them: mapped there, no warning", () => {
    const specials = ['NaN', 'nan', 'inf', '-inf', 'Infinity', '-INFINITY'];
    for (const type of ['FLOAT', 'DOUBLE', 'REAL', 'FLOAT8'])
      for (const values of [specials, ['1', 'NaN']]) {
        const { declaration, predicates, warnings } = declare('snowflake', { status: type }, [
          accepted(values),
        ]);
        expect(declaration.notMappedTests, `${type} ${values.join()}`).toEqual([]);
        expect(predicates).toEqual([
          expect.objectContaining({ sql: `"STATUS" IN (${values.map((v) => `'${v}'`).join(', ')})` }),
        ]);
        expect(warnings, `${type} ${values.join()}`).toEqual([]);
      }
    // On NUMBER they are no number (Numeric value 'NaN' is not recognized): dbt's test errors.
    for (const type of ['NUMBER', 'NUMBER(38,0)', 'NUMBER(10,2)']) {
      const { declaration, predicates } = declare('snowflake', { status: type }, [accepted(['1', 'NaN'])]);
      expect(predicates).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        expect.objectContaining({ reason: expect.stringContaining("'NaN' is none") as unknown }),
      ]);
    }
  });

  it("Snowflake's FLOAT takes what PostgreSQL's float input takes: a sign before inf, white space around, any case", () => {
    // PostgreSQL's float8in skips leading and trailing white space and reads NaN, [+-]Infinity and [+-]inf in
    // any case, as Snowflake's FLOAT does: both read each the same, so the predicate is mapped, no warning.
    const specials = ['+inf', ' NaN ', '\tinfinity', '+Infinity ', ' -inf', 'INF'];
    const { declaration, predicates, warnings } = declare('snowflake', { status: 'FLOAT' }, [
      accepted(specials),
    ]);
    expect(declaration.notMappedTests).toEqual([]);
    expect(predicates).toEqual([
      expect.objectContaining({ sql: `"STATUS" IN (${specials.map((v) => `'${v}'`).join(', ')})` }),
    ]);
    expect(warnings).toEqual([]);
    // What neither reads as a float stays refused: a word after inf, a space within it, inf on NUMBER.
    for (const [type, value] of [
      ['FLOAT', 'infinite'],
      ['FLOAT', 'in f'],
      ['NUMBER', '+inf'],
    ] as const) {
      const refused = declare('snowflake', { status: type }, [accepted(['1', value])]);
      expect(refused.predicates, `${type} ${value}`).toEqual([]);
      expect(refused.declaration.notMappedTests).toEqual([
        expect.objectContaining({ reason: expect.stringContaining(`'${value}' is none`) as unknown }),
      ]);
    }
  });

  it('PostgreSQL, Redshift, DuckDB read a quoted value as the column type, as Gate 1 does: mapped, no warning', () => {
    for (const adapter of ['postgres', 'redshift', 'duckdb']) {
      const { declaration, warnings } = declare(adapter, { status: 'numeric' }, [accepted([1.5, '01'])]);
      expect(declaration.notMappedTests).toEqual([]);
      expect(warnings).toEqual([]);
    }
  });
});
