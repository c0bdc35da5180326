import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import type { ArtifactError, GovernanceArtifact } from '../../../src/core/artifacts/index.js';
import { readSharedFixture } from '../../helpers/fixtures.js';
import { noSharedFixtures } from '../../helpers/skip.js';

async function artifactOf(content: string, fileName = 'orders.sql'): Promise<GovernanceArtifact> {
  const result = await parseArtifact({ fileName, content });
  if (!result.ok) throw new Error(`expected an artifact, got ${JSON.stringify(result.error)}`);
  return result.artifact;
}

async function errorOf(content: string): Promise<ArtifactError> {
  const result = await parseArtifact({ fileName: 'orders.sql', content });
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.artifact)}`);
  return result.error;
}

describe('SQL artifacts: what a view declares', () => {
  it('CREATE OR REPLACE VIEW: the view name is the table, aliases and bare references are the columns', async () => {
    expect(
      await artifactOf(
        'CREATE OR REPLACE VIEW orders AS SELECT o.id AS order_id, o.amount, customer_id FROM raw.orders o',
      ),
    ).toEqual({
      kind: 'sql',
      mimeType: 'sql',
      table: 'orders',
      columns: [{ name: 'order_id' }, { name: 'amount' }, { name: 'customer_id' }],
    });
  });

  it('plain CREATE VIEW, lower case keywords, a trailing semicolon and an upper-case extension', async () => {
    const artifact = await artifactOf('create view orders as select id from raw.orders;\n', 'ORDERS.SQL');
    expect(artifact.table).toBe('orders');
    expect(artifact.columns).toEqual([{ name: 'id' }]);
  });

  it('a schema-qualified view name declares the source schema.table', async () => {
    const artifact = await artifactOf('CREATE VIEW analytics.orders AS SELECT id FROM raw.orders');
    expect(artifact.table).toBe('orders');
    expect(artifact.source).toEqual({ schema: 'analytics', table: 'orders' });
  });

  it('a view name without schema declares no source (the FROM tables are not the source)', async () => {
    expect((await artifactOf('CREATE VIEW orders AS SELECT id FROM raw.orders')).source).toBeUndefined();
  });

  it('a catalog-qualified name db.schema.view drops the catalog', async () => {
    const artifact = await artifactOf('CREATE VIEW warehouse.analytics.orders AS SELECT id FROM t');
    expect(artifact.source).toEqual({ schema: 'analytics', table: 'orders' });
  });

  it('quoted identifiers keep their case and spaces; bare ones fold to lower case as in PostgreSQL', async () => {
    const artifact = await artifactOf(
      'CREATE VIEW "Sales"."Order Lines" AS SELECT o."Order Id", o.Amount, Total AS GrandTotal, x AS "MixedCase" FROM t o',
    );
    expect(artifact.table).toBe('Order Lines');
    expect(artifact.source).toEqual({ schema: 'Sales', table: 'Order Lines' });
    expect(artifact.columns.map((c) => c.name)).toEqual(['Order Id', 'amount', 'grandtotal', 'MixedCase']);
  });

  it('comments of both kinds are ignored, including ones that hold SQL', async () => {
    const artifact = await artifactOf(
      [
        '-- orders, one row per order; SELECT * FROM nowhere',
        '/* owner: data team',
        '   CREATE VIEW other AS SELECT 1 */',
        'CREATE VIEW orders AS',
        'SELECT id, -- the key',
        "  '--not a comment' AS label /* inline */",
        'FROM raw.orders',
      ].join('\n'),
    );
    expect(artifact.table).toBe('orders');
    expect(artifact.columns).toEqual([{ name: 'id' }, { name: 'label' }]);
  });

  it('a CTE: the columns are those of the outer SELECT', async () => {
    const artifact = await artifactOf(
      'CREATE VIEW daily AS WITH paid AS (SELECT id, amount, paid_at FROM raw.orders) SELECT paid.paid_at AS day, sum(amount) AS revenue FROM paid GROUP BY 1',
    );
    expect(artifact.columns).toEqual([{ name: 'day' }, { name: 'revenue' }]);
  });

  it('a UNION ALL body takes its columns from the first SELECT', async () => {
    const artifact = await artifactOf(
      'CREATE VIEW analytics.events AS\nSELECT id, created_at AS changed_at FROM a\nUNION ALL\nSELECT id, updated_at FROM b',
    );
    expect(artifact.source).toEqual({ schema: 'analytics', table: 'events' });
    expect(artifact.columns).toEqual([{ name: 'id' }, { name: 'changed_at' }]);
  });

  it('an explicit column list on the view names the columns', async () => {
    const artifact = await artifactOf('CREATE VIEW v (order_id, "Amount") AS SELECT id, amount FROM t');
    expect(artifact.columns).toEqual([{ name: 'order_id' }, { name: 'Amount' }]);
  });

  it('a cast gives the column its type; a cast column keeps the column name', async () => {
    const artifact = await artifactOf(
      'CREATE VIEW v AS SELECT done::boolean, CAST(due AS TIMESTAMP) AS due_at FROM t',
    );
    expect(artifact.columns).toEqual([
      { name: 'done', type: 'boolean' },
      { name: 'due_at', type: 'timestamp' },
    ]);
  });

  it('the compiled SQL of real dbt models, wrapped in a view definition', async ({ skip }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const manifest = JSON.parse(readSharedFixture('dbt/postgres-v12-manifest.json')) as {
      nodes: Record<string, { name: string; schema: string; compiled_code?: string }>;
    };
    const model = manifest.nodes['model.enpal_assessment_project.stg_pipedrive__activity'];
    if (!model?.compiled_code) throw new Error('fixture model missing');
    const artifact = await artifactOf(
      `CREATE OR REPLACE VIEW "${model.schema}"."${model.name}" AS\n${model.compiled_code}`,
    );
    expect(artifact).toEqual({
      kind: 'sql',
      mimeType: 'sql',
      table: 'stg_pipedrive__activity',
      source: { schema: 'public_pipedrive_analytics', table: 'stg_pipedrive__activity' },
      columns: [
        { name: 'activity_id' },
        { name: 'type' },
        { name: 'deal_id' },
        { name: 'done', type: 'boolean' },
        { name: 'activity_date', type: 'timestamp' },
      ],
    });
  });
});

describe('SQL artifacts: what is refused, and where', () => {
  it('SELECT * says to list the columns, pointing at the star', async () => {
    expect(await errorOf('CREATE VIEW orders AS\nSELECT *\nFROM raw.orders')).toEqual({
      code: 'select_star',
      message: expect.stringContaining('list each column') as string,
      line: 2,
      column: 8,
    });
  });

  it('a qualified star (o.*) is refused too', async () => {
    expect(await errorOf('CREATE VIEW orders AS SELECT id, o.* FROM raw.orders o')).toMatchObject({
      code: 'select_star',
      line: 1,
      column: 36,
    });
  });

  it('count(*) with an alias is not a SELECT *', async () => {
    expect((await artifactOf('CREATE VIEW v AS SELECT count(*) AS n FROM t')).columns).toEqual([
      { name: 'n' },
    ]);
  });

  it('a syntax error gives the line and column of the unexpected token', async () => {
    expect(
      await errorOf('CREATE VIEW orders AS\nSELECT id,\n  amount\nFROM raw.orders\nWHERE amount > > 1'),
    ).toEqual({
      code: 'syntax_error',
      message: expect.stringMatching(
        /^PostgreSQL refuses the SQL: syntax error at or near ">" \(read as PostgreSQL; for another warehouse pass --dialect redshift\|snowflake\|bigquery\|databricks/,
      ) as string,
      line: 5,
      column: 16,
    });
  });

  it('a syntax error after leading blank lines still points at the right line', async () => {
    expect(await errorOf('\n\n  CREATE VIEW v AS SELEC a FROM t')).toMatchObject({
      code: 'syntax_error',
      line: 3,
      column: 20,
    });
  });

  it('a truncated view says the input ended', async () => {
    expect(await errorOf('CREATE VIEW v AS SELECT a FROM t WHERE (a > 1')).toMatchObject({
      code: 'syntax_error',
      message: expect.stringContaining('syntax error at end of input') as string,
      line: 1,
      column: 46,
    });
  });

  it('a syntax error in the second branch of a UNION points into that branch', async () => {
    expect(await errorOf('CREATE VIEW v AS SELECT a FROM t\nUNION\nSELEC b FROM u')).toMatchObject({
      code: 'syntax_error',
      line: 3,
      column: 1,
    });
  });

  it('a stray double quote: PostgreSQL reads an identifier from it, the error quotes one line of it', async () => {
    expect(await errorOf('CREATE" VIEW v AS\nSELECT a, b AS "B" FROM t')).toEqual({
      code: 'syntax_error',
      message: expect.stringContaining('syntax error at or near "" VIEW v AS…"') as string,
      line: 1,
      column: 7,
    });
  });

  it.each([
    ['SELECT id FROM raw.orders', 'SELECT is not a view definition'],
    ['CREATE TABLE orders (id int)', 'CREATE TABLE is a table, not a view'],
    ['DROP VIEW orders', 'DROP VIEW is not a view definition'],
  ])('%s is not a view definition: the error names what was found', async (sql, found) => {
    expect(await errorOf(`\n${sql}`)).toEqual({
      code: 'not_a_view',
      message: expect.stringContaining(
        `${found}: the file must hold one \`CREATE [OR REPLACE] [MATERIALIZED] VIEW <name> AS SELECT …\` statement (read as PostgreSQL;`,
      ) as string,
      line: 2,
      column: 1,
    });
  });

  it('a temporary view is refused', async () => {
    expect(await errorOf('CREATE TEMP VIEW v AS SELECT a FROM t')).toMatchObject({
      code: 'not_a_view',
      line: 1,
      column: 1,
    });
  });

  it('two statements are refused, pointing at the second', async () => {
    expect(await errorOf('CREATE VIEW a AS SELECT x FROM t;\n\nCREATE VIEW b AS SELECT y FROM t;')).toEqual({
      code: 'multiple_statements',
      message: expect.stringContaining('found 2 statements') as string,
      line: 3,
      column: 1,
    });
  });

  it('a file of comments only holds no statement', async () => {
    expect(await errorOf('-- nothing here\n/* still nothing */\n')).toMatchObject({ code: 'empty_file' });
  });

  it('an expression without an alias is refused at the expression', async () => {
    expect(await errorOf('CREATE VIEW v AS\nSELECT id,\n  amount * 2\nFROM t')).toEqual({
      code: 'unnamed_column',
      message: expect.stringContaining(
        'column 2 of the SELECT list is an expression PostgreSQL names ?column?: give it a name with AS <name>',
      ) as string,
      line: 3,
      column: 3,
    });
  });

  it('a duplicate column name is refused at its second use', async () => {
    expect(await errorOf('CREATE VIEW v AS\nSELECT a.id,\n  b.id\nFROM a JOIN b ON a.id = b.id')).toEqual({
      code: 'duplicate_column',
      message: expect.stringContaining('duplicate column "id"') as string,
      line: 3,
      column: 5,
    });
  });

  it('a column name longer than PostgreSQL keeps (63 bytes) is refused', async () => {
    const long = 'x'.repeat(64);
    expect(await errorOf(`CREATE VIEW v AS SELECT a AS ${long} FROM t`)).toMatchObject({
      code: 'invalid_column',
      message: expect.stringContaining('longer than 63 bytes') as string,
      line: 1,
      column: 30,
    });
  });
});
