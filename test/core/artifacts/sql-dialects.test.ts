import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import type { ArtifactError, Dialect, GovernanceArtifact } from '../../../src/core/artifacts/index.js';

async function read(content: string, dialect?: Dialect) {
  return parseArtifact({ fileName: 'view.sql', content, ...(dialect ? { dialect } : {}) });
}

async function columnsOf(content: string, dialect?: Dialect): Promise<string[]> {
  return (await artifactOf(content, dialect)).columns.map((c) => c.name);
}

async function artifactOf(content: string, dialect?: Dialect): Promise<GovernanceArtifact> {
  const result = await read(content, dialect);
  if (!result.ok) throw new Error(`expected an artifact, got ${JSON.stringify(result.error)}`);
  return result.artifact;
}

async function errorOf(content: string, dialect?: Dialect): Promise<ArtifactError> {
  const result = await read(content, dialect);
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.artifact)}`);
  return result.error;
}

describe('PostgreSQL views the old parser refused, read by PostgreSQL’s grammar', () => {
  it.each([
    [
      'a reserved word as an alias',
      'CREATE VIEW v AS SELECT a AS constraint, b AS table FROM t',
      ['constraint', 'table'],
    ],
    [
      'WITHIN GROUP',
      'CREATE VIEW v AS SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS median FROM t',
      ['median'],
    ],
    [
      'an array subscript (named after the array, as PostgreSQL does)',
      'CREATE VIEW v AS SELECT arr[1], tags[2] AS second FROM t',
      ['arr', 'second'],
    ],
    ["LIKE 'a' || x", "CREATE VIEW v AS SELECT id FROM t WHERE name LIKE 'a' || suffix", ['id']],
    [
      'PARTITION BY f(x), y and a ROWS BETWEEN frame',
      'CREATE VIEW v AS SELECT sum(x) OVER (PARTITION BY lower(a), b ORDER BY d ROWS BETWEEN 6 PRECEDING AND 1 PRECEDING) AS s FROM t',
      ['s'],
    ],
    [
      'casts to types the grammar does not know',
      'CREATE VIEW v AS SELECT e::citext AS email, h::hstore AS attrs, emb::vector AS embedding, ts::timestamp_ltz AS at FROM t',
      ['email', 'attrs', 'embedding', 'at'],
    ],
    ['CREATE MATERIALIZED VIEW', 'CREATE MATERIALIZED VIEW mv AS SELECT id FROM t', ['id']],
    ['view options', 'CREATE VIEW v WITH (security_invoker = on) AS SELECT id FROM t', ['id']],
    [
      'WITH LOCAL CHECK OPTION',
      'CREATE VIEW v AS SELECT id FROM t WHERE id > 0 WITH LOCAL CHECK OPTION',
      ['id'],
    ],
    ['a declared column list over SELECT *', 'CREATE VIEW v (a, b) AS SELECT * FROM t', ['a', 'b']],
    [
      'function calls and keywords PostgreSQL names itself',
      'CREATE VIEW v AS SELECT count(*), coalesce(a, b), CASE WHEN x THEN 1 END, current_date, EXISTS (SELECT 1) FROM t',
      ['count', 'coalesce', 'case', 'current_date', 'exists'],
    ],
  ])('%s', async (_what, sql, columns) => {
    expect(await columnsOf(sql)).toEqual(columns);
  });

  it('types are spelled as written, not as PostgreSQL stores them', async () => {
    const artifact = await artifactOf(
      'CREATE VIEW v AS SELECT a::int AS a, b::varchar(3)[] AS b, c::timestamptz AS c FROM t',
    );
    expect(artifact.columns).toEqual([
      { name: 'a', type: 'integer' },
      { name: 'b', type: 'varchar[]' },
      { name: 'c', type: 'timestamptz' },
    ]);
  });

  it('a materialized view keeps its schema as the source', async () => {
    expect((await artifactOf('CREATE MATERIALIZED VIEW mart.daily (day) AS SELECT d FROM t')).source).toEqual(
      {
        schema: 'mart',
        table: 'daily',
      },
    );
  });

  it('SELECT * without a column list is refused, naming SELECT * and pointing at the star', async () => {
    expect(await errorOf('CREATE VIEW v AS\n  SELECT t.*\n  FROM t')).toMatchObject({
      code: 'select_star',
      message: expect.stringContaining('SELECT * does not declare the columns') as string,
      line: 2,
      column: 12,
    });
  });

  it('a refusal names the whole token, the dialect assumed and how to choose another', async () => {
    const error = await errorOf("CREATE VIEW v\nCOMMENT = 'x' AS SELECT a FROM t");
    expect(error).toMatchObject({ code: 'syntax_error', line: 2, column: 1 });
    expect(error.message).toContain('syntax error at or near "COMMENT"');
    expect(error.message).toContain('read as PostgreSQL');
    expect(error.message).toContain('--dialect');
  });

  it('a table is named as a table, a second statement by its words and line', async () => {
    expect(await errorOf('CREATE UNLOGGED TABLE t (id int)')).toMatchObject({
      code: 'not_a_view',
      message: expect.stringContaining('CREATE UNLOGGED TABLE is a table, not a view') as string,
    });
    expect(await errorOf('CREATE VIEW v AS SELECT a FROM t;\n\nGRANT SELECT ON v TO reader;')).toMatchObject({
      code: 'multiple_statements',
      message: expect.stringContaining('a second statement, GRANT SELECT ON, follows the view') as string,
      line: 3,
      column: 1,
    });
  });

  it('backtick identifiers are not PostgreSQL: refused, never reinterpreted', async () => {
    expect(await errorOf('CREATE VIEW v AS SELECT `a` FROM t')).toMatchObject({ code: 'syntax_error' });
  });

  it('positions count characters, also after multi-byte text', async () => {
    expect(await errorOf("CREATE VIEW v AS SELECT 'éé' AS a,\n  b * 2\nFROM t")).toMatchObject({
      code: 'unnamed_column',
      line: 2,
      column: 3,
    });
  });
});

describe('warehouse views: the dialect chosen by --dialect or a "-- dialect:" line', () => {
  it('Snowflake: COMMENT $$…$$ columns, COPY GRANTS, SECURE, a wrapped body; unquoted names upper-cased', async () => {
    const artifact = await artifactOf(
      [
        'create or replace secure view DB.ANALYTICS.orders',
        '(',
        '    "ORDER_ID" COMMENT $$The id; with a ) and a , inside$$,',
        '    amount COMMENT $$Amount$$',
        ')',
        "  comment = 'orders' with tag (pii = 'none') copy grants",
        '  as (',
        '    select id, amount from raw.orders qualify row_number() over (partition by id order by ts) = 1',
        '  );',
      ].join('\n'),
      'snowflake',
    );
    expect(artifact.source).toEqual({ schema: 'ANALYTICS', table: 'ORDERS' });
    expect(artifact.columns.map((c) => c.name)).toEqual(['ORDER_ID', 'AMOUNT']);
  });

  it('Snowflake: QUALIFY ends the list, IF NOT EXISTS is read, implicit aliases are names', async () => {
    expect(
      await columnsOf(
        '-- dialect: snowflake\nCREATE VIEW IF NOT EXISTS s.v AS SELECT o.id, IFF(a, 1, 0) flag, \'x\' "Label" FROM t o QUALIFY x = 1',
      ),
    ).toEqual(['ID', 'FLAG', 'Label']);
  });

  it('BigQuery: backtick paths, STRUCT(… AS x), EXTRACT(DAYOFWEEK FROM …), struct fields keep their case', async () => {
    const artifact = await artifactOf(
      'CREATE OR REPLACE VIEW `proj.mart.events` OPTIONS(description="x") AS\nSELECT payload.userId, STRUCT(a AS x, b AS y) AS pair, EXTRACT(DAYOFWEEK FROM ts) AS dow\nFROM `proj.raw.events`',
      'bigquery',
    );
    expect(artifact.source).toEqual({ schema: 'mart', table: 'events' });
    expect(artifact.columns.map((c) => c.name)).toEqual(['userId', 'pair', 'dow']);
  });

  it('Redshift: every name folds to lower case, x::varchar keeps the column name', async () => {
    expect(
      await columnsOf(
        'CREATE VIEW admin.v AS SELECT a.UserName::varchar(20), "MixedCase" FROM t WITH NO SCHEMA BINDING',
        'redshift',
      ),
    ).toEqual(['username', 'mixedcase']);
  });

  it('Databricks: backticks and names as written', async () => {
    expect(
      await columnsOf(
        'CREATE VIEW main.sales.`Orders` TBLPROPERTIES (a = 1) AS SELECT `Order Id`, total AS Total FROM t',
        'databricks',
      ),
    ).toEqual(['Order Id', 'Total']);
  });

  it('an expression without a name is refused by its text, never guessed', async () => {
    expect(
      await errorOf('CREATE VIEW s.v AS SELECT\n  a,\n  sum(b)\nFROM t GROUP BY a', 'snowflake'),
    ).toMatchObject({
      code: 'unnamed_column',
      message: expect.stringContaining('column 2 of the SELECT list, `sum(b)`, has no name') as string,
      line: 3,
      column: 3,
    });
  });

  it.each([
    ['an INTERVAL whose unit looks like an alias', 'SELECT a, d + INTERVAL 1 DAY FROM t', 'bigquery'],
    ['a keyword the warehouse names by its own rule', 'SELECT a, CURRENT_DATE FROM t', 'bigquery'],
    ['a cast Snowflake names by its text', 'SELECT a, b::varchar FROM t', 'snowflake'],
  ] as const)('%s is refused, not guessed', async (_what, select, dialect) => {
    expect(await errorOf(`CREATE VIEW s.v AS ${select}`, dialect)).toMatchObject({ code: 'unnamed_column' });
  });

  it('a table is refused as a table, with its line', async () => {
    const error = await errorOf(
      '-- staging\n\n\n\nCREATE TRANSIENT TABLE s.t AS SELECT a FROM u',
      'snowflake',
    );
    expect(error).toMatchObject({ code: 'not_a_view', line: 5, column: 1 });
    expect(error.message).toContain('CREATE TRANSIENT TABLE is a table, not a view');
    expect(error.message).toContain('read as Snowflake');
  });

  it('a second statement is named with its line', async () => {
    expect(
      await errorOf(
        'CREATE VIEW s.v AS SELECT a FROM t;\nGRANT OWNERSHIP ON VIEW s.v TO ROLE r;',
        'snowflake',
      ),
    ).toMatchObject({
      code: 'multiple_statements',
      message: expect.stringContaining('GRANT OWNERSHIP ON VIEW') as string,
      line: 2,
      column: 1,
    });
  });

  it('a --dialect that contradicts the file is refused', async () => {
    expect(
      await errorOf('-- dialect: bigquery\nCREATE VIEW v AS SELECT a FROM t', 'snowflake'),
    ).toMatchObject({
      code: 'invalid_dialect',
    });
  });

  it('a file that names its dialect is read in it without any flag', async () => {
    expect((await artifactOf('-- dialect: snowflake\ncreate view s.v as select a from t')).table).toBe('V');
  });
});
