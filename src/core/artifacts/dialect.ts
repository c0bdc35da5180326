/** The SQL dialects a view definition can be written in: PostgreSQL's own grammar, or a warehouse's. */
export const DIALECTS = ['postgres', 'redshift', 'snowflake', 'bigquery', 'databricks'] as const;
export type Dialect = (typeof DIALECTS)[number];

export const DIALECT_NAMES: Readonly<Record<Dialect, string>> = {
  postgres: 'PostgreSQL',
  redshift: 'Redshift',
  snowflake: 'Snowflake',
  bigquery: 'BigQuery',
  databricks: 'Databricks',
};

/** `-- dialect: snowflake` on a line of its own, anywhere in the file. */
const DIALECT_COMMENT = /^[ \t]*--[ \t]*dialect[ \t]*[:=][ \t]*([A-Za-z]+)[ \t]*\r?$/im;

export function isDialect(value: string): value is Dialect {
  return (DIALECTS as readonly string[]).includes(value);
}

export type DialectChoice = { ok: true; dialect: Dialect } | { ok: false; message: string };

/** The dialect a SQL file is read in: the one asked for (`--dialect`), else its `-- dialect:` line, else PostgreSQL. */
export function chooseDialect(content: string, asked?: Dialect): DialectChoice {
  const declared = DIALECT_COMMENT.exec(content)?.[1]?.toLowerCase();
  if (declared !== undefined && !isDialect(declared)) {
    return {
      ok: false,
      message: `the file's "-- dialect: ${declared}" names no dialect gds reads: use one of ${DIALECTS.join(', ')}`,
    };
  }
  if (asked !== undefined && declared !== undefined && asked !== declared) {
    return {
      ok: false,
      message: `--dialect ${asked} contradicts the file's "-- dialect: ${declared}" line: keep one`,
    };
  }
  return { ok: true, dialect: asked ?? declared ?? 'postgres' };
}

/** True when the file names its dialect itself (then what is sent is read the same way by the service). */
export function declaresDialect(content: string): boolean {
  return DIALECT_COMMENT.test(content);
}

/** What every SQL refusal ends with: the dialect assumed, and how to choose another. */
export function dialectHint(dialect: Dialect): string {
  const others = DIALECTS.filter((d) => d !== dialect).join('|');
  return `(read as ${DIALECT_NAMES[dialect]}; for another warehouse pass --dialect ${others} or put "-- dialect: <name>" on a line of the file)`;
}
