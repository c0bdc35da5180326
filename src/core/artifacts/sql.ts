import { chooseDialect, dialectHint } from './dialect.js';
import type { Dialect } from './dialect.js';
import { nameProblem } from './identifiers.js';
import { positionAt } from './position.js';
import type { ArtifactColumn, ArtifactErrorCode, ParseResult, SourceRef } from './types.js';

export const VIEW_SHAPE = 'one `CREATE [OR REPLACE] [MATERIALIZED] VIEW <name> AS SELECT …` statement';

/** A view as a reader found it: names already folded the way its dialect folds them; offsets are characters. */
export interface ViewShape {
  /** The view's dotted name, catalog first; the last two parts are schema and table. */
  name: string[];
  nameAt: number;
  columns: Array<{ name: string; at: number; type?: string }>;
  /** dbt's compiled SQL of a model (a bare query named after its file), or its run SQL (`<name>__dbt_tmp`). */
  dbt?: 'compiled' | 'run';
}

export type ViewReading =
  { ok: true; view: ViewShape } | { ok: false; code: ArtifactErrorCode; message: string; at?: number };

/** The words that open a statement, as written (`CREATE TRANSIENT TABLE`, `GRANT OWNERSHIP ON VIEW`). */
export function statementWords(text: string, at: number): string {
  const words: string[] = [];
  const word = /\s*([A-Za-z_]+)/y;
  word.lastIndex = at;
  for (let match = word.exec(text); match && words.length < 4; match = word.exec(text)) {
    const value = (match[1] ?? '').toUpperCase();
    if (words.length > 0 && !STATEMENT_WORDS.has(value)) break;
    words.push(value);
  }
  return words.length > 0 ? words.join(' ') : 'a statement';
}

const STATEMENT_WORDS = new Set(
  (
    'OR REPLACE ALTER DROP GRANT REVOKE SET INSERT INTO UPDATE DELETE FROM TABLE VIEW MATERIALIZED TEMP ' +
    'TEMPORARY TRANSIENT SECURE FUNCTION PROCEDURE SCHEMA INDEX IF EXISTS NOT OWNERSHIP SELECT USAGE ALL ON ' +
    'COMMENT RECURSIVE UNLOGGED LOCAL GLOBAL VOLATILE SEQUENCE TRIGGER TYPE EXTENSION DATABASE ROLE USER TASK ' +
    'STREAM STAGE PIPE EXTERNAL DYNAMIC ICEBERG HYBRID EVENT STREAMING LIVE SNAPSHOT CLONE PRIVILEGES'
  ).split(' '),
);

/** What a statement that is not a view is: a table is named as one, anything else by its words. */
export function notAView(words: string): string {
  if (/\bTABLE\b/.test(words) && words.startsWith('CREATE')) return `${words} is a table, not a view`;
  if (/\b(?:PROCEDURE|FUNCTION)\b/.test(words) && words.startsWith('CREATE'))
    return `${words} is a ${/PROCEDURE/.test(words) ? 'procedure' : 'function'}, not a view`;
  return `${words} is not a view definition`;
}

/**
 * Reads a SQL governance artifact: exactly one view definition. The table is the view's name; a schema-qualified
 * view name (`analytics.orders`) declares the source `analytics.orders` (a catalog prefix `db.` is dropped).
 * PostgreSQL views are read by PostgreSQL's own grammar; the warehouses' by a reader of the view's header and
 * its top-level SELECT list, which names a column only where the warehouse names it the same way.
 */
export async function readSql(content: string, asked?: Dialect, fileName = ''): Promise<ParseResult> {
  const choice = chooseDialect(content, asked);
  if (!choice.ok) return { ok: false, error: { code: 'invalid_dialect', message: choice.message } };
  const { dialect } = choice;
  const reading =
    dialect === 'postgres'
      ? await (await import('./pg-view.js')).readPostgresView(content, fileName)
      : (await import('./warehouse-view.js')).readWarehouseView(content, dialect, fileName);
  const fail = (code: ArtifactErrorCode, message: string, at?: number): ParseResult => ({
    ok: false,
    error: {
      code,
      message: `${message} ${dialectHint(dialect)}`,
      ...(at === undefined ? {} : positionAt(content, at)),
    },
  });
  if (!reading.ok) return fail(reading.code, reading.message, reading.at);
  const { view } = reading;

  const table = view.name.at(-1) ?? '';
  const problem = nameProblem(table);
  if (problem) return fail('invalid_table', `the view name ${problem}`, view.nameAt);
  const source: SourceRef | undefined =
    view.name.length >= 2 ? { schema: view.name.at(-2) ?? '', table } : undefined;
  if (source && nameProblem(source.schema))
    return fail('invalid_source', `the view's schema ${nameProblem(source.schema)}`, view.nameAt);

  if (view.columns.length === 0) return fail('no_columns', 'the view selects no columns');
  const columns: ArtifactColumn[] = [];
  const seen = new Set<string>();
  for (const column of view.columns) {
    const columnProblem = nameProblem(column.name);
    if (columnProblem)
      return fail('invalid_column', `column name ${JSON.stringify(column.name)} ${columnProblem}`, column.at);
    if (seen.has(column.name))
      return fail('duplicate_column', `duplicate column ${JSON.stringify(column.name)}`, column.at);
    seen.add(column.name);
    columns.push(column.type ? { name: column.name, type: column.type } : { name: column.name });
  }
  return {
    ok: true,
    artifact: {
      kind: 'sql',
      mimeType: 'sql',
      table,
      ...(source ? { source } : {}),
      columns,
      ...(view.dbt ? { fromDbtSql: view.dbt } : {}),
    },
  };
}

export const SELECT_STAR_MESSAGE =
  'SELECT * does not declare the columns: list each column of the view (e.g. SELECT id, amount FROM …) or declare them after its name (CREATE VIEW v (id, amount) AS …)';
