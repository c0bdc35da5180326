// Column-name case against the warehouse: a Snowflake catalog's upper-case names (unquoted names, folded)
// are registered as a lower-case warehouse names them, everywhere the declaration uses them; a quoted name
// in mixed case is named as a mismatch, not renamed.
import { beforeAll, describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import { reconcileCase } from '../../../src/core/dbt/case.js';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { columns, genericTest, manifest, model } from './helpers.js';

type Entry = Record<string, unknown>;

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

function snowflakeOrders() {
  const m = manifest(
    model('orders', { columns: columns({ order_id: null, status: null, CustomerRef: null }) }),
    genericTest('unique', 'model.shop.orders', {}, { column: 'order_id' }),
    genericTest('not_null', 'model.shop.orders', {}, { column: 'order_id' }),
    genericTest(
      'accepted_values',
      'model.shop.orders',
      { values: ['placed', 'STATUS'] },
      { column: 'status' },
    ),
  );
  (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'snowflake';
  const catalog = {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' },
    nodes: {
      'model.shop.orders': {
        unique_id: 'model.shop.orders',
        metadata: { schema: 'ANALYTICS', name: 'ORDERS' },
        columns: {
          ORDER_ID: { name: 'ORDER_ID', type: 'NUMBER', index: 1 },
          STATUS: { name: 'STATUS', type: 'TEXT', index: 2 },
          CustomerRef: { name: 'CustomerRef', type: 'TEXT', index: 3 },
        },
      },
    },
    sources: {},
  };
  const [d] = declareDbtProject({ manifest: m, catalog }, {}, dbtReader).declarations;
  if (!d) throw new Error('no declaration');
  return d;
}

describe('reconcileCase', () => {
  it("names Snowflake's upper-case columns as a lower-case warehouse does: artifact, gate1.yml, grain key, rules", () => {
    const d = snowflakeOrders();
    expect(yaml.parse(d.gate1Yaml ?? '')).toMatchObject({
      customPredicates: [{ sql: `"STATUS" IN ('placed', 'STATUS')` }],
    });
    const warehouse = new Map([['analytics.orders', ['order_id', 'status', 'customerref']]]);
    const { declaration, notes } = reconcileCase(yaml, d, 'analytics.orders', warehouse);
    expect(declaration.columns.map((c) => c.name)).toEqual(['order_id', 'status', 'CustomerRef']);
    expect(
      (JSON.parse(declaration.artifact.content) as { columns: Array<{ name: string }> }).columns.map(
        (c) => c.name,
      ),
    ).toEqual(['order_id', 'status', 'CustomerRef']);
    const gate1 = yaml.parse(declaration.gate1Yaml ?? '') as Record<string, Array<Record<string, unknown>>>;
    expect(gate1['customPredicates']?.[0]?.['sql']).toBe("status IN ('placed', 'STATUS')");
    expect(gate1['fieldOverrides']?.map((o) => o['field'])).toEqual(['order_id', 'status', 'CustomerRef']);
    expect(declaration.gate1Yaml).toContain('# dbt test test.shop.accepted_values');
    expect(declaration.contract?.grainKeyColumns).toEqual(['order_id']);
    expect(declaration.rules).toContain('grain key (order_id): no value twice');
    expect(notes).toEqual([
      expect.stringMatching(
        /^orders: columns ORDER_ID -> order_id, STATUS -> status: the warehouse object analytics.orders names them in another case/,
      ),
      expect.stringMatching(
        /^orders: column CustomerRef \(the warehouse has customerref\) differs in case .* quoted/,
      ),
    ]);
  });

  it('changes nothing when the warehouse names the columns as declared, or has no such object', () => {
    const d = snowflakeOrders();
    const same = reconcileCase(
      yaml,
      d,
      'analytics.orders',
      new Map([['analytics.orders', ['ORDER_ID', 'STATUS', 'CustomerRef']]]),
    );
    expect(same).toEqual({ declaration: d, notes: [] });
    expect(reconcileCase(yaml, d, 'analytics.orders', new Map())).toEqual({ declaration: d, notes: [] });
  });
});

describe('reconcileCase on PostgreSQL, whose warehouse the service reads', () => {
  it('a documented Email (email to dbt) the warehouse holds as "Email": dbt\'s tests of it error, and the note says so', () => {
    const m = manifest(
      model('people', { columns: columns({ id: 'integer', Email: 'text' }) }),
      genericTest('not_null', 'model.shop.people', {}, { column: 'Email' }),
    );
    const [d] = declareDbtProject({ manifest: m }, {}, dbtReader).declarations;
    if (!d) throw new Error('no declaration');
    const warehouse = new Map([['analytics.people', ['id', 'Email']]]);
    const { notes } = reconcileCase(yaml, d, 'analytics.people', warehouse, 'postgres');
    expect(notes).toEqual([
      expect.stringMatching(
        /^people: column email -> Email: .*dbt's SQL on postgres reads the unquoted name as email, which the warehouse object analytics\.people does not hold \(registered as the warehouse names it\), so dbt's tests of it \(test\.shop\.not_null_people_Email\.abc\) error/,
      ),
    ]);
  });
});

describe('a PostgreSQL project without a catalog, declared against the warehouse objects the plan read', () => {
  const people = () =>
    manifest(
      model('people', { columns: columns({ id: 'integer', Email: 'text', Name: 'text' }) }),
      genericTest('not_null', 'model.shop.people', {}, { column: 'id' }),
      genericTest('not_null', 'model.shop.people', {}, { column: 'Email' }),
      genericTest('accepted_values', 'model.shop.people', { values: ['a'] }, { column: 'Email' }),
      genericTest('not_null', 'model.shop.people', {}, { column: 'Name' }),
    );

  it('a test of an unquoted Email (email to dbt) the object holds only as "Email" is not mapped: dbt\'s errors', () => {
    const warehouse = { columns: new Map([['analytics.people', ['id', 'Email', 'name']]]) };
    const [d] = declareDbtProject({ manifest: people(), warehouse }, {}, dbtReader).declarations;
    if (!d) throw new Error('no declaration');
    expect(d.mappedTests.map((t) => t.test).sort()).toEqual([
      'test.shop.not_null_people_Name.abc',
      'test.shop.not_null_people_id.abc',
    ]);
    expect(d.notMappedTests).toEqual([
      {
        test: 'test.shop.accepted_values_people_Email.abc',
        reason: expect.stringMatching(/reads it as email; the table's column is "Email"/) as string,
      },
      {
        test: 'test.shop.not_null_people_Email.abc',
        reason: expect.stringMatching(
          /unquoted, so dbt's SQL on postgres reads it as email; the table's column is "Email" \(another case\), so dbt's test errors/,
        ) as string,
      },
    ]);
    // Name is name to dbt, as the object holds it: its test is mapped, to that column.
    expect(yaml.parse(d.gate1Yaml ?? '')).toMatchObject({
      fieldOverrides: expect.arrayContaining([expect.objectContaining({ field: 'name' })]) as unknown,
    });
    // No rule of Email's tests: it may be NULL, any value.
    expect(d.gate1Yaml).not.toMatch(/accepted_values|IN \('a'\)|not_null_people_Email/);
    // Registered as the warehouse names the column; the note says its tests are not mapped.
    const { declaration, notes } = reconcileCase(yaml, d, 'analytics.people', warehouse.columns, 'postgres');
    expect(declaration.columns.map((c) => c.name)).toEqual(['id', 'Email', 'name']);
    expect(notes).toEqual([
      expect.stringMatching(
        /^people: column email -> Email: .*dbt's tests of it \(test\.shop\.accepted_values_people_Email\.abc, test\.shop\.not_null_people_Email\.abc\) error, and are not mapped/,
      ),
    ]);
  });

  it('a column declared quote: true keeps its case: "Email" reaches the object\'s Email', () => {
    const m = manifest(
      model('people', { columns: { Email: { name: 'Email', data_type: 'text', quote: true } } }),
      // dbt writes a quoted column's name into its tests quoted.
      genericTest('not_null', 'model.shop.people', {}, { column: '"Email"', id: 'test.shop.nn.abc' }),
    );
    const warehouse = { columns: new Map([['analytics.people', ['Email']]]) };
    const [d] = declareDbtProject({ manifest: m, warehouse }, {}, dbtReader).declarations;
    expect(d?.notMappedTests).toEqual([]);
    expect(d?.mappedTests.map((t) => t.rule)).toEqual(['required:Email']);
  });

  it('a documented EMAIL (email to dbt) where the object holds both email and Email: resolved as PostgreSQL folds it', () => {
    const m = manifest(
      model('people', { columns: columns({ EMAIL: 'text' }) }),
      genericTest('not_null', 'model.shop.people', {}, { column: 'EMAIL' }),
    );
    const warehouse = { columns: new Map([['analytics.people', ['email', 'Email']]]) };
    const [d] = declareDbtProject({ manifest: m, warehouse }, {}, dbtReader).declarations;
    expect(d?.notMappedTests).toEqual([]);
    expect(d?.mappedTests.map((t) => t.rule)).toEqual(['required:email']);
    // The same name as a relationships test's field: reaches email.
    const referencing = manifest(
      model('orders', { columns: columns({ person: 'text' }) }),
      model('people', { columns: columns({ EMAIL: 'text' }) }),
      genericTest(
        'relationships',
        'model.shop.orders',
        { to: "ref('people')", field: 'EMAIL' },
        { column: 'person', dependsOn: ['model.shop.people', 'model.shop.orders'] },
      ),
    );
    warehouse.columns.set('analytics.orders', ['person']);
    const [o] = declareDbtProject(
      { manifest: referencing, warehouse },
      { select: ['orders'] },
      dbtReader,
    ).declarations;
    expect(o?.notMappedTests).toEqual([]);
    expect(o?.columns.find((c) => c.name === 'person')?.references).toBe('analytics.people.email');
  });

  describe('a referenced model that documents only some of its columns: its field resolved against all the object holds', () => {
    const shop = (constraint?: Entry) =>
      manifest(
        model(
          'orders',
          constraint === undefined
            ? { columns: columns({ customer_id: 'integer' }) }
            : {
                config: { enabled: true, materialized: 'table', contract: { enforced: true } },
                columns: {
                  customer_id: { name: 'customer_id', data_type: 'integer', constraints: [constraint] },
                },
                depends_on: { nodes: ['model.shop.customers'] },
              },
        ),
        model('customers', { columns: columns({ name: 'text' }) }), // id is not documented
        ...(constraint === undefined
          ? [
              genericTest(
                'relationships',
                'model.shop.orders',
                { to: "ref('customers')", field: 'id' },
                { column: 'customer_id', dependsOn: ['model.shop.customers', 'model.shop.orders'] },
              ),
            ]
          : []),
      );
    const warehouse = {
      columns: new Map([
        ['analytics.orders', ['customer_id']],
        ['analytics.customers', ['id', 'name']],
      ]),
    };
    const declared = (m: Entry, objects?: typeof warehouse) => {
      const [d] = declareDbtProject(
        { manifest: m, ...(objects ? { warehouse: objects } : {}) },
        { select: ['orders'] },
        dbtReader,
      ).declarations;
      if (!d) throw new Error('no declaration');
      return d;
    };

    it("a relationships test's field: id, which the warehouse holds, is mapped as without the objects", () => {
      for (const objects of [undefined, warehouse]) {
        const d = declared(shop(), objects);
        expect(d.notMappedTests).toEqual([]);
        expect(d.mappedTests.map((t) => t.rule)).toEqual(['reference:customer_id']);
        expect(d.columns.find((c) => c.name === 'customer_id')?.references).toBe('analytics.customers.id');
      }
    });

    it("a contract's foreign_key to id (to_columns or its SQL) is mapped; one to a column the object lacks is not", () => {
      const constraints: Entry[] = [
        { type: 'foreign_key', to: "ref('customers')", to_columns: ['id'] },
        { type: 'foreign_key', expression: 'analytics.customers (id)' },
      ];
      for (const constraint of constraints) {
        const d = declared(shop(constraint), warehouse);
        expect(d.notMappedTests).toEqual([]);
        expect(d.columns.find((c) => c.name === 'customer_id')?.references).toBe('analytics.customers.id');
      }
      const d = declared(
        shop({ type: 'foreign_key', to: "ref('customers')", to_columns: ['ident'] }),
        warehouse,
      );
      expect(d.notMappedTests.map((t) => t.reason)).toEqual([
        expect.stringMatching(/analytics\.customers has no column "ident" \(its columns: id, name\)/),
      ]);
    });
  });
});
