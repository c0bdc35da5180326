// `gds recertify --tables` with names as a warehouse prints them: `schema.table`, `db.schema.table` (dbt's
// relation), a quoted name. Each names the table over that relation (a quoted part is the name it quotes);
// before, each was sent as typed, matched no table, and was reported not_governed without a word.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { recertifyEnv, startRecertifyServer } from '../helpers/recertify-runs.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';

describe('recertify --tables with qualified and quoted names', () => {
  let server: TestServer;
  let dir: string;
  let token: string;

  beforeAll(async () => {
    ({ server, token } = await startRecertifyServer());
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-names-'));
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: recertifyEnv(dir, server.url, token),
    });

  const signals = async (table: string) =>
    (
      await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL' AND table_id = $1`,
        [server.table(table).id],
      )
    )[0]?.n ?? 0;

  it('signals the table over the relation each names; another schema’s relation is not governed', async () => {
    // The seed's dev tables: customers (CERTIFIED) over analytics_dev.customers, orders (QUARANTINED) over
    // analytics_dev.orders.
    const [customers, orders] = [await signals('customers'), await signals('orders')];
    const r = await gds([
      'recertify',
      '--tables',
      'analytics_dev.customers,"Orders",dev.analytics_dev.customers,analytics_prod.customers,`customers`',
      '--env',
      'dev',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const response = JSON.parse(r.stdout) as {
      submitted: number;
      governed: number;
      outcomes: Array<{ table: string; outcome: string }>;
    };
    expect(response.outcomes.map((o) => [o.table, o.outcome])).toEqual([
      ['customers', 'recert_filed'],
      ['Orders', 'not_certified'],
      ['customers', 'recert_filed'],
      ['customers', 'not_governed'],
      ['customers', 'recert_filed'],
    ]);
    expect(response).toMatchObject({ submitted: 5, governed: 4 });
    // Named three times, each table is signalled once.
    expect(await signals('customers')).toBe(customers + 1);
    expect(await signals('orders')).toBe(orders + 1);
  });

  it('a plain name, even one the warehouse would not take unquoted, is sent as typed', async () => {
    const r = await gds(['recertify', '--tables', 'Customers,raw-source-0', '--env', 'dev', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const response = JSON.parse(r.stdout) as { outcomes: Array<{ table: string; outcome: string }> };
    expect(response.outcomes.map((o) => [o.table, o.outcome])).toEqual([
      ['Customers', 'recert_filed'],
      ['raw-source-0', 'not_governed'],
    ]);
  });
});
