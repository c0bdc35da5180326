// Names as the warehouse shows them, and as SQL that PostgreSQL (where Gate 1 runs) reads back to them.
//
// Decision: a column is named as the warehouse's catalog names it. Without a catalog, a name written in
// the project is folded the way the adapter folds an unquoted name: Snowflake upper-cases it (ORDER_ID),
// PostgreSQL and Redshift lower-case it, the others (DuckDB, BigQuery, Databricks, Trino, SQL Server, …)
// keep it as written. A column declared with `quote: true` (or a seed's, quoted by dbt) keeps its name
// exactly, except on Redshift, which lower-cases quoted names too (enable_case_sensitive_identifier is
// false by default). A relation's schema and table follow dbt's `quoting` config the same way
// (relationQuoting).
import type { QuotePolicy } from './types.js';

/** The adapters whose relations dbt leaves unquoted unless `quoting:` says otherwise (the others quote them). */
const UNQUOTED_RELATION_ADAPTERS: ReadonlySet<string> = new Set(['snowflake', 'spark', 'athena']);

/**
 * Whether dbt quotes a relation's schema and identifier: the adapter's default (Snowflake's, Spark's and
 * Athena's false, every other's true), then the project's `quoting:` (dbt_project.yml), then the node's own
 * (a model's `config.quoting`, a source table's `quoting`), each part that a later one sets winning.
 */
export function relationQuoting(
  adapter: string | undefined,
  ...policies: Array<QuotePolicy | undefined>
): { schema: boolean; identifier: boolean } {
  const quoted = !UNQUOTED_RELATION_ADAPTERS.has(adapter ?? '');
  const merged = Object.assign({ schema: quoted, identifier: quoted }, ...policies.filter(Boolean)) as {
    schema: boolean;
    identifier: boolean;
  };
  return { schema: merged.schema, identifier: merged.identifier };
}

/** The name an unquoted identifier gets in the adapter's warehouse. */
export function warehouseName(name: string, adapter: string | undefined, quoted = false): string {
  if (adapter === 'redshift') return name.toLowerCase();
  if (quoted) return name;
  if (adapter === 'snowflake') return name.toUpperCase();
  if (adapter === 'postgres') return name.toLowerCase();
  return name;
}

/** A name PostgreSQL parsed (unquoted names folded to lower case) as the adapter's warehouse would show it. */
export function fromPostgresName(name: string, adapter: string | undefined): string {
  return adapter === 'snowflake' && name === name.toLowerCase() ? name.toUpperCase() : name;
}

const RESERVED = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization binary both case cast check collate ' +
    'collation column concurrently constraint create cross current_catalog current_date current_role ' +
    'current_schema current_time current_timestamp current_user default deferrable desc distinct do else end ' +
    'except false fetch for foreign freeze from full grant group having ilike in initially inner intersect into ' +
    'is isnull join lateral leading left like limit localtime localtimestamp natural not notnull null offset on ' +
    'only or order outer overlaps placing primary references returning right select session_user similar some ' +
    'symmetric system_user table tablesample then to trailing true union unique user using variadic verbose ' +
    'when where window with'
  ).split(' '),
);

/** A column as SQL: bare where PostgreSQL reads it back unchanged, else double-quoted. */
export function sqlIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !RESERVED.has(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** A column name as a test writes it: the name, and whether it is quoted (`"Email"`, `` `Email` ``, `[Email]`). */
function unquoted(written: string): { name: string; quoted: boolean } {
  const trimmed = written.trim();
  const quoted = /^(["`[])(.*)["`\]]$/s.exec(trimmed);
  return quoted ? { name: quoted[2] ?? '', quoted: true } : { name: trimmed, quoted: false };
}

/** A column name as a test or constraint writes it (`Email`, `"Email"`), as the adapter's warehouse names it. */
export function writtenName(written: string, adapter: string | undefined): string {
  const { name, quoted } = unquoted(written);
  return warehouseName(name, adapter, quoted);
}

/** The declared column a test names (`column_name` may be quoted, or differ in case), or undefined. */
export function findColumn(columns: readonly string[], written: string): string | undefined {
  const { name } = unquoted(written);
  if (columns.includes(name)) return name;
  const folded = name.toLowerCase();
  const matches = columns.filter((c) => c.toLowerCase() === folded);
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * How each adapter's warehouse resolves a column name in dbt's SQL: `lower` folds an unquoted name to lower
 * case and matches it exactly (PostgreSQL; Redshift folds a quoted one too), `upper` to upper case (Snowflake,
 * Oracle, Exasol), `exact` folds nothing and matches exactly (ClickHouse; Fabric, whose warehouses compare
 * names under its default collation, case-sensitive). Every other adapter matches column names without case
 * (BigQuery, SQL Server and Synapse under their default collations, Databricks and Spark, DuckDB, Trino, …).
 */
const COLUMN_CASE: Readonly<Record<string, 'lower' | 'upper' | 'exact'>> = {
  postgres: 'lower',
  redshift: 'lower',
  materialize: 'lower',
  greenplum: 'lower',
  risingwave: 'lower',
  snowflake: 'upper',
  oracle: 'upper',
  exasol: 'upper',
  clickhouse: 'exact',
  fabric: 'exact',
};

/**
 * The column of `columns` (the table's real names, as a catalog lists them) that dbt's SQL reaches with the
 * name a test writes, as the adapter resolves it; `{ other }` when the table holds that name only in another
 * case (dbt's query then fails on it). Undefined when no column has the name in any case.
 */
export function reachedColumn(
  columns: readonly string[],
  written: string,
  adapter: string | undefined,
): { name: string } | { other: string; reads: string } | undefined {
  const rule = COLUMN_CASE[adapter ?? ''];
  const found = findColumn(columns, written);
  if (rule === undefined) return found === undefined ? undefined : { name: found };
  const { name, quoted } = unquoted(written);
  const reads =
    rule === 'lower' && (!quoted || adapter === 'redshift')
      ? name.toLowerCase()
      : rule === 'upper' && !quoted
        ? name.toUpperCase()
        : name;
  if (columns.includes(reads)) return { name: reads };
  const other = columns.find((c) => c.toLowerCase() === reads.toLowerCase());
  return other === undefined ? undefined : { other, reads };
}

/**
 * A dbt SQL expression with each bare word that names a column (in any case) written as PostgreSQL must
 * read it to reach that column: `amount > 0` over a Snowflake column AMOUNT becomes `"AMOUNT" > 0`.
 * Strings, quoted names, function names and type names are left alone.
 */
export function withColumnNames(sql: string, columns: readonly string[]): string {
  const byLower = new Map<string, string | null>();
  for (const column of columns) {
    const key = column.toLowerCase();
    byLower.set(key, byLower.has(key) ? null : column);
  }
  let out = '';
  let i = 0;
  let previous = '';
  while (i < sql.length) {
    const c = sql[i] ?? '';
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      out += sql.slice(i, j + 1);
      previous = c;
      i = j + 1;
      continue;
    }
    const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(sql.slice(i))?.[0];
    if (word) {
      const after = /^\s*(.)/.exec(sql.slice(i + word.length))?.[1];
      const column = byLower.get(word.toLowerCase());
      const rewrite =
        column !== undefined && column !== null && after !== '(' && previous !== '.' && previous !== '::';
      out += rewrite && column !== word.toLowerCase() ? sqlIdentifier(column) : word;
      previous = word;
      i += word.length;
      continue;
    }
    if (sql.startsWith('::', i)) {
      out += '::';
      previous = '::';
      i += 2;
      continue;
    }
    out += c;
    if (!/\s/.test(c)) previous = c;
    i++;
  }
  return out;
}
