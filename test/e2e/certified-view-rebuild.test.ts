// Certified views survive warehouse rebuilds, with gds run in the test process against a reference server
// on PGlite and on PostgreSQL (skipped, saying why, without GDS_TEST_DATABASE_URL). dbt-postgres rebuilds a
// relation by creating `x__dbt_tmp`, renaming `x` to `x__dbt_backup`, renaming the new one to `x` and
// `drop … x__dbt_backup cascade`: the cascade drops certified_<env>.x. `gds recertify --tables x` then
// publishes it again over the new relation (its outcome says so), as does the next `gds status`, which
// reports what it found (missing); a rebuild that lost a certified column is reported, not published.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

const engines = [
  { engine: 'PGlite', database: undefined, skip: undefined },
  { engine: 'PostgreSQL', database: 'postgres' as const, skip: noPostgres },
];

describe.each(engines)('a dbt rebuild of a certified table on $engine', ({ database, skip }) => {
  let server: TestServer;
  let dir: string;
  let orders: string;
  let recertifyToken: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({ jobs: 'manual', ...(database ? { database } : {}) });
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-rebuild-'));
    orders = server.table('orders').id;
    const issued = await server.issueToken('ADMIN', {
      name: 'ci-recertify',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    });
    recertifyToken = issued.tokens.accessToken;
    // Certify orders for real: a submission (full Gate 1 scan), then the steward's certification.
    server.clock.advance(1000);
    const submitted = await server.request('POST', `/api/tables/${orders}/gate-submissions`, {
      token: server.user('STEWARD').accessToken,
      body: {},
    });
    expect(submitted.status).toBe(201);
    const certified = await server.request('POST', `/api/tables/${orders}/semantic-contract/certify`, {
      token: server.user('STEWARD').accessToken,
      body: { note: 'before the rebuild' },
    });
    expect(certified.status, JSON.stringify(certified.body)).toBe(200);
  });

  afterAll(async () => {
    await server?.close();
  });

  function gds(args: string[], token = server.user('ADMIN').cliToken): Promise<CliResult> {
    return runInProcess(args, {
      env: {
        GDS_CONFIG_DIR: join(dir, 'gds'),
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: token,
      },
    });
  }

  const only = (r: CliResult) => {
    expect(r.stdout.endsWith('\n')).toBe(true);
    const all = r.stdout.trimEnd().split('\n');
    expect(all).toHaveLength(1);
    return JSON.parse(all[0] ?? '') as Record<string, unknown>;
  };

  const viewExists = async () =>
    (await server.sql<{ r: string | null }>(`SELECT to_regclass('certified_dev.orders')::text AS r`))[0]
      ?.r !== null;
  const viewIds = async () =>
    (await server.sql<{ order_id: unknown }>('SELECT order_id FROM certified_dev.orders')).map((r) =>
      String(r.order_id),
    );

  /** What dbt-postgres does to rebuild analytics_dev.orders, with one more row (and optionally a column less). */
  async function dbtRebuild(newId: number, dropColumn?: string): Promise<void> {
    await server.sql(
      `CREATE TABLE analytics_dev.orders__dbt_tmp AS
         SELECT * FROM analytics_dev.orders
         UNION ALL
         SELECT (jsonb_populate_record(NULL::analytics_dev.orders, to_jsonb(o) || jsonb_build_object('order_id', $1::int))).*
           FROM (SELECT * FROM analytics_dev.orders ORDER BY order_id LIMIT 1) AS o`,
      [newId],
    );
    if (dropColumn !== undefined)
      await server.sql(`ALTER TABLE analytics_dev.orders__dbt_tmp DROP COLUMN "${dropColumn}"`);
    await server.sql('ALTER TABLE analytics_dev.orders RENAME TO orders__dbt_backup');
    await server.sql('ALTER TABLE analytics_dev.orders__dbt_tmp RENAME TO orders');
    await server.sql('DROP TABLE analytics_dev.orders__dbt_backup CASCADE');
  }

  it('status reports the published view and the version it serves', needs(skip), async () => {
    const r = await gds(['status', orders, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(only(r)).toMatchObject({
      state: 'CERTIFIED',
      certifiedView: {
        name: 'certified_dev.orders',
        health: 'published',
        version: expect.any(Number),
        republished: false,
      },
    });
    const human = await gds(['status', orders]);
    expect(human.stdout).toMatch(/Certified view: +certified_dev\.orders published v\d+\n/);
  });

  it(
    'gds recertify --tables orders publishes the view again over the rebuilt relation, and says so',
    needs(skip),
    async () => {
      await dbtRebuild(90001);
      expect(await viewExists()).toBe(false);
      const r = await gds(['recertify', '--tables', 'orders', '--json'], recertifyToken);
      expect(r.code, r.stderr).toBe(0);
      const response = only(r) as { outcomes: Array<Record<string, unknown>> };
      expect(response.outcomes).toEqual([
        expect.objectContaining({
          table: 'orders',
          outcome: 'recert_filed',
          certifiedView: expect.objectContaining({
            name: 'certified_dev.orders',
            health: 'missing',
            republished: true,
            detail: expect.stringContaining('published again'),
          }),
        }),
      ]);
      expect(await viewIds()).toContain('90001');
      const status = only(await gds(['status', orders, '--json']));
      expect(status).toMatchObject({ certifiedView: { health: 'published', republished: false } });
    },
  );

  it(
    'human mode: the outcome table has the view column, stderr says it was published again',
    needs(skip),
    async () => {
      await dbtRebuild(90002);
      const r = await gds(['recertify', '--tables', 'orders'], recertifyToken);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/orders\trecert_filed\tno\tmissing, published again v\d+/);
      expect(r.stderr).toContain('certified_dev.orders was missing');
      expect(await viewIds()).toContain('90002');
    },
  );

  it(
    'status after a rebuild said missing, and the view answers again with the new rows',
    needs(skip),
    async () => {
      await dbtRebuild(90003);
      expect(await viewExists()).toBe(false);
      const status = await gds(['status', orders, '--json']);
      expect(status.code, status.stderr).toBe(0);
      expect(only(status)).toMatchObject({
        certifiedView: { name: 'certified_dev.orders', health: 'missing', republished: true },
      });
      const recertified = await gds(['recertify', '--tables', 'orders', '--json'], recertifyToken);
      expect(recertified.code, recertified.stderr).toBe(0);
      expect(await viewIds()).toEqual(expect.arrayContaining(['90001', '90002', '90003']));
      const audit = await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE table_id = $1 AND action = 'CERTIFIED_VIEW_REPUBLISHED'`,
        [orders],
      );
      expect(audit[0]?.n).toBe(3);
    },
  );

  it(
    'a rebuild files a rebuild request; status says the rows are not gated since, --exit-status exits 1',
    needs(skip),
    async () => {
      // Nothing open to begin with: --exit-status passes.
      await server.sql(`UPDATE gds.recertification_requests SET status = 'DISMISSED' WHERE table_id = $1`, [
        orders,
      ]);
      const clean = await gds(['status', orders, '--exit-status']);
      expect(clean.code, clean.stderr).toBe(0);
      await dbtRebuild(90010);
      const r = await gds(['status', orders, '--exit-status', '--json']);
      expect(r.code).toBe(1);
      const status = only(r) as {
        certifiedView: { republished: boolean; ungatedSince: string | null };
        openRecertificationRequests: number;
      };
      expect(status.certifiedView.republished).toBe(true);
      expect(status.certifiedView.ungatedSince).toEqual(expect.any(String));
      expect(status.openRecertificationRequests).toBe(1);
      expect(await viewIds()).toContain('90010');
      const requests = await server.sql<{ cause: string; details: Record<string, unknown> }>(
        `SELECT cause, details FROM gds.recertification_requests WHERE table_id = $1 AND status = 'OPEN'`,
        [orders],
      );
      expect(requests).toEqual([
        { cause: 'rebuild', details: { view: 'certified_dev.orders', via: 'status' } },
      ]);
      const human = await gds(['status', orders, '--exit-status']);
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(
        /Certified view: +certified_dev\.orders published v\d+ \(the relation was rebuilt: its rows have not been gated since /,
      );
      expect(human.stdout).toMatch(/Recertification: +1 open request/);
    },
  );

  it(
    'with certified_view_after_rebuild withhold, a rebuilt view stays missing until certified again',
    needs(skip),
    async () => {
      const set = await gds(['config', 'set', 'certified_view_after_rebuild', 'withhold']);
      expect(set.code, set.stderr).toBe(0);
      try {
        await dbtRebuild(90011);
        const r = await gds(['status', orders, '--exit-status', '--json']);
        expect(r.code).toBe(1);
        expect(only(r)).toMatchObject({
          certifiedView: {
            health: 'missing',
            republished: false,
            detail: expect.stringContaining('withheld until the table is certified again'),
          },
        });
        expect(await viewExists()).toBe(false);
      } finally {
        const reset = await gds(['config', 'set', 'certified_view_after_rebuild', 'republish']);
        expect(reset.code, reset.stderr).toBe(0);
      }
      // Back to the default: the next read publishes it again.
      expect(only(await gds(['status', orders, '--json']))).toMatchObject({
        certifiedView: { republished: true },
      });
      expect(await viewIds()).toContain('90011');
    },
  );

  it(
    'a rebuild that lost a certified column: not published, and the outcome and status say why',
    needs(skip),
    async () => {
      const [row] = await server.sql<{ columns: Array<{ name: string }> }>(
        'SELECT columns FROM gds.tables WHERE id = $1',
        [orders],
      );
      const lost = row?.columns.at(-1)?.name ?? '';
      expect(lost).not.toBe('');
      await dbtRebuild(90004, lost);
      const r = await gds(['recertify', '--tables', 'orders', '--json'], recertifyToken);
      expect(r.code, r.stderr).toBe(0);
      const response = only(r) as { outcomes: Array<{ certifiedView?: Record<string, unknown> }> };
      expect(response.outcomes[0]?.certifiedView).toMatchObject({
        health: 'missing',
        republished: false,
        detail: expect.stringContaining(`no longer has the certified column ${lost}`),
      });
      expect(await viewExists()).toBe(false);
      const human = await gds(['status', orders]);
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(
        /Certified view: +certified_dev\.orders missing: .*cannot be published again/,
      );
      expect(await viewExists()).toBe(false);
    },
  );
});
