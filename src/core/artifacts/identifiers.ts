import type { SourceRef } from './types.js';

/** PostgreSQL truncates identifiers beyond 63 bytes; a certified view carries these names, so longer ones are refused. */
export const MAX_IDENTIFIER_BYTES = 63;

const BARE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;

/** Why `name` cannot name a table or a column, or undefined when it can. */
export function nameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'is empty';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (Buffer.byteLength(name, 'utf8') > MAX_IDENTIFIER_BYTES)
    return `is longer than ${MAX_IDENTIFIER_BYTES} bytes`;
  return undefined;
}

/** True when PostgreSQL would accept `name` unquoted (it then folds it to lower case). */
export function isBareIdentifier(name: string): boolean {
  return BARE_IDENTIFIER.test(name);
}

/**
 * Splits a dotted SQL name into its parts with PostgreSQL's rules: a bare part is folded to lower case,
 * a double-quoted part (`"My Table"`, `""` escapes a quote) is kept exactly. With `backticks`, a part
 * quoted in backticks (BigQuery, Databricks, Spark: `` `my-project` ``) is kept exactly too. Undefined
 * when malformed.
 */
export function parseDottedName(text: string, options: { backticks?: boolean } = {}): string[] | undefined {
  const parts: string[] = [];
  let rest = text.trim();
  for (;;) {
    const quoted =
      /^"((?:[^"]|"")+)"/.exec(rest) ?? (options.backticks ? /^`((?:[^`]|``)+)`/.exec(rest) : null);
    const bare = quoted ? undefined : /^[A-Za-z_][A-Za-z0-9_$]*/.exec(rest);
    const token = quoted ?? bare;
    if (!token) return undefined;
    const mark = token[0][0] ?? '';
    parts.push(quoted ? (quoted[1] ?? '').replaceAll(mark + mark, mark) : token[0].toLowerCase());
    rest = rest.slice(token[0].length).trimStart();
    if (rest === '') return parts;
    if (!rest.startsWith('.')) return undefined;
    rest = rest.slice(1).trimStart();
  }
}

/** Parses `schema.table` (each part bare or double-quoted). Undefined unless exactly two valid parts. */
export function parseSourceRef(text: string): SourceRef | undefined {
  const parts = parseDottedName(text);
  if (parts?.length !== 2) return undefined;
  const [schema, table] = parts as [string, string];
  if (nameProblem(schema) || nameProblem(table)) return undefined;
  return { schema, table };
}

/** `schema.table`, quoting a part only where PostgreSQL needs it; `parseSourceRef` reads it back. */
export function formatSourceRef(source: SourceRef): string {
  return `${quoteIfNeeded(source.schema)}.${quoteIfNeeded(source.table)}`;
}

function quoteIfNeeded(part: string): string {
  return isBareIdentifier(part) && part === part.toLowerCase() ? part : `"${part.replaceAll('"', '""')}"`;
}
