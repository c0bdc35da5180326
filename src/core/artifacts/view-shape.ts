// What both view readers (pg-view.ts, warehouse-view.ts) give sql.ts, and the wording of their refusals.
import type { ArtifactErrorCode } from './types.js';

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

export const SELECT_STAR_MESSAGE =
  'SELECT * does not declare the columns: list each column of the view (e.g. SELECT id, amount FROM …) or declare them after its name (CREATE VIEW v (id, amount) AS …)';
