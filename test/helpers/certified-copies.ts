// Many CERTIFIED Mode A tables whose certified views a dbt rebuild dropped, made in a few statements: `count`
// warehouse relations `analytics_dev.${prefix}_1…` (id, note), and a CERTIFIED table over each, copied
// from a seeded Mode A table (dev). No certified view exists: the next recertification signal or status
// publishes each again. For the recertify bench and the large-run tests.
import type { TestServer } from './server.js';
import { copyTable } from './table-copies.js';

export async function certifiedCopies(
  server: Pick<TestServer, 'sql' | 'table'>,
  count: number,
  prefix: string,
): Promise<string[]> {
  // A hundred a statement: each statement holds a lock per table it creates, under the query deadline.
  for (let from = 1; from <= count; from += 100) {
    await server.sql(
      `DO $$ BEGIN
         FOR i IN ${from}..${Math.min(count, from + 99)} LOOP
           EXECUTE format('CREATE TABLE analytics_dev.%I (id integer, note text)', '${prefix}_' || i);
         END LOOP;
       END $$`,
    );
  }
  await copyTable(server, server.table('orders').id, count, prefix, {
    source: `'analytics_dev.${prefix}_' || g`,
    state: `'CERTIFIED'`,
    columns: `'[{"name":"id","type":"integer","required":false},{"name":"note","type":"text","required":false}]'::jsonb`,
    artifact: 'NULL',
    definition_checksum: 'NULL',
  });
  return Array.from({ length: count }, (_, i) => `${prefix}_${i + 1}`);
}

/** A dbt run_results.json (v6) in which every model of `names` was rebuilt, plus one test. */
export function runResultsOf(names: readonly string[], invocationId: string): string {
  return JSON.stringify({
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
      dbt_version: '1.8.0',
      invocation_id: invocationId,
    },
    results: [
      ...names.map((name) => ({
        status: 'success',
        unique_id: `model.shop.${name}`,
        message: 'SELECT 1',
        adapter_response: {},
        relation_name: `"dev"."analytics_dev"."${name}"`,
      })),
      { status: 'pass', unique_id: 'test.shop.not_null_x', relation_name: null },
    ],
    elapsed_time: 60,
    args: { which: 'build' },
  });
}

/** A MANAGEMENT access token of the dev environment with workspace:write:recertify, as a CI job holds. */
export async function recertifyToken(server: Pick<TestServer, 'issueToken'>): Promise<string> {
  const issued = await server.issueToken('ADMIN', {
    name: 'ci-recertify',
    env: 'dev',
    scopes: ['workspace:write:recertify'],
  });
  return issued.tokens.accessToken;
}
