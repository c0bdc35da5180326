// `npm run server -- --dbt DIR`: every model, seed and snapshot of the project becomes a
// table in the warehouse, in the schema its declaration's source names, served by a dev connector; seeds
// are loaded from seeds/*.csv; the ready file lists them; a declaration's artifact then registers as is.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../src/core/dbt/project.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { inferredType, postgresTypeOf } from '../../src/server/dbt-warehouse.js';
import { columns, manifest, model } from '../core/dbt/helpers.js';
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

describe('inferredType: a seed column without a type, from its values', () => {
  it.each([
    [['1', '-2', ''], 'bigint'],
    [['1.5', '2'], 'numeric'],
    [['true', 'False'], 'boolean'],
    [['2018-01-01'], 'date'],
    [['2018-01-01 10:00:00'], 'timestamp'],
    [['1', 'a'], 'text'],
    [['', ''], 'text'],
  ])('%j -> %s', (values, expected) => {
    expect(
      inferredType(
        values.map((v) => [v]),
        0,
      ),
    ).toBe(expected);
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

  it('fills the models from their compiled SQL over the seeds, parents first', async () => {
    const tables = server.ready.dbt?.tables ?? [];
    expect(server.ready.dbt?.warnings).toEqual([]);
    const rows = (source: string) => tables.find((t) => t.source === source)?.rows;
    expect(rows('main.stg_orders')).toBe(rows('main.raw_orders'));
    for (const table of tables) expect(table.rows, table.source).toBeGreaterThan(0);
    const [top] = await server.sql('SELECT count(*)::int AS n FROM main.top_customers');
    expect(top?.n).toBe(rows('main.top_customers'));
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
      const dbtReader = await prepareDbtReader();
      const project = declareDbtProject(
        { manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as unknown },
        {},
        dbtReader,
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

describe('--dbt runs only one query per model to fill its table', () => {
  let server: TestServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gds-dbt-fill-'));
    mkdirSync(join(dir, 'target'));
    mkdirSync(join(dir, 'seeds'));
    writeFileSync(join(dir, 'dbt_project.yml'), 'name: shop\n');
    writeFileSync(join(dir, 'seeds', 'raw_things.csv'), 'id,label\n1,a\n2,\n');
    const seed = {
      ...model('raw_things'),
      unique_id: 'seed.shop.raw_things',
      resource_type: 'seed',
      original_file_path: 'seeds\\raw_things.csv',
      config: { enabled: true, materialized: 'seed' },
    };
    const good = model('things', {
      compiled_code: 'with s as (select id, label from "dev"."analytics"."raw_things") select * from s',
      depends_on: { nodes: ['seed.shop.raw_things'] },
      columns: columns({ id: 'integer', label: 'text' }),
    });
    const hostile = model('hostile', {
      compiled_code: 'select 1 as id) as x; drop table analytics.raw_things; select * from (select 1 as id',
      columns: columns({ id: 'integer' }),
    });
    // A model onto the service's own schema, and models whose SQL reads it or the server's files.
    const onGds = model('signing_keys_copy', { schema: 'gds', columns: columns({ id: 'text' }) });
    const keys = model('keys', {
      compiled_code: 'select k.id from (select id from gds.signing_keys) as k',
      columns: columns({ id: 'text' }),
    });
    const file = model('passwd', {
      compiled_code: "select pg_catalog.pg_read_file('/etc/passwd') as id",
      columns: columns({ id: 'text' }),
    });
    writeFileSync(
      join(dir, 'target', 'manifest.json'),
      JSON.stringify(manifest(seed, good, hostile, onGds, keys, file)),
    );
    server = await startTestServer({ dbt: dir, jobs: 'manual' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fills a model over the seed, and leaves one whose SQL is not one query empty, with a note', async () => {
    const rows = (source: string) => server.ready.dbt?.tables.find((t) => t.source === source)?.rows;
    expect(rows('analytics.raw_things')).toBe(2);
    expect(rows('analytics.things')).toBe(2);
    expect(rows('analytics.hostile')).toBeUndefined();
    expect(server.ready.dbt?.warnings).toEqual([
      'model.shop.signing_keys_copy: skipped, its schema gds is reserved (gds, information_schema, pg_*, certified_*)',
      'model.shop.hostile: left empty, its compiled SQL is not one query PostgreSQL reads',
      'model.shop.keys: left empty, its compiled SQL reads a reserved schema (gds, information_schema, pg_*, certified_*) or calls a pg_ function',
      'model.shop.passwd: left empty, its compiled SQL reads a reserved schema (gds, information_schema, pg_*, certified_*) or calls a pg_ function',
    ]);
    expect(rows('analytics.keys')).toBeUndefined();
    expect(rows('analytics.passwd')).toBeUndefined();
    expect(server.ready.dbt?.tables.some((t) => t.source === 'gds.signing_keys_copy')).toBe(false);
    const [connectors] = await server.sql(
      `SELECT count(*)::int AS n FROM gds.connectors WHERE warehouse_schema = 'gds'`,
    );
    expect(connectors?.n).toBe(0);
    const [count] = await server.sql('SELECT count(*)::int AS n FROM analytics.raw_things');
    expect(count?.n).toBe(2);
    const [nulls] = await server.sql('SELECT count(*)::int AS n FROM analytics.things WHERE label IS NULL');
    expect(nulls?.n).toBe(1);
  });
});
