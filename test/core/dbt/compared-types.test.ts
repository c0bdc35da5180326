// Tests whose SQL compares values of two types: a relationships test's column with the referenced column
// (`child.from_field = parent.to_field`), accepted_values' quoted values on a boolean column
// (`flag in ('true','false')`), and quote: false numbers on a text column (`status in (1, 2)`). Gate 1 runs
// its checks in PostgreSQL; BigQuery coerces no STRING to BOOL or a number (a STRING literal only to a date or
// time type), Trino and Athena have no implicit cast between varchar and another type, PostgreSQL has no
// operator comparing text with a number (nor any other pair of these kinds): there dbt's test errors. Others
// coerce (Snowflake converts only 'true'/'false' implicitly to BOOLEAN, a VARCHAR to NUMBER), but a reference
// check between two columns runs in Gate 1's PostgreSQL, where it would fail on every run.
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

function declare(adapter: string, nodes: Entry[]) {
  const m = manifest(...nodes);
  (m['metadata'] as Entry)['adapter_type'] = adapter;
  const project = declareDbtProject({ manifest: m }, { select: ['people'] }, dbtReader);
  const [declaration] = project.declarations;
  if (!declaration) throw new Error('no declaration');
  const rules = parse(declaration.gate1Yaml ?? '{}') as Record<string, unknown[] | undefined>;
  return { declaration, predicates: rules['customPredicates'] ?? [], warnings: project.warnings };
}

describe('relationships between columns of different types', () => {
  const related = (adapter: string, child: string, parent: string) =>
    declare(adapter, [
      model('people', { columns: columns({ customer_id: child }) }),
      model('customers', { columns: columns({ id: parent }) }),
      genericTest(
        'relationships',
        'model.shop.people',
        { to: "ref('customers')", field: 'id' },
        { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.people'] },
      ),
    ]);

  it("BigQuery, Trino, Athena, PostgreSQL compare no number with a string: dbt's test errors, not mapped", () => {
    for (const [adapter, child, parent] of [
      ['bigquery', 'INT64', 'STRING'],
      ['trino', 'bigint', 'varchar'],
      ['athena', 'integer', 'varchar(10)'],
      ['postgres', 'integer', 'text'],
      ['bigquery', 'BOOL', 'INT64'],
    ] as const) {
      const { declaration } = related(adapter, child, parent);
      expect(declaration.mappedTests).toEqual([]);
      expect(declaration.columns.find((c) => c.name === 'customer_id')?.references).toBeUndefined();
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('relationships') as unknown,
          reason: expect.stringMatching(
            new RegExp(
              `its column customer_id is ${child.replace(/[()]/g, '\\$&')} and the referenced analytics\\.customers\\.id is ${parent.replace(/[()]/g, '\\$&')}: on ${adapter} .*so dbt's test errors`,
            ),
          ) as unknown,
        },
      ]);
    }
  });

  it("Snowflake and the others coerce one to the other, but Gate 1's check in PostgreSQL could not run: not mapped", () => {
    for (const [adapter, child, parent] of [
      ['snowflake', 'NUMBER(38,0)', 'VARCHAR(16777216)'],
      ['databricks', 'bigint', 'string'],
    ] as const) {
      const { declaration, warnings } = related(adapter, child, parent);
      expect(declaration.mappedTests).toEqual([]);
      expect(
        declaration.columns.find((c) => c.name.toLowerCase() === 'customer_id')?.references,
      ).toBeUndefined();
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('relationships') as unknown,
          reason: expect.stringMatching(
            new RegExp(
              `is ${child.replace(/[()]/g, '\\$&')} and the referenced .* on ${adapter} dbt's test compares them after coercing .*Gate 1 checks the reference in PostgreSQL.*fail on every run`,
            ),
          ) as unknown,
        },
      ]);
      expect(warnings).toEqual([]);
    }
  });

  it('a date or timestamp with a time of day, money with another number: PostgreSQL compares neither, not mapped', () => {
    // operator does not exist: time without time zone = date; money = numeric.
    for (const [adapter, child, parent] of [
      ['postgres', 'date', 'time without time zone'],
      ['snowflake', 'TIMESTAMP_NTZ', 'TIME'],
      ['postgres', 'money', 'numeric'],
    ] as const) {
      const { declaration } = related(adapter, child, parent);
      expect(declaration.mappedTests, `${child} ${parent}`).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('relationships') as unknown,
          reason: expect.stringMatching(
            new RegExp(`is ${child} and the referenced .* is ${parent}`),
          ) as unknown,
        },
      ]);
    }
  });

  it('columns of one kind (two number types, two text types, a date and a timestamp) or of an unknown type: mapped, no warning', () => {
    for (const [adapter, child, parent] of [
      ['bigquery', 'INT64', 'NUMERIC'],
      ['postgres', 'character varying(10)', 'text'],
      ['postgres', 'date', 'timestamp with time zone'],
      ['snowflake', 'TIME', 'TIME(9)'],
      ['bigquery', 'INT64', null],
    ] as const) {
      const { declaration, warnings } = related(adapter, child, parent as string);
      expect(declaration.mappedTests).toHaveLength(1);
      expect(warnings).toEqual([]);
    }
  });
});

describe('accepted_values on a boolean column, and quote: false numbers on a text column', () => {
  const accepted = (adapter: string, type: string, values: unknown[], extra: Entry = {}) =>
    declare(adapter, [
      model('people', { columns: columns({ flag: type }) }),
      genericTest('accepted_values', 'model.shop.people', { values, ...extra }, { column: 'flag' }),
    ]);

  it("quoted values on a BOOL column: BigQuery, Trino and Athena compare no boolean with a string, dbt's test errors", () => {
    for (const [adapter, type] of [
      ['bigquery', 'BOOL'],
      ['trino', 'boolean'],
      ['athena', 'boolean'],
    ] as const) {
      const { declaration, predicates } = accepted(adapter, type, ['true', 'false']);
      expect(predicates).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('accepted_values') as unknown,
          reason: expect.stringMatching(
            new RegExp(
              `its column flag is ${type} and dbt writes each value quoted .*on ${adapter} .*quote: false`,
            ),
          ) as unknown,
        },
      ]);
    }
  });

  it("Snowflake reads 'true' and 'false' as booleans, as PostgreSQL does: mapped; other words warn", () => {
    const plain = accepted('snowflake', 'BOOLEAN', ['true', 'false']);
    expect(plain.predicates).toHaveLength(1);
    expect(plain.warnings).toEqual([]);
    const other = accepted('snowflake', 'BOOLEAN', ['yes', 't']);
    expect(other.predicates).toHaveLength(1);
    expect(other.warnings).toEqual([expect.stringMatching(/its column FLAG is BOOLEAN .*on snowflake/)]);
    expect(accepted('postgres', 'boolean', ['yes', 't']).warnings).toEqual([]);
  });

  it('quote: false numbers on a text column: PostgreSQL, where Gate 1 runs, compares no text with a number, not mapped', () => {
    for (const adapter of ['postgres', 'snowflake', 'bigquery']) {
      const { declaration, predicates } = accepted(adapter, 'text', [1, 2], { quote: false });
      expect(predicates).toEqual([]);
      expect(declaration.notMappedTests).toEqual([
        {
          test: expect.stringContaining('accepted_values') as unknown,
          reason: expect.stringMatching(
            /is text and quote: false writes 1, 2 .*PostgreSQL, where Gate 1 runs/,
          ),
        },
      ]);
    }
    // money = integer: no such operator either.
    const money = accepted('postgres', 'money', [1, 2], { quote: false });
    expect(money.predicates).toEqual([]);
    expect(money.declaration.notMappedTests).toEqual([
      {
        test: expect.stringContaining('accepted_values') as unknown,
        reason: expect.stringMatching(/is money and quote: false writes 1, 2 .*write the values as strings/),
      },
    ]);
    // Quoted, on the text column, or numbers on a number column: mapped.
    expect(accepted('postgres', 'money', [1, 2]).predicates).toHaveLength(1);
    expect(accepted('postgres', 'text', [1, 2]).predicates).toHaveLength(1);
    expect(accepted('postgres', 'integer', [1, 2], { quote: false }).predicates).toHaveLength(1);
  });
});
