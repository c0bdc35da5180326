// `npm run server -- --dbt DIR` (issue 20, item 8): every model, seed and snapshot of the project becomes a
// table in the warehouse, in the schema its declaration's source names, served by a dev connector; seeds
// are loaded from seeds/*.csv; the ready file lists them; a declaration's artifact then registers as is.
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../src/core/dbt/project.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { postgresTypeOf } from '../../src/server/dbt-warehouse.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs, noPostgres, noSharedFixtures } from '../helpers/skip.js';

const jaffle = `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb`;

describe('postgresTypeOf', () => {
  it.each([
    ['INTEGER', 'integer'],
    ['HUGEINT', 'numeric'],
    ['NUMBER(38,0)', 'numeric(38,0)'],
    ['character varying(256)', 'text'],
    ['STRING', 'text'],
    ['FLOAT64', 'double precision'],
    ['TIMESTAMP_NTZ', 'timestamp'],
    ['timestamp with time zone', 'timestamptz'],
    ['BOOLEAN', 'boolean'],
    ['DATE', 'date'],
    ['VARIANT', 'text'],
    ['unknown', 'text'],
  ])('%s -> %s', (type, expected) => {
    expect(postgresTypeOf(type)).toBe(expected);
  });
});

describe('--dbt on the jaffle project (PGlite)', needs(noSharedFixtures), () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ dbt: jaffle, jobs: 'manual' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates every declared relation with its catalog columns, in the schema its source names', async () => {
    const project = await loadDbtProject(jaffle, {});
    const dbt = server.ready.dbt;
    expect(dbt?.refused).toEqual([]);
    expect(dbt?.tables.map((t) => t.source).sort()).toEqual(
      project.declarations.map((d) => `${d.source.schema}.${d.source.table}`).sort(),
    );
    const connector = server.ready.connectors.find((c) => c.schema === 'main');
    expect(connector).toMatchObject({ name: 'dbt-main', environmentLabel: 'dev' });
    const ltv = server.ready.warehouseObjects.find((o) => o.source === 'main.customer_ltv');
    expect(ltv).toEqual({
      connectorId: connector?.id,
      source: 'main.customer_ltv',
      columns: [
        { name: 'customer_id', type: 'integer' },
        { name: 'lifetime_value', type: 'numeric' },
      ],
    });
  });

  it('loads the seeds from seeds/*.csv', async () => {
    const seeds = server.ready.dbt?.tables.filter((t) => t.resourceType === 'seed') ?? [];
    expect(seeds.map((s) => s.source).sort()).toEqual([
      'main.raw_customers',
      'main.raw_orders',
      'main.raw_payments',
    ]);
    for (const seed of seeds) expect(seed.rows).toBeGreaterThan(0);
    const [count] = await server.sql('SELECT count(*)::int AS n FROM main.raw_orders');
    expect(count?.n).toBe(seeds.find((s) => s.source === 'main.raw_orders')?.rows);
  });

  it('a declaration of the project registers on the dev connector as it is', async () => {
    const project = await loadDbtProject(jaffle, { select: ['stg_orders'] });
    const [declaration] = project.declarations;
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: { filename: declaration?.artifact.fileName, content: declaration?.artifact.content },
    });
    expect(response.status).toBe(202);
    const [row] = await server.sql('SELECT source, columns FROM gds.tables WHERE id = $1', [
      response.body.tableId,
    ]);
    expect(row?.source).toBe('main.stg_orders');
  });
});

describe(
  '--dbt with --database-url, on a folder holding only manifest.json',
  needs(noPostgres, noSharedFixtures),
  () => {
    let server: TestServer;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gds-dbt-server-'));
      copyFileSync(`${sharedFixturesDir}real/dbt/ol_postgres.manifest.json`, join(dir, 'manifest.json'));
      server = await startTestServer({ dbt: dir, database: 'postgres', jobs: 'manual' });
    });
    afterAll(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('creates the declared tables (no seed files: seeds are refused, with the reason)', async () => {
      await prepareDbtReader();
      const project = declareDbtProject(
        { manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as unknown },
        {},
      );
      const created = server.ready.dbt?.tables.map((t) => t.source).sort();
      expect(created).toEqual(project.declarations.map((d) => `${d.source.schema}.${d.source.table}`).sort());
      expect(server.ready.dbt?.refused.map((r) => r.uniqueId).sort()).toEqual(
        project.refusals.map((r) => r.uniqueId).sort(),
      );
      for (const source of created ?? [])
        expect(server.ready.warehouseObjects.some((o) => o.source === source)).toBe(true);
    });
  },
);
