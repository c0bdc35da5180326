import { isBareIdentifier, nameProblem, parseDottedName } from './identifiers.js';
import { positionAt } from './position.js';
import type { ArtifactColumn, ArtifactErrorCode, ParseResult, Position, SourceRef } from './types.js';

interface SqlParser {
  astify(sql: string, options: object): unknown;
}

let parserPromise: Promise<SqlParser> | undefined;

/** node-sql-parser is heavy: its PostgreSQL grammar loads on the first SQL artifact only. */
function sqlParser(): Promise<SqlParser> {
  parserPromise ??= import('node-sql-parser/build/postgresql.js').then((mod) => {
    const { Parser } = (mod as unknown as { default: { Parser: new () => SqlParser } }).default;
    return new Parser();
  });
  return parserPromise;
}

const PARSE_OPTIONS = { database: 'PostgreSQL', trimQuery: false, parseOptions: { includeLocations: true } };
const VIEW_SHAPE = 'one `CREATE [OR REPLACE] VIEW <name> AS SELECT …` statement';
const IDENTIFIER = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
/** `CREATE [OR REPLACE] [TEMP] VIEW name [(columns)] AS`, matched on the masked text: groups temp, name, columns. */
const VIEW_PREFIX = new RegExp(
  String.raw`^\s*create\s+(?:or\s+replace\s+)?(?:(temp|temporary)\s+)?(?:recursive\s+)?view\s+` +
    String.raw`(${IDENTIFIER}(?:\s*\.\s*${IDENTIFIER})*)\s*(?:\(([^()]*)\)\s*)?as\b`,
  'i',
);

type AstNode = Record<string, unknown>;
type Statements = { ok: true; statements: AstNode[] } | { ok: false; message: string; offset?: number };

/**
 * Reads a SQL governance artifact: exactly one view definition. The table is the view's name; a schema-qualified
 * view name (`analytics.orders`) declares the source `analytics.orders` (a catalog prefix `db.` is dropped).
 * Names follow PostgreSQL: bare identifiers fold to lower case, quoted ones are kept exactly.
 */
export async function readSql(content: string): Promise<ParseResult> {
  const masked = maskCommentsAndStrings(content);
  const fail = (code: ArtifactErrorCode, message: string, at?: Position | number): ParseResult => ({
    ok: false,
    error: { code, message, ...(typeof at === 'number' ? positionAt(content, at) : at) },
  });

  const prefix = VIEW_PREFIX.exec(masked);
  const parsed = await parseStatements(content, masked, prefix);
  if (!parsed.ok) return fail('syntax_error', `SQL syntax error: ${parsed.message}`, parsed.offset);
  const { statements } = parsed;
  const firstStatement = masked.search(/\S/);
  if (statements.length === 0)
    return fail('empty_file', `the file holds no SQL statement: write ${VIEW_SHAPE}`);
  if (statements.length > 1) {
    const second = /;[\s;]*(?=[^\s;])/.exec(masked);
    return fail(
      'multiple_statements',
      `found ${statements.length} statements: the file must hold ${VIEW_SHAPE}`,
      second ? second.index + second[0].length : undefined,
    );
  }
  const statement = statements[0] as AstNode;
  if (statement['type'] !== 'create' || statement['keyword'] !== 'view') {
    return fail(
      'not_a_view',
      `found ${describeStatement(statement)}: the file must hold ${VIEW_SHAPE}`,
      firstStatement,
    );
  }
  if (statement['temporary']) {
    return fail(
      'not_a_view',
      'found a temporary view, which ends with the session: define a permanent view',
      firstStatement,
    );
  }

  const nameParts = prefix?.[2] ? parseDottedName(prefix[2]) : undefined;
  const view = nameParts ?? viewNameFromAst(statement['view']);
  const table = view.at(-1) ?? '';
  const nameAt = prefix ? masked.indexOf(prefix[2] ?? '', firstStatement) : firstStatement;
  const problem = nameProblem(table);
  if (problem) return fail('invalid_table', `the view name ${problem}`, nameAt);
  const source: SourceRef | undefined = view.length >= 2 ? { schema: view.at(-2) ?? '', table } : undefined;
  if (source && nameProblem(source.schema))
    return fail('invalid_source', `the view's schema ${nameProblem(source.schema)}`, nameAt);

  const bodyStart = prefix ? prefix[0].length : 0;
  const columns = readSelectColumns(statement, content);
  if (!columns.ok) {
    const at =
      columns.at ?? locateInBody(masked, bodyStart, columns.locate) ?? outerSelect(masked, bodyStart);
    return fail(columns.code, columns.message, at);
  }
  return {
    ok: true,
    artifact: {
      kind: 'sql',
      mimeType: 'sql',
      table,
      ...(source ? { source } : {}),
      columns: columns.columns,
    },
  };
}

/**
 * The statements of the file. node-sql-parser's grammar has no set operation (UNION, INTERSECT, EXCEPT) in a view
 * body, PostgreSQL has: when the whole file does not parse, starts with a view header and has a set operation, the
 * body is parsed alone.
 */
async function parseStatements(
  content: string,
  masked: string,
  prefix: RegExpExecArray | null,
): Promise<Statements> {
  const parser = await sqlParser();
  const whole = astify(parser, content);
  if (whole.ok || !prefix) return whole;
  const bodyOffset = prefix[0].length;
  if (!/\b(?:union|intersect|except)\b/i.test(masked.slice(bodyOffset))) return whole;
  const body = astify(parser, content.slice(bodyOffset));
  if (!body.ok)
    return { ...body, ...(body.offset === undefined ? {} : { offset: bodyOffset + body.offset }) };
  const [query, ...rest] = body.statements;
  if (query?.['type'] !== 'select') return whole;
  const columns = prefix[3]
    ?.split(',')
    .map((c) => ({ type: 'double_quote_string', value: parseDottedName(c)?.[0] ?? '' }));
  return {
    ok: true,
    statements: [
      { type: 'create', keyword: 'view', temporary: prefix[1] ?? null, columns, select: query },
      ...rest,
    ],
  };
}

function astify(parser: SqlParser, sql: string): Statements {
  try {
    const ast = parser.astify(sql, PARSE_OPTIONS);
    return { ok: true, statements: [ast].flat(2).filter((s): s is AstNode => isNode(s)) };
  } catch (err) {
    const { message, location } = err as { message?: unknown; location?: { start?: { offset?: unknown } } };
    if (err instanceof RangeError)
      return { ok: false, message: 'the statement is nested too deeply to read' };
    if (message === 'double quoted not match') {
      // Thrown from inside the grammar without a location.
      const offset = unclosedQuoteOffset(sql);
      return {
        ok: false,
        message: 'a double quote is never closed',
        ...(offset === undefined ? {} : { offset }),
      };
    }
    const offset = location?.start?.offset;
    return {
      ok: false,
      message: describeSyntaxError(String(message)),
      ...(typeof offset === 'number' ? { offset } : {}),
    };
  }
}

type Located = { star: true } | { name: string; occurrence: number } | undefined;
type Columns =
  | { ok: true; columns: ArtifactColumn[] }
  | { ok: false; code: ArtifactErrorCode; message: string; at?: Position; locate?: Located };

function readSelectColumns(statement: AstNode, content: string): Columns {
  const select = statement['select'];
  const items = isNode(select) && Array.isArray(select['columns']) ? select['columns'] : [];
  const declared = Array.isArray(statement['columns']) ? statement['columns'] : [];
  if (items.length === 0) {
    return { ok: false, code: 'no_columns', message: 'the view selects no columns' };
  }
  const columns: ArtifactColumn[] = [];
  const seen = new Set<string>();
  for (const [index, item] of items.entries()) {
    const expr = isNode(item) ? item['expr'] : undefined;
    if (isStar(expr)) {
      return {
        ok: false,
        code: 'select_star',
        message:
          'SELECT * does not declare the columns: list each column of the view (e.g. SELECT id, amount FROM …)',
        locate: { star: true },
      };
    }
    const name = identifierName(declared[index], content) ?? outputName(item, content);
    if (name === undefined) {
      return {
        ok: false,
        code: 'unnamed_column',
        message: `column ${index + 1} of the SELECT list is an expression without a name: give it one with AS <name>`,
        ...(locationOf(expr) ? { at: locationOf(expr) } : {}),
      };
    }
    const problem = nameProblem(name);
    if (problem) {
      return {
        ok: false,
        code: 'invalid_column',
        message: `column name ${JSON.stringify(name)} ${problem}`,
        locate: { name, occurrence: 1 },
      };
    }
    if (seen.has(name)) {
      return {
        ok: false,
        code: 'duplicate_column',
        message: `duplicate column ${JSON.stringify(name)}`,
        locate: { name, occurrence: 2 },
      };
    }
    seen.add(name);
    const type = castType(expr);
    columns.push(type ? { name, type } : { name });
  }
  return { ok: true, columns };
}

/** The name PostgreSQL gives a SELECT item we accept: its alias, a column reference's last part, or the column under a cast. */
function outputName(item: unknown, content: string): string | undefined {
  if (!isNode(item)) return undefined;
  const alias = item['as'];
  if (typeof alias === 'string' && alias !== '') return foldUnlessQuoted(alias, content);
  let expr = item['expr'];
  if (isNode(expr) && expr['type'] === 'cast') expr = expr['expr'];
  if (!isNode(expr) || expr['type'] !== 'column_ref') return undefined;
  return identifierName(expr['column'], content);
}

/** A column identifier node: `{expr: {type, value}}`, `{type, value}` or a bare string. */
function identifierName(node: unknown, content: string): string | undefined {
  if (typeof node === 'string') return node === '' ? undefined : foldUnlessQuoted(node, content);
  if (!isNode(node)) return undefined;
  const inner = isNode(node['expr']) ? node['expr'] : node;
  const value = inner['value'];
  if (typeof value !== 'string' || value === '') return undefined;
  return inner['type'] === 'double_quote_string' ? value : value.toLowerCase();
}

/**
 * The parser drops the quotes of aliases; PostgreSQL folds an unquoted alias to lower case, so an alias is kept
 * as written only when the source spells it quoted.
 */
function foldUnlessQuoted(name: string, content: string): string {
  if (!isBareIdentifier(name) || name === name.toLowerCase()) return name;
  return content.includes(`"${name}"`) ? name : name.toLowerCase();
}

function castType(expr: unknown): string | undefined {
  if (!isNode(expr) || expr['type'] !== 'cast' || !Array.isArray(expr['target'])) return undefined;
  const [target] = expr['target'] as unknown[];
  const dataType = isNode(target) ? target['dataType'] : undefined;
  return typeof dataType === 'string' ? dataType.toLowerCase() : undefined;
}

function isStar(expr: unknown): boolean {
  if (!isNode(expr)) return false;
  return expr['type'] === 'star' || (expr['type'] === 'column_ref' && expr['column'] === '*');
}

function locationOf(expr: unknown): Position | undefined {
  const loc = isNode(expr) && isNode(expr['loc']) ? expr['loc'] : undefined;
  const start = loc && isNode(loc['start']) ? loc['start'] : undefined;
  const { line, column } = start ?? {};
  return typeof line === 'number' && typeof column === 'number' ? { line, column } : undefined;
}

/** Best effort where the parser gives no location: the `*` of the SELECT list, or the n-th use of a name in the view body. */
function locateInBody(masked: string, bodyStart: number, what: Located): number | undefined {
  if (!what) return undefined;
  const body = masked.slice(bodyStart);
  if ('star' in what) {
    const star = /(?:\bselect\s+(?:distinct\s+)?|,\s*|\.\s*)\*/i.exec(body);
    return star ? bodyStart + star.index + star[0].length - 1 : undefined;
  }
  const escaped = what.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const uses = new RegExp(
    `"${escaped.replaceAll('"', '""')}"|(?<![A-Za-z0-9_$"])${escaped}(?![A-Za-z0-9_$"])`,
    'gi',
  );
  let match: RegExpExecArray | null = null;
  for (let n = 0; n < what.occurrence; n++) {
    const next = uses.exec(body);
    if (!next) break;
    match = next;
  }
  return match ? bodyStart + match.index : undefined;
}

/** The SELECT keyword of the view's own query (outside any CTE or subquery), where the column list starts. */
function outerSelect(masked: string, bodyStart: number): number | undefined {
  let depth = 0;
  for (let i = bodyStart; i < masked.length; i++) {
    const c = masked[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (
      depth === 0 &&
      /^select\b/i.test(masked.slice(i, i + 7)) &&
      !/[A-Za-z0-9_$]/.test(masked[i - 1] ?? '')
    )
      return i;
  }
  return undefined;
}

function viewNameFromAst(view: unknown): string[] {
  if (!isNode(view)) return [];
  return [view['db'], view['schema'], view['view']].filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
}

function describeStatement(statement: AstNode): string {
  const words = [statement['type'], statement['keyword']].filter((w): w is string => typeof w === 'string');
  return words.length > 0
    ? `a ${words.join(' ').toUpperCase()} statement`
    : 'a statement that is not a view definition';
}

/** node-sql-parser lists every token it expected; the token it found says more. */
function describeSyntaxError(message: string): string {
  const found = /but (.+) found\.?$/s.exec(message);
  if (!found?.[1]) return message;
  return found[1] === 'end of input' ? 'unexpected end of input' : `unexpected ${found[1]}`;
}

/**
 * The text with comments and string literals blanked out (same length, newlines kept), so that searching it
 * for keywords and names never lands inside them. Quoted identifiers are kept.
 */
function maskCommentsAndStrings(sql: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  return sql.replace(SQL_LEXEMES, (token) => (token.startsWith('"') ? token : blank(token)));
}

/** Quoted identifiers, comments, string literals and dollar-quoted bodies (each may run to the end of the text). */
const SQL_LEXEMES =
  /"(?:[^"]|"")*"?|--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)|'(?:[^']|'')*'?|\$([A-Za-z_]*)\$[\s\S]*?(?:\$\1\$|$)/g;

/** Offset of a double quote that opens an identifier and is never closed. */
function unclosedQuoteOffset(sql: string): number | undefined {
  for (const match of sql.matchAll(SQL_LEXEMES)) {
    if (match[0].startsWith('"') && !/^"(?:[^"]|"")*"$/.test(match[0])) return match.index;
  }
  return undefined;
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
