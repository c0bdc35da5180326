// The evidence summary the service derives from a signal's run results (§4.8: "derives the rebuilt-table batch
// and evidence summary from it"), stamped on each table's RECERTIFY_SIGNAL audit entry: how many results of
// each resource type ended in each status, the pipeline's tests included (context only), so that whoever reads
// the audit log sees that the run's tests failed without the run's files. Bounded whatever the file holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultCounts } from '../../../src/core/dbt-run.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  token = (
    await server.issueToken('ADMIN', { name: 'ci', env: 'dev', scopes: ['workspace:write:recertify'] })
  ).tokens.accessToken;
});

afterAll(async () => {
  await server?.close();
});

const result = (status: string, uniqueId: string, relation: string | null = null) => ({
  status,
  unique_id: uniqueId,
  message: null,
  adapter_response: {},
  relation_name: relation,
});

describe('the evidence summary of a run', () => {
  it('counts each resource type’s results by status on the audit entry, failed tests included', async () => {
    const response = await server.request('POST', '/api/workspace/recertify', {
      token,
      body: {
        runResults: {
          metadata: {
            dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
            dbt_version: '1.8.0',
            invocation_id: 'inv-evidence',
          },
          results: [
            result('success', 'seed.shop.raw_orders', '"dev"."analytics_dev"."raw_orders"'),
            result('success', 'model.shop.customers', '"dev"."analytics_dev"."customers"'),
            result('error', 'model.shop.orders', '"dev"."analytics_dev"."orders"'),
            result('skipped', 'model.shop.order_items', '"dev"."analytics_dev"."order_items"'),
            result('pass', 'test.shop.not_null_customers_id'),
            result('fail', 'test.shop.unique_customers_id'),
            result('fail', 'test.shop.accepted_values_customers_tier'),
            result('warn', 'test.shop.recent_customers'),
          ],
          elapsed_time: 3,
          args: { which: 'build' },
        },
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      governed: 1,
      outcomes: [{ table: 'raw_orders' }, { table: 'customers' }],
    });
    const audit = await server.request('GET', '/api/workspace/audit-log?eventType=RECERTIFY_SIGNAL&limit=1', {
      token: server.user('ADMIN').cliToken,
    });
    expect(audit.status).toBe(200);
    const [entry] = audit.body.entries as Array<{ tableId: string; details: { runResults: unknown } }>;
    expect(entry?.tableId).toBe(server.table('customers').id);
    expect(entry?.details.runResults).toMatchObject({
      invocationId: 'inv-evidence',
      results: {
        seed: { success: 1 },
        model: { success: 1, error: 1, skipped: 1 },
        test: { pass: 1, fail: 2, warn: 1 },
      },
    });
  });

  it('stays small whatever the file holds: statuses past 16, or over 40 characters, are counted as other', () => {
    const results = [
      ...Array.from({ length: 30 }, (_, i) => result(`status_${i}`, `model.shop.m${i}`)),
      result('x'.repeat(41), 'model.shop.long'),
      result('success', 'model.shop.ok'),
    ];
    const counts = resultCounts({ results });
    expect(Object.keys(counts)).toEqual(['model']);
    expect(Object.keys(counts.model ?? {})).toHaveLength(17);
    expect(counts.model?.['other']).toBe(30 - 16 + 2);
    expect(resultCounts({ results: 'not a list' })).toEqual({});
  });

  it('counts a type or status named like a property of every object (__proto__, constructor) as text', async () => {
    const response = await server.request('POST', '/api/workspace/recertify', {
      token,
      body: {
        runResults: {
          metadata: {
            dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
            dbt_version: '1.8.0',
            invocation_id: 'inv-proto',
          },
          results: [
            result('success', 'model.shop.customers', '"dev"."analytics_dev"."customers"'),
            result('zzPolluted', '__proto__.a.b'),
            result('toString', 'constructor.a.b'),
          ],
          elapsed_time: 3,
          args: { which: 'build' },
        },
      },
    });
    expect(response.status).toBe(200);
    expect(({} as Record<string, unknown>)['zzPolluted']).toBeUndefined();
    expect(typeof Object.prototype.toString).toBe('function');
    const counts = resultCounts({
      results: [result('zzPolluted', '__proto__.a.b'), result('toString', 'constructor.a.b')],
    });
    expect(Object.hasOwn(counts, '__proto__')).toBe(true);
    expect(JSON.parse(JSON.stringify(counts))).toEqual(
      JSON.parse('{"__proto__":{"zzPolluted":1},"constructor":{"toString":1}}'),
    );
  });
});
