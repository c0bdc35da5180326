// A single dbt file: a model template is refused saying what to do; dbt's compiled SQL
// (a bare `with … select`) and run SQL (`create … <name>__dbt_tmp as (…)`) are read as the model itself,
// a final `select * from <cte>` resolved through the CTEs. Checked on every SQL file of a real project.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import { readArtifact } from '../../../src/services/artifacts.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

const project = `${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb`;

function sqlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sqlFiles(path) : name.endsWith('.sql') ? [path] : [];
  });
}

describe('dbt SQL files', () => {
  it('a model template is refused: it is a dbt model template, run gds plan or push its compiled SQL', async () => {
    const parsed = await parseArtifact({
      fileName: 'models/staging/stg_orders.sql',
      content: "with source as (select * from {{ ref('raw_orders') }})\nselect * from source\n",
    });
    expect(parsed).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: 'dbt_template',
        message:
          'stg_orders.sql is a dbt model template; run `gds plan --dbt <project>`, or push its compiled SQL',
      }) as unknown,
    });
  });

  it('compiled SQL: a bare with … select is the model named after its file, the star resolved', async () => {
    const parsed = await parseArtifact({
      fileName: 'orders.sql',
      content: `with source as (select id as order_id, total from raw.orders),
final as (select order_id, cast(total as numeric(12,2)) as amount, total > 100 as is_large from source)
select * from final`,
    });
    expect(parsed).toEqual({
      ok: true,
      artifact: {
        kind: 'sql',
        mimeType: 'sql',
        table: 'orders',
        columns: [{ name: 'order_id' }, { name: 'amount', type: 'numeric' }, { name: 'is_large' }],
        fromDbtSql: 'compiled',
      },
    });
  });

  it('a column taken from a CTE keeps the type the CTE casts it to', async () => {
    const parsed = await parseArtifact({
      fileName: 'orders.sql',
      content: `with renamed as (select id::bigint as order_id, cast(total as numeric(12,2)) as amount from raw.orders),
final as (select r.order_id, amount, amount * 2 as doubled from renamed as r)
select * from final`,
    });
    expect(parsed).toMatchObject({
      ok: true,
      artifact: {
        columns: [
          { name: 'order_id', type: 'bigint' },
          { name: 'amount', type: 'numeric' },
          { name: 'doubled' },
        ],
      },
    });
  });

  it('a plain SELECT outside target/compiled is still not a view', async () => {
    const parsed = await parseArtifact({ fileName: 'q.sql', content: 'SELECT id FROM raw.orders' });
    expect(parsed.ok).toBe(false);
    const compiled = await parseArtifact({
      fileName: 'target/compiled/shop/models/q.sql',
      content: 'SELECT id FROM raw.orders',
    });
    expect(compiled).toMatchObject({ ok: true, artifact: { table: 'q', columns: [{ name: 'id' }] } });
  });

  it('run SQL: the __dbt_tmp relation is the model, its schema the source', async () => {
    const table = await parseArtifact({
      fileName: 'customer_order_rank.sql',
      content: `create table "dev"."analytics"."customer_order_rank__dbt_tmp" as (
  with ranked as (select customer_id, rank() over (order by n) as order_rank from x)
  select * from ranked
);`,
    });
    expect(table).toEqual({
      ok: true,
      artifact: {
        kind: 'sql',
        mimeType: 'sql',
        table: 'customer_order_rank',
        source: { schema: 'analytics', table: 'customer_order_rank' },
        columns: [{ name: 'customer_id' }, { name: 'order_rank' }],
        fromDbtSql: 'run',
      },
    });
    const plainTable = await parseArtifact({
      fileName: 'x.sql',
      content: 'create table a.b as select 1 as x',
    });
    expect(plainTable.ok).toBe(false);
  });

  it('a warehouse dialect: Snowflake run SQL of a table, BigQuery compiled SQL', async () => {
    const snowflake = await parseArtifact({
      fileName: 'target/run/shop/models/marts/orders.sql',
      dialect: 'snowflake',
      content: `create or replace transient table analytics.marts.orders
         as
        (with s as (select 1 as id) select id, amount as order_amount from s
        );`,
    });
    expect(snowflake).toMatchObject({
      ok: true,
      artifact: {
        table: 'ORDERS',
        source: { schema: 'MARTS', table: 'ORDERS' },
        columns: [{ name: 'ID' }, { name: 'ORDER_AMOUNT' }],
        fromDbtSql: 'run',
      },
    });
    const bigquery = await parseArtifact({
      fileName: 'stg_orders.sql',
      dialect: 'bigquery',
      content: 'with s as (select * from `proj`.`raw`.`orders`)\nselect id, status from s',
    });
    expect(bigquery).toMatchObject({
      ok: true,
      artifact: {
        table: 'stg_orders',
        columns: [{ name: 'id' }, { name: 'status' }],
        fromDbtSql: 'compiled',
      },
    });
    const view = await parseArtifact({
      fileName: 'x.sql',
      dialect: 'snowflake',
      content: 'create or replace view db.analytics.orders__dbt_tmp as (select id from t)',
    });
    expect(view).toMatchObject({ ok: true, artifact: { table: 'ORDERS', fromDbtSql: 'run' } });
    const plainTable = await parseArtifact({
      fileName: 'x.sql',
      dialect: 'snowflake',
      content: 'create or replace transient table analytics.orders as (select id from t)',
    });
    expect(plainTable.ok).toBe(false);
  });

  it('a star over a warehouse table is refused by name', async () => {
    const parsed = await parseArtifact({
      fileName: 'x.sql',
      content: 'with s as (select * from raw.orders) select * from s',
    });
    expect(parsed).toMatchObject({
      ok: false,
      error: { message: expect.stringContaining('raw.orders') as string },
    });
  });

  it('push sends compiled SQL as the declaration it was read to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gds-dbt-sql-'));
    mkdirSync(`${dir}/target/compiled/shop/models`, { recursive: true });
    const path = `${dir}/target/compiled/shop/models/orders.sql`;
    writeFileSync(path, 'with s as (select 1 as id, 2 as amount) select * from s\n');
    const artifact = await readArtifact(path, { source: 'analytics.orders' });
    expect(artifact).toMatchObject({
      filename: 'orders.yml',
      mimeType: 'yaml',
      table: 'orders',
      source: 'analytics.orders',
    });
    const again = await parseArtifact({
      fileName: artifact.filename,
      content: artifact.content,
      kind: 'yaml',
    });
    expect(again).toMatchObject({
      ok: true,
      artifact: { table: 'orders', columns: [{ name: 'id' }, { name: 'amount' }] },
    });
    rmSync(dir, { recursive: true, force: true });
  });

  describe('every SQL file of a real dbt project', needs(noSharedFixtures), () => {
    const catalog = noSharedFixtures
      ? { nodes: {} }
      : (JSON.parse(readFileSync(`${project}/target/catalog.json`, 'utf8')) as {
          nodes: Record<string, { metadata: { name: string }; columns: Record<string, unknown> }>;
        });
    const columnsOf = (name: string) =>
      Object.keys(Object.values(catalog.nodes).find((n) => n.metadata.name === name)?.columns ?? {});
    const files = noSharedFixtures
      ? []
      : [
          ...sqlFiles(`${project}/models`).map((path) => ({ path, kind: 'template' })),
          ...sqlFiles(`${project}/target/compiled/jaffle_dbt/models`)
            .filter((p) => !p.includes('schema.yml'))
            .map((path) => ({ path, kind: 'compiled' })),
          ...sqlFiles(`${project}/target/run/jaffle_dbt/models`)
            .filter((p) => !p.includes('schema.yml'))
            .map((path) => ({ path, kind: 'run' })),
        ];

    it.each(files.map((f) => ({ ...f, name: relative(project, f.path) })))(
      '$name',
      async ({ path, kind }) => {
        const parsed = await parseArtifact({ fileName: path, content: readFileSync(path, 'utf8') });
        const model =
          path
            .split('/')
            .at(-1)
            ?.replace(/\.sql$/, '') ?? '';
        if (kind === 'template') {
          // A model with no Jinja at all is plain SQL; every other one is refused as a template.
          if (parsed.ok) expect(readFileSync(path, 'utf8')).not.toMatch(/\{\{|\{%/);
          else
            expect(parsed.error.code === 'dbt_template' || !/\{\{|\{%/.test(readFileSync(path, 'utf8'))).toBe(
              true,
            );
          return;
        }
        expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.artifact.table).toBe(model);
        expect(parsed.artifact.fromDbtSql).toBe(kind);
        const expected = columnsOf(model);
        if (expected.length > 0) expect(parsed.artifact.columns.map((c) => c.name)).toEqual(expected);
        if (kind === 'run') expect(parsed.artifact.source).toEqual({ schema: 'main', table: model });
      },
    );
  });
});
