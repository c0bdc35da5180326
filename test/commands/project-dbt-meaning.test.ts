// dbt's meaning on the service, in process on PGlite and PostgreSQL: a dbt project applied with planProject /
// applyPlan, then its tables gated. A column without not_null may hold NULLs in any share of rows (the gate
// passes and the table can be certified, as `dbt build` is green); the rules a table gets are in the plan.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/client/index.js';
import { testClient } from '../helpers/client.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';
import { columns, genericTest, manifest, model } from '../core/dbt/helpers.js';

describe.each(ENGINES)('a dbt project on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let client: ApiClient;
  let dev: string;
  let dir: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer(postgres ? { database: 'postgres' } : {});
    client = testClient(server.url, server.user('ADMIN').cliToken);
    dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    // An SCD2-style table: valid_to is NULL on every current row, plan_id on a LEFT JOIN's misses.
    await server.sql(
      `CREATE TABLE analytics_dev.members (member_id integer, plan_id integer, valid_to date, email text)`,
    );
    await server.sql(
      `INSERT INTO analytics_dev.members VALUES (1, NULL, NULL, 'a@x'), (2, NULL, NULL, 'b@x'),
         (3, 7, NULL, 'c@x'), (4, NULL, '2024-01-01', NULL)`,
    );
    await server.sql(`CREATE TABLE analytics_dev.claims (claim_id integer, amount numeric, note text)`);
    await server.sql(`INSERT INTO analytics_dev.claims VALUES (1, 10, NULL), (2, 0, 'x')`);
    dir = await mkdtemp(join(tmpdir(), 'gds-dbt-meaning-'));
    const claims = model('claims', {
      schema: 'analytics_dev',
      config: { enabled: true, materialized: 'table', contract: { enforced: true } },
      columns: {
        claim_id: { name: 'claim_id', data_type: 'integer', constraints: [{ type: 'primary_key' }] },
        amount: {
          name: 'amount',
          data_type: 'numeric',
          constraints: [{ type: 'check', expression: 'amount >= 0' }],
        },
        note: { name: 'note', data_type: 'text' },
      },
    });
    const members = model('members', {
      schema: 'analytics_dev',
      columns: columns({ member_id: 'integer', plan_id: 'integer', valid_to: 'date', email: 'text' }),
    });
    await writeFile(
      join(dir, 'manifest.json'),
      JSON.stringify(
        manifest(
          claims,
          members,
          genericTest('not_null', 'model.shop.members', {}, { column: 'member_id' }),
          genericTest('unique', 'model.shop.members', {}, { column: 'member_id' }),
          genericTest('unique', 'model.shop.members', {}, { column: 'email' }),
          genericTest(
            'unique_combination_of_columns',
            'model.shop.members',
            { combination_of_columns: ['plan_id', 'valid_to'] },
            { namespace: 'dbt_utils', config: { severity: 'warn' }, id: 'test.shop.members_plan_period.1' },
          ),
        ),
      ),
    );
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it(
    'nullable columns holding NULLs (75 % of valid_to): gate run passes, the table is certified',
    needs(skip),
    async () => {
      const project = await loadDbtProject(dir, { select: ['members'] });
      const plan = await planProject(client, project, { connectorId: dev });
      const [table] = plan.tables;
      expect(table?.action).toBe('create');
      expect(table?.rules).toEqual(
        expect.arrayContaining([
          'grain key (member_id): no value twice',
          'unique_members_email: no value of (email) twice (HARD_FAIL)',
          'members_plan_period: no value of (plan_id, valid_to) twice, NULL counted as a value (WARN)',
          expect.stringMatching(/^member_id: never NULL \(dbt test test\.shop\.not_null/),
          'valid_to: may be NULL in any share of rows (no not_null test: in dbt the column may be NULL)',
        ]),
      );
      expect(table?.diffs.gate1).toMatch(/field: valid_to\n\+ {4}nullRate:\n\+ {6}warn: 1\n\+ {6}fail: 1/);
      const applied = await applyPlan(client, plan, { describe: (e) => e });
      expect(applied.failed).toEqual([]);
      const tableId = applied.actions[0]?.tableId ?? '';
      const run = await client.gates.run(tableId, { gate: 1 });
      if (run.kind !== 'proof') throw new Error(`expected a proof, got ${run.kind}`);
      const nullChecks = run.proof.results.filter((r) => r.name.startsWith('null_rate.'));
      expect(nullChecks.map((r) => [r.name, r.passed])).toEqual([
        ['null_rate.member_id', true],
        ['null_rate.plan_id', true],
        ['null_rate.valid_to', true],
        ['null_rate.email', true],
      ]);
      expect(run.proof.results.find((r) => r.name === 'unique_members_email')).toMatchObject({
        passed: true,
        failingRows: 0,
      });
      expect(run.proof.passed).toBe(true);
      await client.gates.submit(tableId, { ifNotCertified: false });
      // Certifying takes a person's session, not a CLI token.
      const person = testClient(server.url, server.user('ADMIN').accessToken);
      try {
        await person.contracts.certify(tableId, { note: 'dbt build is green' });
        expect((await client.tables.status(tableId)).state).toBe('CERTIFIED');
      } finally {
        await person.close();
      }
    },
  );

  it(
    'two unique tests are both enforced: the grain key and a uniqueness check (NULLs not compared, as dbt)',
    needs(skip),
    async () => {
      const [table] = (await client.tables.list()).filter((t) => t.name === 'members');
      await server.sql(
        `INSERT INTO analytics_dev.members VALUES (5, NULL, NULL, 'a@x'), (6, NULL, NULL, NULL), (1, 7, NULL, 'z@x')`,
      );
      const run = await client.gates.run(table?.id ?? '', { gate: 1 });
      if (run.kind !== 'proof') throw new Error(`expected a proof, got ${run.kind}`);
      expect(run.proof.results.find((r) => r.name === 'grain_uniqueness')).toMatchObject({
        passed: false,
        failingRows: 2,
      });
      expect(run.proof.results.find((r) => r.name === 'unique_members_email')).toMatchObject({
        passed: false,
        severity: 'HARD_FAIL',
        failingRows: 2,
        detail: '1 value of (email) appear more than once, over 2 rows.',
      });
      // dbt_utils.unique_combination_of_columns groups the rows: those sharing a NULL count as repeated.
      expect(run.proof.results.find((r) => r.name === 'members_plan_period')).toMatchObject({
        passed: false,
        severity: 'WARN',
        failingRows: 6,
        detail: '2 values of (plan_id, valid_to) appear more than once, over 6 rows.',
      });
      expect(run.proof.passed).toBe(false);
    },
  );

  it(
    'Snowflake-style upper-case catalog columns against a lower-case warehouse: named at plan time, registered unquoted',
    needs(skip),
    async () => {
      await server.sql(`CREATE TABLE analytics_dev.sf_orders (order_id integer, status text)`);
      await server.sql(`INSERT INTO analytics_dev.sf_orders VALUES (1, 'placed'), (2, NULL)`);
      const sf = await mkdtemp(join(tmpdir(), 'gds-dbt-snowflake-'));
      const m = manifest(
        model('sf_orders', { schema: 'analytics_dev', columns: columns({ order_id: null, status: null }) }),
        genericTest('accepted_values', 'model.shop.sf_orders', { values: ['placed'] }, { column: 'status' }),
      );
      (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'snowflake';
      const column = (name: string, type: string, index: number) => ({ name, type, index });
      await writeFile(join(sf, 'manifest.json'), JSON.stringify(m));
      await writeFile(
        join(sf, 'catalog.json'),
        JSON.stringify({
          metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json' },
          nodes: {
            'model.shop.sf_orders': {
              unique_id: 'model.shop.sf_orders',
              metadata: { schema: 'ANALYTICS_DEV', name: 'SF_ORDERS' },
              columns: { ORDER_ID: column('ORDER_ID', 'NUMBER', 1), STATUS: column('STATUS', 'TEXT', 2) },
            },
          },
          sources: {},
        }),
      );
      // Each test's folder is a dbt project of its own named shop: each with an id of its own (gds.yml's project:).
      const plan = await planProject(client, await loadDbtProject(sf, {}), {
        connectorId: dev,
        project: 'shop-snowflake',
      });
      expect(plan.warnings).toContainEqual(
        expect.stringMatching(
          /^sf_orders: columns ORDER_ID -> order_id, STATUS -> status: the warehouse object/,
        ),
      );
      expect(plan.tables[0]?.diffs.gate1).toContain("sql: status IN ('placed')");
      const applied = await applyPlan(client, plan, { describe: (e) => e });
      expect(applied.failed).toEqual([]);
      const run = await client.gates.run(applied.actions[0]?.tableId ?? '', { gate: 1 });
      if (run.kind !== 'proof') throw new Error(`expected a proof, got ${run.kind}`);
      expect(run.proof.results.find((r) => r.name === 'column_presence')?.passed).toBe(true);
      expect(run.proof.passed).toBe(true);
    },
  );

  it(
    "an enforced contract's constraints are Gate 1 rules: primary_key the grain key, check a predicate",
    needs(skip),
    async () => {
      const project = await loadDbtProject(dir, { select: ['claims'] });
      const plan = await planProject(client, project, { connectorId: dev });
      expect(plan.tables[0]?.rules).toEqual(
        expect.arrayContaining([
          'grain key (claim_id): no value twice',
          'claims_check_amount: amount >= 0 (HARD_FAIL)',
          'note: may be NULL in any share of rows (no not_null test: in dbt the column may be NULL)',
        ]),
      );
      const applied = await applyPlan(client, plan, { describe: (e) => e });
      expect(applied.failed).toEqual([]);
      const tableId = applied.actions[0]?.tableId ?? '';
      const passing = await client.gates.run(tableId, { gate: 1 });
      if (passing.kind !== 'proof') throw new Error(`expected a proof, got ${passing.kind}`);
      expect(passing.proof.passed).toBe(true);
      await server.sql(`INSERT INTO analytics_dev.claims VALUES (3, -5, NULL)`);
      const failing = await client.gates.run(tableId, { gate: 1 });
      if (failing.kind !== 'proof') throw new Error(`expected a proof, got ${failing.kind}`);
      expect(failing.proof.results.find((r) => r.name === 'claims_check_amount')).toMatchObject({
        passed: false,
        failingRows: 1,
      });
      expect(failing.proof.passed).toBe(false);
    },
  );

  it(
    "dbt's quoting names the relation: folded where dbt leaves it unquoted (and matched to the warehouse), kept where quoted",
    needs(skip),
    async () => {
      await server.sql(`CREATE TABLE analytics_dev.q_orders (order_id integer)`);
      /** A project folder: its dbt_project.yml (with `quoting`) and target/manifest.json of one model. */
      const project = async (adapter: string, alias: string, quoting = '') => {
        const folder = await mkdtemp(join(tmpdir(), 'gds-dbt-quoting-'));
        const m = manifest(
          model('q_orders', { alias, schema: 'analytics_dev', columns: columns({ order_id: 'integer' }) }),
        );
        (m['metadata'] as Record<string, unknown>)['adapter_type'] = adapter;
        await mkdir(join(folder, 'target'));
        await writeFile(join(folder, 'target', 'manifest.json'), JSON.stringify(m));
        await writeFile(join(folder, 'dbt_project.yml'), `name: shop\nprofile: shop\n${quoting}`);
        return planProject(client, await loadDbtProject(folder, {}), {
          connectorId: dev,
          project: 'shop-quoting',
        });
      };

      // Snowflake leaves it unquoted (ANALYTICS_DEV.Q_ORDERS): the warehouse names it in lower case.
      const snowflake = await project('snowflake', 'q_orders');
      expect(snowflake.tables[0]).toMatchObject({ action: 'create', source: 'analytics_dev.q_orders' });
      expect(snowflake.warnings).toContainEqual(
        expect.stringMatching(/^q_orders: source ANALYTICS_DEV\.Q_ORDERS -> analytics_dev\.q_orders: /),
      );

      // PostgreSQL quotes by default: "Q_Orders" keeps its case, and the warehouse has no such relation.
      const quoted = await project('postgres', 'Q_Orders');
      expect(quoted.tables[0]).toMatchObject({ action: 'refused' });
      expect(quoted.warnings).toContainEqual(
        expect.stringMatching(
          /^Q_Orders: the warehouse object is analytics_dev\.q_orders, not analytics_dev\.Q_Orders/,
        ),
      );

      // quoting: {identifier: false} in dbt_project.yml: dbt builds q_orders, and gds registers it.
      const unquoted = await project('postgres', 'Q_Orders', 'quoting:\n  identifier: false\n');
      expect(unquoted.tables[0]).toMatchObject({ action: 'create', source: 'analytics_dev.q_orders' });
      expect(unquoted.warnings.join('\n')).not.toContain('warehouse object is');
    },
  );

  it(
    'a relationships test to a source in a schema no connector reads is not mapped (with what to do); one another connector reads is checked',
    needs(skip),
    async () => {
      await server.sql(
        `CREATE TABLE analytics_dev.payments (payment_id integer, account_id integer, customer_id integer)`,
      );
      await server.sql(`INSERT INTO analytics_dev.payments VALUES (1, 1, 10)`);
      await server.sql(`CREATE TABLE analytics_staging.crm_accounts (account_id integer)`);
      await server.sql(`INSERT INTO analytics_staging.crm_accounts VALUES (1)`);
      const source = (name: string, table: string, schema: string, identifier: string) => ({
        unique_id: `source.shop.${name}.${table}`,
        resource_type: 'source',
        name: table,
        source_name: name,
        package_name: 'shop',
        fqn: ['shop', name, table],
        database: 'dev',
        schema,
        identifier,
        config: { enabled: true },
        columns: {},
      });
      const accounts = source('crm', 'accounts', 'analytics_staging', 'crm_accounts');
      const rawCustomers = source('raw', 'customers', 'raw', 'customers');
      const toRaw = genericTest(
        'relationships',
        'model.shop.payments',
        { to: "source('raw', 'customers')", field: 'customer_id' },
        { column: 'customer_id', dependsOn: ['source.shop.raw.customers', 'model.shop.payments'] },
      );
      const folder = await mkdtemp(join(tmpdir(), 'gds-dbt-references-'));
      await writeFile(
        join(folder, 'manifest.json'),
        JSON.stringify({
          ...manifest(
            model('payments', {
              schema: 'analytics_dev',
              columns: columns({ payment_id: 'integer', account_id: 'integer', customer_id: 'integer' }),
            }),
            genericTest(
              'relationships',
              'model.shop.payments',
              { to: "source('crm', 'accounts')", field: 'account_id' },
              { column: 'account_id', dependsOn: ['source.shop.crm.accounts', 'model.shop.payments'] },
            ),
            toRaw,
          ),
          sources: { [accounts.unique_id]: accounts, [rawCustomers.unique_id]: rawCustomers },
        }),
      );
      const plan = await planProject(client, await loadDbtProject(folder, {}), {
        connectorId: dev,
        project: 'shop-relationships',
      });
      const [table] = plan.tables;
      expect(table?.action).toBe('create');
      expect(table?.mappedTests.map((t) => t.rule)).toEqual(['reference:account_id']);
      expect(table?.notMappedTests).toEqual([
        {
          test: toRaw['unique_id'],
          reason: expect.stringMatching(
            /^the reference raw\.customers\.customer_id: no connector of the workspace reads schema raw .*add a connector/,
          ) as unknown,
        },
      ]);
      expect(table?.rules).toContain('account_id: references analytics_staging.crm_accounts.account_id');
      expect(table?.rules?.join('\n')).not.toContain('customer_id: references');
      const applied = await applyPlan(client, plan, { describe: (e) => e });
      expect(applied.failed).toEqual([]);
      const run = await client.gates.run(applied.actions[0]?.tableId ?? '', { gate: 1 });
      if (run.kind !== 'proof') throw new Error(`expected a proof, got ${run.kind}`);
      expect(
        run.proof.results
          .filter((r) => r.name.startsWith('referential_integrity'))
          .map((r) => [r.name, r.passed]),
      ).toEqual([['referential_integrity.account_id', true]]);
      expect(run.proof.passed).toBe(true);
    },
  );
});
