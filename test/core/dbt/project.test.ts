// declareDbtProject on small hand-written manifests: one rule per test kind, selector and column source.
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DbtManifestError,
  DbtSelectionError,
  declareDbtProject,
  prepareDbtReader,
} from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import type { DbtDeclaration } from '../../../src/core/dbt/types.js';
import { validateGate1 } from '../../../src/core/gate1/index.js';
import { columns, genericTest, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

const orders = model('orders', {
  description: 'One row per order.',
  columns: columns({ order_id: 'integer', customer_id: 'integer', status: 'text', amount: 'numeric' }),
  depends_on: { nodes: ['model.shop.customers'] },
});
const customers = model('customers', { columns: columns({ customer_id: 'integer', name: 'text' }) });

function one(...tests: Record<string, unknown>[]): DbtDeclaration {
  const project = declareDbtProject(
    { manifest: manifest(orders, customers, ...tests) },
    { select: ['orders'] },
    dbtReader,
  );
  const [declaration] = project.declarations;
  if (!declaration) throw new Error('no declaration');
  if (declaration.gate1Yaml !== undefined) {
    const result = validateGate1(declaration.gate1Yaml, {
      fileName: 'gate1.yml',
      columns: declaration.columns.map((c) => c.name),
    });
    expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  }
  return declaration;
}

const gate1 = (d: DbtDeclaration) =>
  parse(d.gate1Yaml ?? '{}') as Record<string, Array<Record<string, unknown>>>;

/** The null-rate limits gate1.yml gives a column. */
const nullRate = (d: DbtDeclaration, field: string) =>
  gate1(d)['fieldOverrides']?.find((o) => o['field'] === field)?.['nullRate'];

describe('tests become Gate 1 rules', () => {
  it('not_null: the column is required and its null rate may not exceed 0', () => {
    const test = genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id' });
    const d = one(test);
    expect(d.columns.find((c) => c.name === 'order_id')?.required).toBe(true);
    expect(nullRate(d, 'order_id')).toEqual({ warn: 0, fail: 0 });
    expect(d.mappedTests).toEqual([{ test: test['unique_id'], rule: 'required:order_id' }]);
    expect(d.gate1Yaml).toContain(`# dbt test ${String(test['unique_id'])}`);
  });

  it('not_null with severity warn: a warning null rate, the column not required', () => {
    const d = one(
      genericTest('not_null', 'model.shop.orders', {}, { column: 'status', config: { severity: 'warn' } }),
    );
    expect(d.columns.find((c) => c.name === 'status')?.required).toBeUndefined();
    expect(nullRate(d, 'status')).toEqual({ warn: 0, fail: 1 });
    expect(d.mappedTests[0]?.rule).toBe('nullRate:status');
  });

  it('a column without not_null may be NULL in any share of rows, as in dbt; the plan lists the rule', () => {
    const d = one(genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id' }));
    for (const column of ['customer_id', 'status', 'amount'])
      expect(nullRate(d, column)).toEqual({ warn: 1, fail: 1 });
    expect(d.gate1Yaml).toContain('# no not_null test: in dbt the column may be NULL');
    expect(d.rules).toContain(
      'status: may be NULL in any share of rows (no not_null test: in dbt the column may be NULL)',
    );
    expect(d.rules).toContain(`order_id: never NULL (dbt test ${d.mappedTests[0]?.test ?? ''})`);
    // A table with no test at all still says so to the service (whose own default would fail above 50 %).
    expect(nullRate(one(), 'status')).toEqual({ warn: 1, fail: 1 });
  });

  it('meta.gds null_rate of the model or of a column asks for a null-rate rule; a bad one is a warning', () => {
    const withMeta = model('orders', {
      ...orders,
      meta: { gds: { null_rate: { warn: 0.1, fail: 0.5 } } },
      columns: {
        ...columns({ order_id: 'integer', customer_id: 'integer', amount: 'numeric' }),
        status: { name: 'status', data_type: 'text', meta: { gds: { null_rate: { warn: 0, fail: 0.2 } } } },
        note: {
          name: 'note',
          data_type: 'text',
          config: { meta: { gds: { null_rate: { warn: 2, fail: 1 } } } },
        },
      },
    });
    const project = declareDbtProject(
      { manifest: manifest(withMeta, customers) },
      { select: ['orders'] },
      dbtReader,
    );
    const [d] = project.declarations;
    if (!d) throw new Error('no declaration');
    expect(nullRate(d, 'amount')).toEqual({ warn: 0.1, fail: 0.5 });
    expect(nullRate(d, 'status')).toEqual({ warn: 0, fail: 0.2 });
    expect(nullRate(d, 'note')).toEqual({ warn: 0.1, fail: 0.5 });
    expect(d.rules).toContain('status: warns above 0 % NULL, fails above 20 % (meta.gds null_rate)');
    expect(project.warnings).toEqual([expect.stringMatching(/column note: meta.gds null_rate .* left out/)]);
  });

  it('unique with not_null: the grain key, with a grain type', () => {
    const test = genericTest('unique', 'model.shop.orders', {}, { column: 'order_id' });
    const notNull = genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id' });
    const d = one(test, notNull);
    expect(d.contract).toEqual({ grainKeyColumns: ['order_id'], grainType: 'ONE_PER_ENTITY' });
    expect(d.mappedTests).toContainEqual({ test: test['unique_id'], rule: 'grainKey' });
  });

  it('unique without not_null: a uniqueness check skipping NULLs (as dbt), never the grain key', () => {
    const test = genericTest('unique', 'model.shop.orders', {}, { column: 'order_id' });
    const d = one(test);
    expect(d.contract).toBeUndefined();
    expect(gate1(d)['uniqueChecks']).toEqual([
      { name: 'unique_orders_order_id', columns: ['order_id'], severity: 'HARD_FAIL' },
    ]);
    expect(d.mappedTests).toEqual([{ test: test['unique_id'], rule: 'unique:unique_orders_order_id' }]);
  });

  it('a unique_combination_of_columns beside the grain key compares NULL as a value, as dbt_utils groups rows', () => {
    const d = one(
      genericTest('unique', 'model.shop.orders', {}, { column: 'order_id', id: 'test.shop.unique_id.1' }),
      genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id', id: 'test.shop.nn_id.2' }),
      genericTest(
        'unique_combination_of_columns',
        'model.shop.orders',
        { combination_of_columns: ['customer_id', 'status'] },
        { namespace: 'dbt_utils', id: 'test.shop.combo.3' },
      ),
    );
    expect(d.contract?.grainKeyColumns).toEqual(['order_id']);
    expect(gate1(d)['uniqueChecks']).toEqual([
      { name: 'combo', columns: ['customer_id', 'status'], severity: 'HARD_FAIL', nullsDistinct: false },
    ]);
  });

  it('several unique tests and unique_combination_of_columns: one grain key, every other a uniqueness check', () => {
    const combo = genericTest(
      'unique_combination_of_columns',
      'model.shop.orders',
      { combination_of_columns: ['customer_id', 'order_id'] },
      { namespace: 'dbt_utils', id: 'test.shop.combo.1' },
    );
    const single = genericTest(
      'unique',
      'model.shop.orders',
      {},
      { column: 'status', id: 'test.shop.unique_status.2' },
    );
    const second = genericTest(
      'unique',
      'model.shop.orders',
      {},
      { column: 'amount', id: 'test.shop.unique_amount.3' },
    );
    const d = one(combo, single, second);
    // A unique column with a not_null test comes first.
    const keyed = one(
      single,
      second,
      genericTest('not_null', 'model.shop.orders', {}, { column: 'amount', id: 'test.shop.nn_amount.4' }),
    );
    expect(keyed.contract?.grainKeyColumns).toEqual(['amount']);
    // As dbt infers a primary key: a combination of columns before a unique column without not_null.
    expect(d.contract?.grainKeyColumns).toEqual(['customer_id', 'order_id']);
    expect(d.notMappedTests).toEqual([]);
    expect(gate1(d)['uniqueChecks']).toEqual([
      { name: 'unique_amount', columns: ['amount'], severity: 'HARD_FAIL' },
      { name: 'unique_status', columns: ['status'], severity: 'HARD_FAIL' },
    ]);
    expect(d.mappedTests.map((t) => t.rule).sort()).toEqual([
      'grainKey',
      'unique:unique_amount',
      'unique:unique_status',
    ]);
    expect(d.gate1Yaml).toContain('# dbt test test.shop.unique_status.2');
    expect(d.rules).toContain('unique_status: no value of (status) twice (HARD_FAIL)');
  });

  describe('expect_compound_columns_to_be_unique skips the rows its ignore_row_if names, as dbt_expectations', () => {
    const compound = (ignoreRowIf?: string) =>
      genericTest(
        'expect_compound_columns_to_be_unique',
        'model.shop.orders',
        {
          column_list: ['customer_id', 'status'],
          ...(ignoreRowIf === undefined ? {} : { ignore_row_if: ignoreRowIf }),
        },
        { namespace: 'dbt_expectations', id: 'test.shop.compound.1' },
      );
    const notNull = (column: string) =>
      genericTest('not_null', 'model.shop.orders', {}, { column, id: `test.shop.nn_${column}.2` });

    it('any_value_is_missing: a uniqueness check skipping rows with a NULL, not the grain key', () => {
      const d = one(compound('any_value_is_missing'));
      expect(d.contract).toBeUndefined();
      expect(gate1(d)['uniqueChecks']).toEqual([
        { name: 'compound', columns: ['customer_id', 'status'], severity: 'HARD_FAIL' },
      ]);
      // With one column required, rows with a NULL in the other are still skipped.
      const partly = one(compound('any_value_is_missing'), notNull('customer_id'));
      expect(partly.contract).toBeUndefined();
      expect(gate1(partly)['uniqueChecks']).toHaveLength(1);
    });

    it('every column required: the grain key, whichever rows it skips', () => {
      const d = one(compound('any_value_is_missing'), notNull('customer_id'), notNull('status'));
      expect(d.contract?.grainKeyColumns).toEqual(['customer_id', 'status']);
    });

    it('all_values_are_missing (the default) with a column required: the grain key (an all-NULL row fails not_null)', () => {
      const d = one(compound(), notNull('status'));
      expect(d.contract?.grainKeyColumns).toEqual(['customer_id', 'status']);
      expect(d.notMappedTests).toEqual([]);
    });

    it('all_values_are_missing without a required column: not mapped, saying why and what to change', () => {
      const d = one(compound());
      expect(d.contract).toBeUndefined();
      expect(gate1(d)['uniqueChecks']).toBeUndefined();
      expect(d.notMappedTests).toEqual([
        {
          test: 'test.shop.compound.1',
          reason: expect.stringMatching(
            /all_values_are_missing .* add a not_null test .* any_value_is_missing/,
          ),
        },
      ]);
    });
  });

  it('unique with severity warn is a WARN uniqueness check, not the grain key', () => {
    const d = one(
      genericTest('unique', 'model.shop.orders', {}, { column: 'order_id', config: { severity: 'warn' } }),
    );
    expect(d.contract).toBeUndefined();
    expect(gate1(d)['uniqueChecks']).toEqual([
      { name: expect.any(String), columns: ['order_id'], severity: 'WARN' },
    ]);
    expect(d.notMappedTests).toEqual([]);
  });

  it('accepted_values: a predicate holding the values, quoted unless quote: false', () => {
    const quoted = one(
      genericTest(
        'accepted_values',
        'model.shop.orders',
        { values: ['placed', "o''brien"] },
        { column: 'status' },
      ),
    );
    expect(gate1(quoted)['customPredicates']).toEqual([
      { name: expect.any(String), sql: "status IN ('placed', 'o''brien')", severity: 'HARD_FAIL' },
    ]);
    expect(quoted.mappedTests[0]?.rule).toMatch(/^predicate:/);
    const raw = one(
      genericTest(
        'accepted_values',
        'model.shop.orders',
        { values: [1, 2], quote: false },
        { column: 'amount' },
      ),
    );
    expect(gate1(raw)['customPredicates']?.[0]?.['sql']).toBe('amount IN (1, 2)');
  });

  // dbt reports a NULL as not accepted only in expect_column_values_to_be_in_set (its left join finds no value
  // for it); a Gate 1 predicate fails a row only when it is false.
  it.each([
    ['accepted_values', null, "status IN ('placed', 'shipped')"],
    [
      'expect_column_values_to_be_in_set',
      'dbt_expectations',
      "status IS NOT NULL AND status IN ('placed', 'shipped')",
    ],
    ['expect_column_values_to_not_be_in_set', 'dbt_expectations', "status NOT IN ('placed', 'shipped')"],
  ])('%s: a predicate that fails NULL rows only where dbt does', (name, namespace, sql) => {
    const d = one(
      genericTest(
        name,
        'model.shop.orders',
        { values: ['placed', 'shipped'], value_set: ['placed', 'shipped'] },
        { column: 'status', ...(namespace === null ? {} : { namespace }) },
      ),
    );
    expect(d.notMappedTests).toEqual([]);
    expect(gate1(d)['customPredicates']).toEqual([{ name: expect.any(String), sql, severity: 'HARD_FAIL' }]);
  });

  it('severity warn becomes WARN; a where: condition guards the predicate', () => {
    const d = one(
      genericTest(
        'accepted_values',
        'model.shop.orders',
        { values: ['placed'] },
        { column: 'status', config: { severity: 'warn', where: 'amount > 0' } },
      ),
    );
    expect(gate1(d)['customPredicates']?.[0]).toMatchObject({
      sql: "NOT (amount > 0) OR (status IN ('placed'))",
      severity: 'WARN',
    });
  });

  // dbt filters the model by where: and the test's query by its own condition: a row is checked only when both hold.
  it.each([
    ['not_null', null, { row_condition: "status = 'placed'" }, 'amount IS NOT NULL'],
    [
      'expect_column_values_to_be_in_set',
      'dbt_expectations',
      { value_set: [1], quote_values: false, row_condition: "status = 'placed'" },
      'amount IS NOT NULL AND amount IN (1)',
    ],
    [
      'expect_column_values_to_be_between',
      'dbt_expectations',
      { min_value: 0, row_condition: "status = 'placed'" },
      'amount >= 0',
    ],
    [
      'expect_column_values_to_match_regex',
      'dbt_expectations',
      { regex: '^[0-9]+$', row_condition: "status = 'placed'" },
      "amount::text ~ '^[0-9]+$'",
    ],
    [
      'expression_is_true',
      'dbt_utils',
      { expression: '>= 0', condition: "status = 'placed'" },
      'amount >= 0',
    ],
  ])('%s: its own condition and a where: both guard the predicate', (name, namespace, kwargs, check) => {
    const d = one(
      genericTest(name, 'model.shop.orders', kwargs, {
        column: 'amount',
        config: { where: 'order_id > 100' },
        ...(namespace === null ? {} : { namespace }),
      }),
    );
    expect(gate1(d)['customPredicates']).toEqual([
      {
        name: expect.any(String),
        sql: `NOT (status = 'placed') OR NOT (order_id > 100) OR (${check})`,
        severity: 'HARD_FAIL',
      },
    ]);
  });

  it("thresholds: only those that let failing rows pass are refused, not dbt's defaults or what the severity ignores", () => {
    const notNull = (config: Record<string, unknown>) =>
      one(
        genericTest(
          'not_null',
          'model.shop.orders',
          {},
          {
            column: 'order_id',
            config: { fail_calc: 'count(*)', warn_if: '!= 0', error_if: '!= 0', ...config },
          },
        ),
      );
    expect(notNull({}).mappedTests[0]?.rule).toBe('required:order_id');
    // The same as != 0 for a count of failing rows.
    for (const error_if of ['!=0', '> 0', '>0', '>= 1', '<> 0'])
      expect(notNull({ error_if }).mappedTests[0]?.rule, error_if).toBe('required:order_id');
    // severity error fails on error_if alone; warn_if only says when to warn below it.
    expect(notNull({ warn_if: '> 10' }).mappedTests[0]?.rule).toBe('required:order_id');
    // severity warn ignores error_if.
    expect(notNull({ severity: 'warn', error_if: '> 100' }).mappedTests[0]?.rule).toBe('nullRate:order_id');
    expect(notNull({ error_if: '> 100' }).notMappedTests[0]?.reason).toMatch(
      /^its thresholds \(error_if > 100\) let some failing rows pass/,
    );
    expect(notNull({ severity: 'warn', warn_if: '> 10' }).notMappedTests[0]?.reason).toMatch(
      /^its thresholds \(warn_if > 10\)/,
    );
    expect(notNull({ fail_calc: 'sum(n)' }).notMappedTests[0]?.reason).toMatch(
      /^its thresholds \(fail_calc sum\(n\)\)/,
    );
  });

  it('a dbt unit test (dbt 1.8+) is listed as not mapped, on its model or among the other tests', () => {
    const unitTest = (model: string) => ({
      unique_id: `unit_test.shop.${model}.test_${model}_logic`,
      resource_type: 'unit_test',
      name: `test_${model}_logic`,
      package_name: 'shop',
      model,
      fqn: ['shop', model, `test_${model}_logic`],
      original_file_path: `models/${model}.yml`,
      depends_on: { macros: [], nodes: [`model.shop.${model}`] },
      config: { enabled: true, tags: [], meta: {} },
    });
    const project = declareDbtProject(
      {
        manifest: {
          ...manifest(orders, customers),
          unit_tests: {
            'unit_test.shop.orders.test_orders_logic': unitTest('orders'),
            'unit_test.shop.customers.test_customers_logic': unitTest('customers'),
          },
        },
      },
      { select: ['orders'] },
      dbtReader,
    );
    expect(project.declarations[0]?.notMappedTests).toEqual([
      {
        test: 'unit_test.shop.orders.test_orders_logic',
        reason: expect.stringMatching(
          /^a dbt unit test: it checks the model's SQL on fixed input rows/,
        ) as unknown,
      },
    ]);
    // Its model not selected: not this plan's, as a data test of another model.
    expect(project.otherTests).toEqual([]);
  });

  it('a Jinja where: is not mapped', () => {
    const d = one(
      genericTest(
        'not_null',
        'model.shop.orders',
        {},
        { column: 'status', config: { where: "{{ var('x') }}" } },
      ),
    );
    expect(d.notMappedTests[0]?.reason).toMatch(/Jinja/);
  });

  it('relationships: the column references schema.table.column of the referenced relation', () => {
    const test = genericTest(
      'relationships',
      'model.shop.orders',
      { to: "ref('customers')", field: 'customer_id' },
      { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.orders'] },
    );
    const d = one(test);
    expect(d.columns.find((c) => c.name === 'customer_id')?.references).toBe(
      'analytics.customers.customer_id',
    );
    expect(d.mappedTests).toEqual([{ test: test['unique_id'], rule: 'reference:customer_id' }]);
  });

  it('relationships to an ephemeral model: not mapped (no table to reference), with what to do', () => {
    const test = genericTest(
      'relationships',
      'model.shop.orders',
      { to: "ref('customers')", field: 'customer_id' },
      { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.orders'] },
    );
    const ephemeral = { ...customers, config: { enabled: true, materialized: 'ephemeral' } };
    const [d] = declareDbtProject(
      { manifest: manifest(orders, ephemeral, test) },
      { select: ['orders'] },
      dbtReader,
    ).declarations;
    expect(d?.columns.find((c) => c.name === 'customer_id')?.references).toBeUndefined();
    expect(d?.mappedTests).toEqual([]);
    expect(d?.notMappedTests).toEqual([
      {
        test: test['unique_id'],
        reason: expect.stringMatching(/customers, an ephemeral model.*no relation.*materialize/) as unknown,
      },
    ]);
  });

  it('relationships to a source in another database: not mapped (the connector reads one database)', () => {
    const test = genericTest(
      'relationships',
      'model.shop.orders',
      { to: "source('crm', 'customers')", field: 'customer_id' },
      { column: 'customer_id', dependsOn: ['source.shop.crm.customers', 'model.shop.orders'] },
    );
    const crm = (database: string) => ({
      unique_id: 'source.shop.crm.customers',
      resource_type: 'source',
      name: 'customers',
      source_name: 'crm',
      package_name: 'shop',
      fqn: ['shop', 'crm', 'customers'],
      database,
      schema: 'crm',
      identifier: 'customers',
      config: { enabled: true },
      columns: {},
    });
    const declared = (database: string) =>
      declareDbtProject(
        {
          manifest: {
            ...manifest(orders, customers, test),
            sources: { [crm(database)['unique_id']]: crm(database) },
          },
        },
        { select: ['orders'] },
        dbtReader,
      ).declarations[0];
    expect(declared('dev')?.columns.find((c) => c.name === 'customer_id')?.references).toBe(
      'crm.customers.customer_id',
    );
    const other = declared('raw');
    expect(other?.columns.find((c) => c.name === 'customer_id')?.references).toBeUndefined();
    expect(other?.notMappedTests).toEqual([
      {
        test: test['unique_id'],
        reason: expect.stringMatching(/database raw.*orders is in dev/) as unknown,
      },
    ]);
  });

  it('relationships without attached_node: the child is found from the model argument', () => {
    const test = genericTest(
      'relationships',
      'model.shop.orders',
      { to: "ref('customers')", field: 'customer_id', model: "{{ get_where_subquery(ref('orders')) }}" },
      { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.orders'] },
    );
    delete test['attached_node'];
    expect(one(test).columns.find((c) => c.name === 'customer_id')?.references).toBe(
      'analytics.customers.customer_id',
    );
  });

  it('expression_is_true, model and column level, and its condition', () => {
    const modelLevel = one(
      genericTest(
        'expression_is_true',
        'model.shop.orders',
        { expression: 'amount >= 0' },
        { namespace: 'dbt_utils' },
      ),
    );
    expect(gate1(modelLevel)['customPredicates']?.[0]?.['sql']).toBe('amount >= 0');
    const columnLevel = one(
      genericTest(
        'expression_is_true',
        'model.shop.orders',
        { expression: '>= 0', condition: "status = 'placed'" },
        { namespace: 'dbt_utils', column: 'amount' },
      ),
    );
    expect(gate1(columnLevel)['customPredicates']?.[0]?.['sql']).toBe(
      "NOT (status = 'placed') OR (amount >= 0)",
    );
  });

  it('accepted_range and expect_column_values_to_be_between honour inclusive / strictly', () => {
    const range = one(
      genericTest(
        'accepted_range',
        'model.shop.orders',
        { min_value: 0, max_value: 100, inclusive: false },
        { namespace: 'dbt_utils', column: 'amount' },
      ),
    );
    expect(gate1(range)['customPredicates']?.[0]?.['sql']).toBe('amount > 0 AND amount < 100');
    const between = one(
      genericTest(
        'expect_column_values_to_be_between',
        'model.shop.orders',
        { min_value: 1 },
        { namespace: 'dbt_expectations', column: 'amount' },
      ),
    );
    expect(gate1(between)['customPredicates']?.[0]?.['sql']).toBe('amount >= 1');
  });

  it("dbt_utils 0.x accepted_range's own where: argument keeps the rows it tests, as the macro does", () => {
    // dbt_utils 0.6: test_accepted_range(model, min_value, max_value, inclusive, where="true") selects
    // `from model where {{ where }}` before checking the bounds.
    const range = (kwargs: Record<string, unknown>) =>
      one(
        genericTest('accepted_range', 'model.shop.orders', kwargs, {
          namespace: 'dbt_utils',
          column: 'amount',
        }),
      );
    expect(gate1(range({ min_value: 0, where: "status = 'placed'" }))['customPredicates']?.[0]?.['sql']).toBe(
      "NOT (status = 'placed') OR (amount >= 0)",
    );
    expect(gate1(range({ min_value: 0, where: 'true' }))['customPredicates']?.[0]?.['sql']).toBe(
      'amount >= 0',
    );
  });

  it('a number dbt would print otherwise than JavaScript does is not mapped', () => {
    // Jinja prints YAML's 1.0 as 1.0 and 1e-05 as 1e-05; JSON.parse keeps neither, and a number past 2^53
    // loses its digits: a rule written from them would test other values than dbt's.
    const values = (list: unknown[]) =>
      one(genericTest('accepted_values', 'model.shop.orders', { values: list }, { column: 'status' }));
    expect(values([1, 2, 3]).mappedTests).toHaveLength(1);
    expect(values([1.5, 2.5]).mappedTests).toHaveLength(1);
    expect(values([1, 1e-5]).notMappedTests[0]?.reason).toMatch(
      /0\.00001 may not be the number as dbt prints it/,
    );
    expect(values([2 ** 53 + 2]).notMappedTests[0]?.reason).toMatch(/as dbt prints it/);
    const range = one(
      genericTest(
        'accepted_range',
        'model.shop.orders',
        { max_value: 2 ** 53 + 2 },
        { namespace: 'dbt_utils', column: 'amount' },
      ),
    );
    expect(range.notMappedTests[0]?.reason).toMatch(/as dbt prints it/);
  });

  it('a test limited to no failing rows (config limit 0) always passes in dbt: not mapped', () => {
    const limited = one(
      genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id', config: { limit: 0 } }),
    );
    expect(limited.notMappedTests[0]?.reason).toMatch(/limit 0/);
    const some = one(
      genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id', config: { limit: 10 } }),
    );
    expect(some.mappedTests[0]?.rule).toBe('required:order_id');
  });

  it('expect_column_values_to_match_regex: a pattern check', () => {
    const d = one(
      genericTest(
        'expect_column_values_to_match_regex',
        'model.shop.orders',
        { regex: '^[a-z]+$' },
        { namespace: 'dbt_expectations', column: 'status' },
      ),
    );
    expect(gate1(d)['patternChecks']).toEqual([
      { name: expect.any(String), column: 'status', regex: '^[a-z]+$', severity: 'HARD_FAIL' },
    ]);
    expect(d.mappedTests[0]?.rule).toMatch(/^pattern:/);
  });

  it('any other test is listed as not mapped, with its reason', () => {
    const d = one(
      genericTest('recency', 'model.shop.orders', { datepart: 'day' }, { namespace: 'dbt_utils' }),
      genericTest(
        'not_null',
        'model.shop.orders',
        {},
        { column: 'missing_column', id: 'test.shop.nn_missing.1' },
      ),
    );
    expect(d.notMappedTests.map((t) => t.reason)).toEqual([
      expect.stringMatching(/has no column "missing_column"/),
      'gds has no Gate 1 rule for dbt_utils.recency tests',
    ]);
  });
});

describe('a model contract', () => {
  const contracted = (enforced: boolean) =>
    model('orders', {
      config: { enabled: true, materialized: 'table', contract: { enforced } },
      compiled_code: 'select 1 as other',
      columns: {
        order_id: {
          name: 'order_id',
          data_type: 'integer',
          constraints: [{ type: 'primary_key' }],
        },
        customer_id: {
          name: 'customer_id',
          data_type: 'integer',
          constraints: [
            { type: 'not_null' },
            { type: 'foreign_key', to: "ref('customers')", to_columns: ['customer_id'] },
          ],
        },
        email: { name: 'email', data_type: 'text', constraints: [{ type: 'unique' }] },
        amount: {
          name: 'amount',
          data_type: 'numeric(10,2)',
          constraints: [{ type: 'check', expression: 'amount >= 0' }],
        },
        region_id: {
          name: 'region_id',
          data_type: 'integer',
          constraints: [{ type: 'custom', expression: 'default 1' }],
        },
      },
      constraints: [
        { type: 'foreign_key', columns: ['region_id'], expression: 'analytics.customers (customer_id)' },
        { type: 'unique', columns: ['customer_id', 'email'] },
      ],
      depends_on: { nodes: ['model.shop.customers'] },
    });

  it('enforced: its columns and types, and each constraint a rule (not_null, primary_key, unique, check, foreign_key)', () => {
    const project = declareDbtProject(
      { manifest: manifest(contracted(true), customers) },
      { select: ['orders'] },
      dbtReader,
    );
    const [d] = project.declarations;
    if (!d) throw new Error('no declaration');
    expect(d.columns).toEqual([
      { name: 'order_id', type: 'integer', required: true },
      { name: 'customer_id', type: 'integer', required: true, references: 'analytics.customers.customer_id' },
      { name: 'email', type: 'text' },
      { name: 'amount', type: 'numeric(10,2)' },
      { name: 'region_id', type: 'integer', references: 'analytics.customers.customer_id' },
    ]);
    expect(d.contract?.grainKeyColumns).toEqual(['order_id']);
    expect(gate1(d)['uniqueChecks']?.map((c) => c['columns'])).toEqual([['customer_id', 'email'], ['email']]);
    expect(gate1(d)['customPredicates']).toEqual([
      { name: 'orders_check_amount', sql: 'amount >= 0', severity: 'HARD_FAIL' },
    ]);
    expect(d.gate1Yaml).toContain('# dbt contract model.shop.orders:constraint:check:amount');
    expect(d.mappedTests.map((t) => t.rule).sort()).toEqual([
      'grainKey',
      'predicate:orders_check_amount',
      'reference:customer_id',
      'reference:region_id',
      'required:customer_id',
      'required:order_id',
      'unique:orders_unique_customer_id_email',
      'unique:orders_unique_email',
    ]);
    // The model-level foreign key is written as SQL (dbt before 1.9); a custom constraint is listed.
    expect(d.notMappedTests).toEqual([
      {
        test: 'model.shop.orders:constraint:custom:region_id',
        reason: expect.stringMatching(/custom constraint is SQL of the warehouse's own/),
      },
    ]);
  });

  it("on a warehouse that does not enforce a constraint, it is no rule: dbt's build passes rows that break it", () => {
    const on = (adapter: string) => {
      const m = manifest(contracted(true), customers);
      (m['metadata'] as Record<string, unknown>)['adapter_type'] = adapter;
      const [d] = declareDbtProject({ manifest: m }, { select: ['orders'] }, dbtReader).declarations;
      if (!d) throw new Error('no declaration');
      return d;
    };
    // Snowflake enforces NOT NULL only: unique, primary and foreign keys are metadata, a check is not written.
    // (Without a catalog, gds folds the names as Snowflake does: CUSTOMER_ID.)
    const snowflake = on('snowflake');
    expect(snowflake.mappedTests.map((t) => t.rule).sort()).toEqual(['required:CUSTOMER_ID']);
    expect(gate1(snowflake)['uniqueChecks']).toBeUndefined();
    expect(gate1(snowflake)['customPredicates']).toBeUndefined();
    expect(snowflake.contract?.grainKeyColumns ?? []).toEqual([]);
    expect(snowflake.columns.filter((c) => c.required === true).map((c) => c.name)).toEqual(['CUSTOMER_ID']);
    expect(snowflake.columns.some((c) => c.references !== undefined)).toBe(false);
    const reasons = new Map(snowflake.notMappedTests.map((t) => [t.test, t.reason]));
    expect(reasons.get('model.shop.orders:constraint:unique:email')).toMatch(
      /snowflake does not enforce a unique constraint .* passes rows that break it/,
    );
    expect(reasons.get('model.shop.orders:constraint:primary_key:order_id')).toMatch(/does not enforce/);
    expect(reasons.get('model.shop.orders:constraint:foreign_key:customer_id')).toMatch(/does not enforce/);
    expect(reasons.get('model.shop.orders:constraint:check:amount')).toMatch(
      /dbt writes no check constraint on snowflake \(not supported there\)/,
    );
    // Databricks enforces NOT NULL and CHECK.
    const databricks = on('databricks');
    expect(databricks.mappedTests.map((t) => t.rule).sort()).toEqual([
      'predicate:orders_check_amount',
      'required:customer_id',
    ]);
    // A unique test still makes the grain key, the primary key constraint preferred among the candidates.
    expect(on('duckdb').contract?.grainKeyColumns).toEqual(['order_id']);
  });

  it('not enforced: dbt applies no constraint, nor does gds (a warning says so)', () => {
    const project = declareDbtProject(
      { manifest: manifest(contracted(false), customers) },
      { select: ['orders'] },
      dbtReader,
    );
    const [d] = project.declarations;
    expect(d?.mappedTests).toEqual([]);
    expect(project.warnings).toContainEqual(
      expect.stringMatching(/constraints apply only under an enforced contract/),
    );
  });
});

describe('the declaration', () => {
  it('names the relation by its alias and its schema, keeps the database, and the description', () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('stg_orders', { alias: 'orders_v2__dbt_tmp', columns: columns({ id: 'int' }) }),
        ),
      },
      {},
      dbtReader,
    );
    const [d] = project.declarations;
    expect(d?.name).toBe('orders_v2');
    expect(d?.source).toEqual({ schema: 'analytics', table: 'orders_v2' });
    expect(d?.database).toBe('dev');
  });

  it('meta.gds becomes the contract intent', () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('m', {
            columns: columns({ id: 'int' }),
            config: {
              enabled: true,
              meta: { gds: { intent: 'metric', allowed_consumers: ['human', 'AI'], meaning: 'Revenue.' } },
            },
          }),
        ),
      },
      {},
      dbtReader,
    );
    expect(project.declarations[0]?.contract).toEqual({
      intent: 'METRIC',
      allowedConsumers: ['HUMAN', 'AI'],
      meaning: 'Revenue.',
    });
  });

  it('reads the columns of compiled SQL, a star resolved through the CTEs', () => {
    const sql = `with source as (select * from raw.orders),
renamed as (select id as order_id, cast(amount as numeric) as amount, status from source)
select * from renamed`;
    const project = declareDbtProject(
      { manifest: manifest(model('orders', { compiled_code: sql })) },
      {},
      dbtReader,
    );
    expect(project.declarations[0]?.columns).toEqual([
      { name: 'order_id', type: 'unknown' },
      { name: 'amount', type: 'numeric' },
      { name: 'status', type: 'unknown' },
    ]);
    expect(project.declarations[0]?.columnsFrom).toBe('compiled_sql');
  });

  it('refuses a Python model without a catalog saying so, not with a SQL syntax error', () => {
    const python = model('orders_py', {
      language: 'python',
      compiled_code: "import pandas as pd\n\ndef model(dbt, session):\n    return dbt.ref('orders')\n",
    });
    const [refusal] = declareDbtProject({ manifest: manifest(python) }, {}, dbtReader).refusals;
    expect(refusal?.reason).toMatch(/a Python model/);
    expect(refusal?.reason).toMatch(/dbt docs generate/);
    expect(refusal?.reason).not.toMatch(/syntax error|compiled SQL/);
    // Its documented columns still declare it (with the usual warning), as for any model.
    const documented = { ...python, columns: columns({ id: 'integer', amount: 'numeric' }) };
    expect(
      declareDbtProject({ manifest: manifest(documented) }, {}, dbtReader).declarations[0]?.columns,
    ).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'amount', type: 'numeric' },
    ]);
  });

  it('declares the columns its compiled SQL selects when the typed documentation lists others (no enforced contract)', () => {
    // Without an enforced contract, data_type documents a column; the relation has what the SQL selects
    // (elementary's dbt_invocations documents fewer columns than it builds).
    const sql = 'select id, amount, created_at from raw.orders';
    const documented = columns({ id: 'integer', amount: 'numeric', legacy_flag: 'boolean' });
    const read = (extra: Record<string, unknown>) =>
      declareDbtProject(
        { manifest: manifest(model('orders', { compiled_code: sql, columns: documented, ...extra })) },
        {},
        dbtReader,
      );
    const loose = read({});
    expect(loose.declarations[0]?.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'amount', type: 'numeric' },
      { name: 'created_at', type: 'unknown' },
    ]);
    expect(loose.warnings.join('\n')).toMatch(
      /documents legacy_flag, which its compiled SQL does not select/,
    );
    // Under an enforced contract dbt builds exactly the documented columns.
    const enforced = read({ config: { enabled: true, materialized: 'table', contract: { enforced: true } } });
    expect(enforced.declarations[0]?.columns.map((c) => c.name)).toEqual(['id', 'amount', 'legacy_flag']);
    expect(enforced.warnings).toEqual([]);
  });

  it("names the project by metadata.project_id (dbt's md5 of its name) when the manifest has no project_name", () => {
    // dbt before 1.6 writes no project_name; a package's model may come first in `nodes` (partial parsing).
    const m = manifest(
      model('stg_dbt__models', { package_name: 'dbt_artifacts', columns: columns({ id: 'text' }) }),
      model('orders', { columns: columns({ id: 'integer' }) }),
    );
    const metadata = m['metadata'] as Record<string, unknown>;
    delete metadata['project_name'];
    metadata['project_id'] = createHash('md5').update('shop').digest('hex');
    expect(declareDbtProject({ manifest: m }, {}, dbtReader).projectName).toBe('shop');
  });

  it('refuses by name a star over a warehouse table', () => {
    const project = declareDbtProject(
      { manifest: manifest(model('orders', { compiled_code: 'select * from raw.orders' })) },
      {},
      dbtReader,
    );
    expect(project.refusals[0]?.reason).toMatch(/SELECT \* from raw\.orders/);
  });

  it('prefers the catalog, in its casing (Snowflake upper case)', () => {
    const m = manifest(model('orders', { columns: columns({ order_id: null }) }));
    (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'snowflake';
    const catalog = {
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' },
      nodes: {
        'model.shop.orders': {
          metadata: { schema: 'ANALYTICS', name: 'ORDERS' },
          columns: { ORDER_ID: { name: 'ORDER_ID', type: 'NUMBER', index: 1 } },
        },
      },
    };
    const withCatalog = declareDbtProject({ manifest: m, catalog }, {}, dbtReader);
    expect(withCatalog.declarations[0]?.columns).toEqual([{ name: 'ORDER_ID', type: 'NUMBER' }]);
    const without = declareDbtProject({ manifest: m }, {}, dbtReader);
    expect(without.declarations[0]?.columns).toEqual([{ name: 'ORDER_ID', type: 'unknown' }]);
  });

  it('reads a model from its SQL when an older catalog lists other columns; an as new catalog wins', () => {
    const sql = 'select 1::bigint as order_id, 2::integer as customer_id';
    const m = manifest(
      model('orders', { compiled_code: sql }),
      model('customers', { compiled_code: 'select 1::bigint as customer_id' }),
    );
    const meta = m['metadata'] as Record<string, unknown>;
    meta['generated_at'] = '2026-02-01T10:00:00Z';
    const catalogAt = (generatedAt: string) => ({
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json',
        generated_at: generatedAt,
      },
      nodes: {
        'model.shop.orders': {
          metadata: { schema: 'analytics', name: 'orders' },
          columns: {
            order_id: { name: 'order_id', type: 'BIGINT', index: 1 },
            order_date: { name: 'order_date', type: 'DATE', index: 2 },
          },
        },
        'model.shop.customers': {
          metadata: { schema: 'analytics', name: 'customers' },
          columns: { customer_id: { name: 'customer_id', type: 'HUGEINT', index: 1 } },
        },
      },
    });
    const older = declareDbtProject(
      { manifest: m, catalog: catalogAt('2026-01-30T09:00:00Z') },
      {},
      dbtReader,
    );
    const [orders, customers] = older.declarations;
    expect(orders?.columns).toEqual([
      { name: 'order_id', type: 'BIGINT' },
      { name: 'customer_id', type: 'integer' },
    ]);
    // The SQL selects the columns the catalog lists: the catalog's types stay.
    expect(customers?.columns).toEqual([{ name: 'customer_id', type: 'HUGEINT' }]);
    expect(older.warnings).toEqual([
      expect.stringMatching(
        /^model\.shop\.orders: catalog\.json \(2026-01-30T09:00:00Z\) is older than manifest\.json .*no longer order_date; new customer_id/,
      ),
    ]);
    const asNew = declareDbtProject(
      { manifest: m, catalog: catalogAt('2026-02-01T10:00:05Z') },
      {},
      dbtReader,
    );
    expect(asNew.declarations[0]?.columns.map((c) => c.name)).toEqual(['order_id', 'order_date']);
    expect(asNew.warnings).toEqual([]);
    // An incremental model's relation keeps its columns whatever its SQL selects now (on_schema_change
    // ignore, append_new_columns, fail): the older catalog still says them.
    const incremental = manifest(
      model('orders', {
        compiled_code: sql,
        config: { enabled: true, materialized: 'incremental', on_schema_change: 'append_new_columns' },
      }),
    );
    (incremental['metadata'] as Record<string, unknown>)['generated_at'] = '2026-02-01T10:00:00Z';
    const kept = declareDbtProject(
      { manifest: incremental, catalog: catalogAt('2026-01-30T09:00:00Z') },
      {},
      dbtReader,
    );
    expect(kept.declarations[0]?.columns.map((c) => c.name)).toEqual(['order_id', 'order_date']);
    expect(kept.warnings).toEqual([]);
  });

  it("declares a BigQuery STRUCT column once, not each of its catalog's field paths", () => {
    // dbt-bigquery's catalog lists every nested field as its own entry (`address.city`, from
    // INFORMATION_SCHEMA.COLUMN_FIELD_PATHS); the relation's columns are the top-level ones.
    const m = manifest(model('customers'));
    (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'bigquery';
    const column = (name: string, type: string, index: number) => ({ name, type, index, comment: null });
    const catalog = {
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' },
      nodes: {
        'model.shop.customers': {
          metadata: { schema: 'analytics', name: 'customers', database: 'my-project' },
          columns: {
            customer_id: column('customer_id', 'INT64', 1),
            address: column('address', 'STRUCT<city STRING, geo STRUCT<lat FLOAT64, lon FLOAT64>>', 2),
            'address.city': column('address.city', 'STRING', 3),
            'address.geo': column('address.geo', 'STRUCT<lat FLOAT64, lon FLOAT64>', 4),
            'address.geo.lat': column('address.geo.lat', 'FLOAT64', 5),
            'address.geo.lon': column('address.geo.lon', 'FLOAT64', 6),
            items: column('items', 'ARRAY<STRUCT<sku STRING>>', 7),
            'items.sku': column('items.sku', 'STRING', 8),
            tags: column('tags', 'ARRAY<STRING>', 9),
          },
        },
      },
    };
    const project = declareDbtProject(
      {
        manifest: m,
        catalog,
      },
      {},
      dbtReader,
    );
    expect(project.declarations[0]?.columns.map((c) => c.name)).toEqual([
      'customer_id',
      'address',
      'items',
      'tags',
    ]);
  });

  // A table of the project in a schema only ephemeral (or disabled) models are now configured into is still this
  // project's (gone), not another same-named project's: their schemas are the project's too.
  it("counts ephemeral and disabled models' schemas among the project's", () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('base', { schema: 'staging', config: { enabled: true, materialized: 'ephemeral' } }),
          model('old', { schema: 'legacy', config: { enabled: false, materialized: 'table' } }),
          model('kept', { columns: columns({ id: 'int' }) }),
        ),
      },
      {},
      dbtReader,
    );
    expect(project.declarations.map((d) => d.name)).toEqual(['kept']);
    expect(new Set(project.nodeSchemas)).toEqual(new Set(['analytics', 'staging', 'legacy']));
  });

  // dbt 1.0+ writes a disabled node in the manifest's `disabled` member (its id -> a list of the node's
  // versions), never in `nodes`: its schema is the project's all the same.
  it("counts the schemas of the models dbt 1.0+ lists under the manifest's disabled", () => {
    const old = model('old', { schema: 'legacy', config: { enabled: false, materialized: 'table' } });
    const snap = {
      ...model('snap', { schema: 'snapshots', config: { enabled: false, materialized: 'snapshot' } }),
      unique_id: 'snapshot.shop.snap',
      resource_type: 'snapshot',
    };
    const test: Record<string, unknown> = {
      ...genericTest('not_null', 'model.shop.old', {}, { column: 'id' }),
      schema: 'audit',
    };
    const written = {
      ...manifest(model('kept', { columns: columns({ id: 'int' }) })),
      disabled: {
        'model.shop.old': [old],
        'snapshot.shop.snap': [snap],
        [String(test['unique_id'])]: [test],
      },
    };
    const project = declareDbtProject({ manifest: written }, {}, dbtReader);
    expect(project.declarations.map((d) => d.name)).toEqual(['kept']);
    expect(project.nodeNames).toEqual(['kept']);
    expect(new Set(project.nodeSchemas)).toEqual(new Set(['analytics', 'legacy', 'snapshots']));
  });

  it("counts the schemas of the nodes listed under a dbt 0.19-0.21 manifest's disabled (a list)", () => {
    const old = model('old', { schema: 'legacy', config: { enabled: false, materialized: 'table' } });
    const written = { ...manifest(model('kept', { columns: columns({ id: 'int' }) })), disabled: [old] };
    const project = declareDbtProject({ manifest: written }, {}, dbtReader);
    expect(project.nodeNames).toEqual(['kept']);
    expect(new Set(project.nodeSchemas)).toEqual(new Set(['analytics', 'legacy']));
  });

  it('skips an ephemeral model, not refused: it builds no relation, so its name is no table kept', () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('base', {
            config: { enabled: true, materialized: 'ephemeral' },
            columns: columns({ id: 'int' }),
          }),
          model('kept', { columns: columns({ id: 'int' }) }),
          genericTest('not_null', 'model.shop.base', {}, { column: 'id' }),
        ),
      },
      {},
      dbtReader,
    );
    expect(project.refusals).toEqual([]);
    expect(project.declarations.map((d) => d.name)).toEqual(['kept']);
    expect(project.skipped).toEqual([
      {
        uniqueId: 'model.shop.base',
        resourceType: 'model',
        name: 'base',
        reason: expect.stringMatching(/^an ephemeral model builds no relation/) as unknown,
        notMappedTests: [
          {
            test: 'test.shop.not_null_base_id.abc',
            reason: expect.stringMatching(
              /^not mapped: gds governs no table of this model \(an ephemeral model/,
            ) as unknown,
          },
        ],
      },
    ]);
    // A table registered for it before it became ephemeral is gone: its name is not among the built nodes'.
    expect(project.nodeNames).toEqual(['kept']);
  });

  // A table of the project renamed by hand keeps its model's source: the sources of every built node, selected
  // or not, are what the plan keeps such a table by, each as a declaration's source names it.
  it("lists every built node's source, selected or not, as the declarations' sources are cased", () => {
    const m = manifest(
      model('orders', { columns: columns({ id: 'int' }) }),
      model('Items', { schema: 'Sales', columns: columns({ id: 'int' }) }),
      model('Quoted', { config: { enabled: true, materialized: 'table', quoting: { identifier: true } } }),
      model('base', { config: { enabled: true, materialized: 'ephemeral' } }),
      model('old', { config: { enabled: false, materialized: 'table' } }),
    );
    (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'snowflake';
    const project = declareDbtProject({ manifest: m }, { select: ['orders'] }, dbtReader);
    expect(project.declarations.map((d) => d.source)).toEqual([{ schema: 'ANALYTICS', table: 'ORDERS' }]);
    expect(project.nodeSources).toEqual([
      { schema: 'ANALYTICS', table: 'ORDERS' },
      { schema: 'SALES', table: 'ITEMS' },
      { schema: 'ANALYTICS', table: 'Quoted' },
    ]);
  });

  it('skips a model or snapshot whose SQL is blank, as dbt run and build do; a seed is never empty', () => {
    const snapshot = {
      ...model('blank_snapshot', { raw_code: '', columns: columns({ id: 'int' }) }),
      unique_id: 'snapshot.shop.blank_snapshot',
      resource_type: 'snapshot',
    };
    const seed = {
      ...model('countries', { raw_code: '', columns: columns({ code: 'text' }) }),
      unique_id: 'seed.shop.countries',
      resource_type: 'seed',
    };
    const placeholder = genericTest(
      'relationships',
      'model.shop.kept',
      { to: "ref('placeholder')", field: 'id' },
      { column: 'id', dependsOn: ['model.shop.placeholder', 'model.shop.kept'] },
    );
    const project = declareDbtProject(
      {
        manifest: manifest(
          // dbt before 1.3 wrote raw_sql.
          model('placeholder', { raw_sql: ' \n\t ', columns: columns({ id: 'int' }) }),
          snapshot,
          seed,
          model('kept', { raw_code: 'select 1 as id', columns: columns({ id: 'int' }) }),
          genericTest('not_null', 'model.shop.placeholder', {}, { column: 'id' }),
          placeholder,
        ),
      },
      {},
      dbtReader,
    );
    expect(project.refusals).toEqual([]);
    expect(project.declarations.map((d) => d.name).sort()).toEqual(['countries', 'kept']);
    expect(project.skipped?.map((s) => [s.name, s.reason])).toEqual([
      ['placeholder', expect.stringMatching(/^its SQL file is empty: dbt run and dbt build skip/)],
      ['blank_snapshot', expect.stringMatching(/^its SQL file is empty/)],
    ]);
    expect(project.skipped?.[0]?.notMappedTests.map((t) => t.test)).toEqual([
      'test.shop.not_null_placeholder_id.abc',
    ]);
    // A relationships test to it has no table to reference.
    const kept = project.declarations.find((d) => d.name === 'kept');
    expect(kept?.mappedTests).toEqual([]);
    expect(kept?.notMappedTests[0]?.reason).toMatch(/placeholder, whose SQL file is empty/);
    // A table registered for it before its SQL was emptied is gone.
    expect(project.nodeNames?.sort()).toEqual(['countries', 'kept']);
  });

  it("adds dbt's own columns to a snapshot read from its compiled SQL", () => {
    const snapshot = {
      ...model('orders_snapshot', { compiled_code: 'select id, status from raw.orders' }),
      unique_id: 'snapshot.shop.orders_snapshot',
      resource_type: 'snapshot',
    };
    const [declaration] = declareDbtProject({ manifest: manifest(snapshot) }, {}, dbtReader).declarations;
    expect(declaration?.columns.map((c) => c.name)).toEqual([
      'id',
      'status',
      'dbt_scd_id',
      'dbt_updated_at',
      'dbt_valid_from',
      'dbt_valid_to',
    ]);
  });

  it("names a snapshot's own columns as its config does (dbt 1.9 snapshot_meta_column_names, hard_deletes)", () => {
    const snapshot = {
      ...model('orders_snapshot', { compiled_code: 'select id, status from raw.orders' }),
      unique_id: 'snapshot.shop.orders_snapshot',
      resource_type: 'snapshot',
      config: {
        enabled: true,
        materialized: 'snapshot',
        strategy: 'timestamp',
        hard_deletes: 'new_record',
        snapshot_meta_column_names: {
          dbt_valid_to: 'valid_to',
          dbt_valid_from: 'valid_from',
          dbt_scd_id: null,
          dbt_updated_at: 'updated_at',
          dbt_is_deleted: 'is_deleted',
        },
      },
    };
    const [declaration] = declareDbtProject({ manifest: manifest(snapshot) }, {}, dbtReader).declarations;
    expect(declaration?.columns.map((c) => c.name)).toEqual([
      'id',
      'status',
      'dbt_scd_id',
      'updated_at',
      'valid_from',
      'valid_to',
      'is_deleted',
    ]);
    // Without hard_deletes: new_record dbt adds no deletion column.
    const ignored = { ...snapshot, config: { ...snapshot.config, hard_deletes: 'ignore' } };
    const [plain] = declareDbtProject({ manifest: manifest(ignored) }, {}, dbtReader).declarations;
    expect(plain?.columns.map((c) => c.name)).not.toContain('is_deleted');
  });

  it("names a seed's columns as dbt creates them: quoted by default, unquoted on Snowflake (quote_columns)", () => {
    // dbt's adapters quote a seed's CSV header names unless quote_columns: false; dbt-snowflake's default is
    // false. A quoted name keeps its case (PostgreSQL's "Customer_Name"); an unquoted one is folded.
    const names = (adapter: string, quoteColumns: boolean | null) => {
      const seed = {
        ...model('raw_customers'),
        unique_id: 'seed.shop.raw_customers',
        resource_type: 'seed',
        original_file_path: 'seeds/raw_customers.csv',
        config: { enabled: true, materialized: 'seed', quote_columns: quoteColumns },
      };
      const m = manifest(seed);
      (m['metadata'] as Record<string, unknown>)['adapter_type'] = adapter;
      const project = declareDbtProject(
        { manifest: m, seeds: { 'seed.shop.raw_customers': ['ID', 'Customer_Name', 'status'] } },
        {},
        dbtReader,
      );
      return project.declarations[0]?.columns.map((c) => c.name);
    };
    expect(names('postgres', null)).toEqual(['ID', 'Customer_Name', 'status']);
    expect(names('postgres', false)).toEqual(['id', 'customer_name', 'status']);
    // Redshift lower-cases a quoted name too, unless a cluster sets enable_case_sensitive_identifier.
    expect(names('redshift', true)).toEqual(['id', 'customer_name', 'status']);
    expect(names('redshift', null)).toEqual(['id', 'customer_name', 'status']);
    expect(names('snowflake', null)).toEqual(['ID', 'CUSTOMER_NAME', 'STATUS']);
    expect(names('snowflake', true)).toEqual(['ID', 'Customer_Name', 'status']);
  });

  it("reads a warehouse's SQL that PostgreSQL's grammar refuses with that warehouse's reader", () => {
    const m = manifest(
      model('orders', {
        compiled_code:
          'select id, `status` as order_status from `proj`.`raw`.`orders` qualify row_number() over (partition by id order by ts) = 1',
      }),
    );
    (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'bigquery';
    const [declaration] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
    expect(declaration?.columns).toEqual([
      { name: 'id', type: 'unknown' },
      { name: 'order_status', type: 'unknown' },
    ]);
  });

  it('refuses a file that is not a manifest', () => {
    expect(() => declareDbtProject({ manifest: { results: [] } }, {}, dbtReader)).toThrow(DbtManifestError);
    expect(() =>
      declareDbtProject(
        {
          manifest: {
            metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
            results: [],
          },
        },
        {},
        dbtReader,
      ),
    ).toThrow(/run-results/);
  });
});

describe('selectors', () => {
  const m = manifest(
    model('stg_orders', { folders: ['staging'], tags: ['nightly'], columns: columns({ id: 'int' }) }),
    model('stg_customers', { folders: ['staging'], columns: columns({ id: 'int' }) }),
    model('orders', {
      folders: ['marts'],
      config: { enabled: true, materialized: 'table' },
      columns: columns({ id: 'int' }),
      depends_on: { nodes: ['model.shop.stg_orders', 'model.shop.stg_customers'] },
    }),
    model('report', {
      folders: ['marts'],
      columns: columns({ id: 'int' }),
      depends_on: { nodes: ['model.shop.orders'] },
    }),
    model('old', { config: { enabled: false }, columns: columns({ id: 'int' }) }),
  );
  const names = (select: string[], exclude?: string[]) =>
    declareDbtProject({ manifest: m }, { select, ...(exclude ? { exclude } : {}) }, dbtReader)
      .declarations.map((d) => d.name)
      .sort();

  it('selects every enabled node by default', () => {
    expect(names([])).toEqual(['orders', 'report', 'stg_customers', 'stg_orders']);
  });
  it('names, fqn wildcards, tag:, path:, config.materialized:, resource_type:', () => {
    expect(names(['orders'])).toEqual(['orders']);
    expect(names(['staging.*'])).toEqual(['stg_customers', 'stg_orders']);
    expect(names(['shop.marts'])).toEqual(['orders', 'report']);
    expect(names(['tag:nightly'])).toEqual(['stg_orders']);
    expect(names(['path:models/marts'])).toEqual(['orders', 'report']);
    expect(names(['config.materialized:table'])).toEqual(['orders']);
    expect(names(['resource_type:model'])).toHaveLength(4);
  });
  it('graph operators', () => {
    expect(names(['+orders'])).toEqual(['orders', 'stg_customers', 'stg_orders']);
    expect(names(['orders+'])).toEqual(['orders', 'report']);
    expect(names(['1+report'])).toEqual(['orders', 'report']);
    expect(names(['stg_orders+1'])).toEqual(['orders', 'stg_orders']);
  });
  it('space is a union, comma an intersection, exclude subtracts', () => {
    expect(names(['orders report'])).toEqual(['orders', 'report']);
    expect(names(['staging.*,tag:nightly'])).toEqual(['stg_orders']);
    expect(names(['staging.*'], ['stg_customers'])).toEqual(['stg_orders']);
  });
  it('an unknown method is a DbtSelectionError naming it; so is a selection matching nothing with strict', () => {
    expect(() => names(['colour:red'])).toThrow(DbtSelectionError);
    expect(() => names(['colour:red'])).toThrow(/colour/);
    const strict = (select: string[]) =>
      declareDbtProject({ manifest: m }, { select, strict: true }, dbtReader);
    expect(() => strict(['nothing_here'])).toThrow(/--select nothing_here matches no/);
    expect(() => strict(['old'])).toThrow(DbtSelectionError);
  });
  it('a selection that matches nothing selects nothing, with a warning (as dbt warns and exits 0)', () => {
    const project = declareDbtProject({ manifest: m }, { select: ['nothing_here', 'report'] }, dbtReader);
    expect(project.declarations.map((d) => d.name)).toEqual(['report']);
    expect(project.warnings).toEqual([
      '--select nothing_here matches no enabled model, seed or snapshot of the project; it selects nothing',
    ]);
    expect(declareDbtProject({ manifest: m }, { select: ['old'] }, dbtReader).declarations).toEqual([]);
  });
  it('an --exclude that matches nothing excludes nothing, with a warning (as dbt warns)', () => {
    // gds.yml's `exclude: [tag:wip]` must not fail CI on the day no model is tagged wip.
    const project = declareDbtProject(
      { manifest: m },
      { select: [], exclude: ['tag:wip', 'stg_orders'] },
      dbtReader,
    );
    expect(project.declarations.map((d) => d.name).sort()).toEqual(['orders', 'report', 'stg_customers']);
    expect(project.warnings).toEqual([
      '--exclude tag:wip matches no enabled model, seed, snapshot or test of the project; it excludes nothing',
    ]);
    expect(() => names([], ['colour:red'])).toThrow(DbtSelectionError);
  });
});

describe("a project's --exclude hints (selectorOf, what plan's and apply's refusals name)", () => {
  it('names the fqn where the name reaches a folder or a namesake of another package, else the name', () => {
    const project = declareDbtProject(
      {
        manifest: manifest(
          model('orders', { fqn: ['shop', 'orders', 'orders'] }),
          model('order_items', { fqn: ['shop', 'orders', 'order_items'] }),
          model('customers'),
          model('customers', { package_name: 'crm' }),
          // A disabled namesake: dbt's selection does not see it, nor does the hint.
          model('payments', { package_name: 'crm', config: { enabled: false, materialized: 'view' } }),
          model('payments'),
        ),
      },
      {},
      dbtReader,
    );
    expect(
      ['orders', 'order_items', 'customers', 'payments'].map((name) =>
        project.selectorOf?.(`model.shop.${name}`),
      ),
    ).toEqual(['fqn:shop.orders.orders', 'order_items', 'fqn:shop.customers', 'payments']);
    expect(project.selectorOf?.('model.crm.customers')).toBe('fqn:crm.customers');
  });
});
