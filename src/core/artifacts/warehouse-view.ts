// A warehouse view (Snowflake, BigQuery, Redshift, Databricks) read without the warehouse's full grammar: the
// `CREATE … VIEW <name> [(columns)] [options] AS` header and the top-level SELECT list, token by token
// (quotes, $$ strings, comments and nesting respected). A column is reported only where the warehouse names
// it the same way: a declared column list, an alias, or a plain column reference; any other expression
// without an alias is refused by name rather than guessed.
import { isDbtTemporary, modelOfFile, underDbtTarget, withoutDbtSuffix } from './dbt-sql.js';
import type { Dialect } from './dialect.js';
import { notAView, SELECT_STAR_MESSAGE, statementWords, VIEW_SHAPE } from './view-shape.js';
import type { ViewReading, ViewShape } from './view-shape.js';

type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'symbol';

interface Token {
  kind: TokenKind;
  text: string;
  start: number;
  /** For a word or quoted identifier: the name it stands for before case folding; quoted ones keep their case. */
  value?: string;
}

type Tokenized = { ok: true; tokens: Token[] } | { ok: false; message: string; at: number };

/** Quotes and comments as each warehouse lexes them. */
function tokenize(text: string, dialect: Dialect): Tokenized {
  const tokens: Token[] = [];
  const doubleQuoteIsString = dialect === 'bigquery' || dialect === 'databricks';
  const backslashEscapes = dialect !== 'redshift';
  let i = 0;
  const unclosed = (what: string, at: number): Tokenized => ({
    ok: false,
    message: `${what} opened here is never closed`,
    at,
  });
  while (i < text.length) {
    const c = text[i] ?? '';
    const rest = text.slice(i, i + 3);
    if (/\s/.test(c)) {
      i++;
    } else if (rest.startsWith('--') || (c === '#' && dialect === 'bigquery')) {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (rest.startsWith('//') && dialect === 'snowflake') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end + 1;
    } else if (rest.startsWith('/*')) {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return unclosed('the /* comment', i);
      i = end + 2;
    } else if (c === '$' && /^\$([A-Za-z_]\w*)?\$/.test(text.slice(i))) {
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(text.slice(i))?.[0] ?? '$$';
      const end = text.indexOf(tag, i + tag.length);
      if (end < 0) return unclosed(`the ${tag} string`, i);
      tokens.push({ kind: 'string', text: text.slice(i, end + tag.length), start: i });
      i = end + tag.length;
    } else if (c === "'" || c === '"' || c === '`') {
      const triple = dialect === 'bigquery' && (rest === "'''" || rest === '"""');
      const quote = triple ? rest : c;
      let j = i + quote.length;
      for (;;) {
        if (j >= text.length) return unclosed(`the ${quote} quote`, i);
        if (text[j] === '\\' && backslashEscapes && c !== '`') {
          j += 2;
          continue;
        }
        if (text.startsWith(quote, j)) {
          if (!triple && text[j + 1] === c && c !== '`') {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      const raw = text.slice(i, j + quote.length);
      const inner = raw.slice(quote.length, -quote.length);
      if (c === "'" || (c === '"' && doubleQuoteIsString))
        tokens.push({ kind: 'string', text: raw, start: i });
      else tokens.push({ kind: 'quoted', text: raw, start: i, value: inner.replaceAll(c + c, c) });
      i = j + quote.length;
    } else if (/[\p{L}_]/u.test(c)) {
      const word = /^[\p{L}\p{N}_$]+/u.exec(text.slice(i))?.[0] ?? c;
      tokens.push({ kind: 'word', text: word, start: i, value: word });
      i += word.length;
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const number = /^(?:[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+\.)/.exec(text.slice(i))?.[0] ?? c;
      tokens.push({ kind: 'number', text: number, start: i });
      i += number.length;
    } else {
      const symbol = ['::', '||', '=>', '->', '<=', '>=', '<>', '!='].find((s) => text.startsWith(s, i)) ?? c;
      tokens.push({ kind: 'symbol', text: symbol, start: i });
      i += symbol.length;
    }
  }
  return { ok: true, tokens };
}

const is = (token: Token | undefined, ...words: string[]): boolean =>
  token?.kind === 'word' && words.includes(token.text.toUpperCase());

/** Words that may stand between CREATE and VIEW. */
const VIEW_MODIFIERS = ['OR', 'REPLACE', 'SECURE', 'RECURSIVE', 'MATERIALIZED', 'ALTER'];
const TEMPORARY = ['TEMP', 'TEMPORARY', 'VOLATILE', 'LOCAL', 'GLOBAL'];

/** Keywords that end a SELECT list at its own level. */
const LIST_END = new Set(
  'FROM WHERE GROUP HAVING QUALIFY WINDOW ORDER LIMIT UNION INTERSECT EXCEPT MINUS INTO OFFSET FETCH WITH'.split(
    ' ',
  ),
);

/** Words after which a trailing identifier is an operand, not an implicit alias. */
const NOT_BEFORE_ALIAS = new Set(
  (
    'AND OR NOT IS IN LIKE ILIKE RLIKE BETWEEN THEN ELSE WHEN CASE SELECT DISTINCT BY FROM AS ON ' +
    'INTERVAL ESCAPE SIMILAR TO ANY ALL SOME EXISTS COLLATE AT ZONE DATE TIMESTAMP TIME'
  ).split(' '),
);

/** Words that are never an implicit alias. */
const NEVER_ALIAS = new Set(
  (
    'AS END NULL TRUE FALSE AND OR NOT IS ASC DESC CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP ' +
    'CURRENT_USER SESSION_USER LOCALTIME LOCALTIMESTAMP SYSDATE'
  ).split(' '),
);

export function readWarehouseView(content: string, dialect: Dialect, fileName = ''): ViewReading {
  const lexed = tokenize(content, dialect);
  if (!lexed.ok) return { ok: false, code: 'syntax_error', message: lexed.message, at: lexed.at };
  const statements = splitStatements(lexed.tokens);
  const [first, second] = statements;
  if (!first)
    return { ok: false, code: 'empty_file', message: `the file holds no SQL statement: write ${VIEW_SHAPE}` };
  const firstAt = first[0]?.start ?? 0;
  // dbt's compiled SQL of a model: a bare query, the model named after its file.
  const compiled =
    !second && (is(first[0], 'WITH') || (is(first[0], 'SELECT') && underDbtTarget(fileName, 'compiled')));
  const dbtRun = underDbtTarget(fileName, 'run') || first.some((t) => isDbtTemporary(t.value ?? t.text));
  const header: Header = compiled
    ? {
        ok: true,
        name: [{ kind: 'quoted', text: modelOfFile(fileName), value: modelOfFile(fileName), start: 0 }],
        nameAt: 0,
        declared: [],
        bodyIndex: 0,
      }
    : readHeader(first, content, dbtRun);
  if (!header.ok) return header;
  if (second) {
    const secondAt = second[0]?.start ?? 0;
    return {
      ok: false,
      code: 'multiple_statements',
      message: `found ${statements.length} statements: a second statement, ${statementWords(content, secondAt)}, follows the view; the file must hold ${VIEW_SHAPE} and nothing else`,
      at: secondAt,
    };
  }
  const fold = folder(dialect);
  const name = header.name.map(fold);
  const last = name.at(-1) ?? '';
  if (!compiled && isDbtTemporary(last)) name[name.length - 1] = withoutDbtSuffix(last);
  const view: ViewShape = {
    name,
    nameAt: header.nameAt,
    columns: [],
    ...(compiled
      ? { dbt: 'compiled' as const }
      : header.table || isDbtTemporary(last)
        ? { dbt: 'run' as const }
        : {}),
  };
  const declared = header.declared.map((t) => ({ name: fold(t), at: t.start }));
  const list = selectList(first.slice(header.bodyIndex), firstAt);
  if (!list.ok) return list;
  for (const [index, item] of list.items.entries()) {
    const column = columnOf(dialect === 'redshift' ? withoutCast(item) : item, fold);
    if (column === STAR) {
      if (declared.length === 0) {
        const star = item.find((t) => t.text === '*');
        return {
          ok: false,
          code: 'select_star',
          message: SELECT_STAR_MESSAGE,
          at: star?.start ?? item[0]?.start,
        };
      }
      view.columns.push(...declared.slice(index));
      return { ok: true, view };
    }
    const named = declared[index];
    if (named) {
      view.columns.push(named);
      continue;
    }
    if (column === undefined) {
      return {
        ok: false,
        code: 'unnamed_column',
        message: `column ${index + 1} of the SELECT list, \`${excerpt(content, item)}\`, has no name ${dialectNameRule(dialect)}: give it one with AS <name>`,
        at: item[0]?.start,
      };
    }
    view.columns.push(column);
  }
  if (declared.length > 0 && declared.length !== list.items.length) {
    return {
      ok: false,
      code: 'invalid_column',
      message: `the view declares ${declared.length} column names and its SELECT has ${list.items.length} columns`,
      at: view.nameAt,
    };
  }
  return { ok: true, view };
}

function dialectNameRule(dialect: Dialect): string {
  return dialect === 'bigquery' ? '(BigQuery would call it f0_ or the like)' : 'gds can be sure of';
}

/** Statements split on `;` (a `;` inside parentheses belongs to a procedure body, not here). */
function splitStatements(tokens: Token[]): Token[][] {
  const statements: Token[][] = [[]];
  for (const token of tokens) {
    if (token.text === ';') statements.push([]);
    else statements.at(-1)?.push(token);
  }
  return statements.filter((s) => s.length > 0);
}

type Header =
  | {
      ok: true;
      name: Token[];
      nameAt: number;
      declared: Token[];
      bodyIndex: number;
      /** dbt's run SQL of a table model (`create or replace transient table … as (…)`). */
      table?: boolean;
    }
  | { ok: false; code: 'not_a_view' | 'syntax_error'; message: string; at?: number };

/** `CREATE [OR REPLACE] [SECURE] [RECURSIVE] [MATERIALIZED] VIEW [IF NOT EXISTS] name [(cols)] [options] AS`. */
function readHeader(statement: Token[], content: string, dbtRun = false): Header {
  const start = statement[0]?.start ?? 0;
  const words = statementWords(content, start);
  let i = 0;
  if (!is(statement[0], 'CREATE'))
    return {
      ok: false,
      code: 'not_a_view',
      message: `${notAView(words)}: the file must hold ${VIEW_SHAPE}`,
      at: start,
    };
  i++;
  while (is(statement[i], ...VIEW_MODIFIERS, ...TEMPORARY, ...(dbtRun ? ['TRANSIENT'] : []))) {
    if (is(statement[i], ...TEMPORARY)) {
      return {
        ok: false,
        code: 'not_a_view',
        message: `${words} ends with the session: define a permanent view`,
        at: start,
      };
    }
    i++;
  }
  const table = dbtRun && is(statement[i], 'TABLE');
  if (!is(statement[i], 'VIEW') && !table)
    return {
      ok: false,
      code: 'not_a_view',
      message: `${notAView(words)}: the file must hold ${VIEW_SHAPE}`,
      at: start,
    };
  i++;
  if (is(statement[i], 'IF') && is(statement[i + 1], 'NOT') && is(statement[i + 2], 'EXISTS')) i += 3;
  const name: Token[] = [];
  const nameAt = statement[i]?.start ?? start;
  for (;;) {
    const part = statement[i];
    if (part?.kind !== 'word' && part?.kind !== 'quoted') {
      return {
        ok: false,
        code: 'syntax_error',
        message: 'CREATE VIEW must be followed by the view name',
        at: part?.start ?? nameAt,
      };
    }
    // BigQuery and Databricks write the whole path in one pair of backticks: `project.dataset.view`.
    if (part.text.startsWith('`'))
      name.push(...(part.value ?? '').split('.').map((v) => ({ ...part, value: v, text: v })));
    else name.push(part);
    i++;
    if (statement[i]?.text !== '.') break;
    i++;
  }
  const declared: Token[] = [];
  if (statement[i]?.text === '(') {
    const close = closing(statement, i);
    for (const item of splitTopLevel(statement.slice(i + 1, close))) {
      const column = item[0];
      if (column?.kind === 'word' || column?.kind === 'quoted') declared.push(column);
    }
    i = close + 1;
  }
  // Options up to the top-level AS: COMMENT = '…', COPY GRANTS, WITH TAG (…), OPTIONS (…), TBLPROPERTIES (…).
  let depth = 0;
  for (; i < statement.length; i++) {
    const token = statement[i];
    if (token?.text === '(') depth++;
    else if (token?.text === ')') depth--;
    else if (depth === 0 && is(token, 'AS')) break;
  }
  if (i >= statement.length) {
    return {
      ok: false,
      code: 'syntax_error',
      message: `the view's header never reaches AS <query>`,
      at: nameAt,
    };
  }
  return { ok: true, name, nameAt, declared, bodyIndex: i + 1, ...(table ? { table } : {}) };
}

function closing(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const text = tokens[i]?.text;
    if (text === '(' || text === '[') depth++;
    else if (text === ')' || text === ']') depth--;
    if (depth === 0) return i;
  }
  return tokens.length;
}

function splitTopLevel(tokens: Token[]): Token[][] {
  const items: Token[][] = [[]];
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.text === '(' || token.text === '[') depth++;
    else if (token.text === ')' || token.text === ']') depth--;
    else if (token.text === '<' && is(tokens[i - 1], 'ARRAY', 'STRUCT', 'MAP')) depth++;
    else if (token.text === '>' && depth > 0 && angleOpen(tokens, i)) depth--;
    if (depth === 0 && token.text === ',') items.push([]);
    else items.at(-1)?.push(token);
  }
  return items.filter((item) => item.length > 0);
}

/** True when a `>` closes a type's `<` (ARRAY<…>, STRUCT<…>) rather than comparing. */
function angleOpen(tokens: Token[], at: number): boolean {
  let opened = 0;
  for (let i = at - 1; i >= 0; i--) {
    const text = tokens[i]?.text;
    if (text === '>') opened--;
    if (text === '<' && is(tokens[i - 1], 'ARRAY', 'STRUCT', 'MAP')) opened++;
    if (opened > 0) return true;
  }
  return false;
}

type List =
  { ok: true; items: Token[][] } | { ok: false; code: 'syntax_error'; message: string; at?: number };

/** The SELECT list of the body's own query, past a wrapping `( … )`, a WITH clause and leading parentheses. */
function selectList(body: Token[], statementAt: number): List {
  let tokens = body;
  for (;;) {
    if (tokens[0]?.text === '(' && closing(tokens, 0) === tokens.length - 1) {
      tokens = tokens.slice(1, -1);
      continue;
    }
    if (is(tokens[0], 'WITH')) {
      tokens = afterWith(tokens);
      continue;
    }
    if (tokens[0]?.text === '(') {
      tokens = tokens.slice(1);
      continue;
    }
    break;
  }
  if (!is(tokens[0], 'SELECT')) {
    return {
      ok: false,
      code: 'syntax_error',
      message: `the view's query must start with SELECT (or WITH … SELECT), found \`${tokens[0]?.text ?? 'nothing'}\``,
      at: tokens[0]?.start ?? statementAt,
    };
  }
  let i = 1;
  if (is(tokens[i], 'DISTINCT') && is(tokens[i + 1], 'ON') && tokens[i + 2]?.text === '(')
    i = closing(tokens, i + 2) + 1;
  else if (is(tokens[i], 'DISTINCT', 'ALL')) i++;
  if (is(tokens[i], 'TOP')) i += 2;
  if (is(tokens[i], 'AS') && is(tokens[i + 1], 'STRUCT', 'VALUE')) {
    return {
      ok: false,
      code: 'syntax_error',
      message: `SELECT AS ${tokens[i + 1]?.text.toUpperCase()} makes one value per row, not the columns of a view`,
      at: tokens[i]?.start,
    };
  }
  const list: Token[] = [];
  let depth = 0;
  for (; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.text === '(' || token.text === '[') depth++;
    else if (token.text === ')' || token.text === ']') depth--;
    if (depth < 0) break;
    const alias = is(tokens[i - 1], 'AS');
    if (depth === 0 && !alias && token.kind === 'word' && LIST_END.has(token.text.toUpperCase())) break;
    list.push(token);
  }
  return { ok: true, items: splitTopLevel(list) };
}

/** Skips `WITH [RECURSIVE] name [(cols)] AS [NOT] [MATERIALIZED] ( … ) [, …]`. */
function afterWith(tokens: Token[]): Token[] {
  let i = 1;
  if (is(tokens[i], 'RECURSIVE')) i++;
  for (;;) {
    while (i < tokens.length && tokens[i]?.text !== '(') i++;
    if (!is(tokens[i - 1], 'AS', 'MATERIALIZED')) i = closing(tokens, i) + 1;
    while (i < tokens.length && tokens[i]?.text !== '(') i++;
    i = closing(tokens, i) + 1;
    if (tokens[i]?.text !== ',') return tokens.slice(i);
    i++;
  }
}

const STAR = Symbol('star');

/** The name the warehouse gives a SELECT item: `AS alias`, an implicit alias, or a column reference's last part. */
function columnOf(
  item: Token[],
  fold: (t: Token) => string,
): { name: string; at: number } | typeof STAR | undefined {
  const last = item.at(-1);
  if (!last) return undefined;
  if (item.some((t, i) => t.text === '*' && (i === 0 || item[i - 1]?.text === '.'))) {
    // `*`, `t.*`, `* EXCLUDE (…)`, `* EXCEPT (…)`, `* REPLACE (…)`, `* RENAME …`
    const star = item.findIndex((t) => t.text === '*');
    if (star === item.length - 1 || is(item[star + 1], 'EXCLUDE', 'EXCEPT', 'REPLACE', 'RENAME', 'ILIKE'))
      return STAR;
  }
  const isName = (t: Token | undefined): t is Token => t?.kind === 'word' || t?.kind === 'quoted';
  const before = item.at(-2);
  if (isName(last) && is(before, 'AS') && item.length >= 3) return { name: fold(last), at: last.start };
  if (isName(last) && isColumnReference(item)) return { name: fold(last), at: last.start };
  if (
    isName(last) &&
    item.length >= 2 &&
    !item.some((t) => is(t, 'INTERVAL')) &&
    before !== undefined &&
    !(last.kind === 'word' && NEVER_ALIAS.has(last.text.toUpperCase())) &&
    (before.kind !== 'word' || !NOT_BEFORE_ALIAS.has(before.text.toUpperCase())) &&
    (before.kind !== 'symbol' || before.text === ')' || before.text === ']')
  )
    return { name: fold(last), at: last.start };
  return undefined;
}

/** Redshift (like PostgreSQL) names `x::varchar(20)` after `x`; the other warehouses name it after its text. */
function withoutCast(item: Token[]): Token[] {
  const cast = item.findLastIndex((t) => t.text === '::');
  if (cast <= 0 || item[cast + 1]?.kind !== 'word') return item;
  const rest = item.slice(cast + 2);
  const typeEnd = rest[0]?.text === '(' ? closing(rest, 0) + 1 : 0;
  return typeEnd === rest.length ? item.slice(0, cast) : item;
}

/** `col`, `t.col`, `db.schema.t.col`: nothing but names and dots. */
function isColumnReference(item: Token[]): boolean {
  return item.every((t, i) =>
    i % 2 === 0
      ? (t.kind === 'word' || t.kind === 'quoted') && !NEVER_ALIAS.has(t.text.toUpperCase())
      : t.text === '.',
  );
}

/** How the dialect stores a name: Snowflake upper-cases unquoted names, Redshift lower-cases every name. */
function folder(dialect: Dialect): (token: Token) => string {
  return (token) => {
    const value = token.value ?? token.text;
    if (dialect === 'redshift') return value.toLowerCase();
    if (dialect === 'snowflake' && token.kind === 'word') return value.toUpperCase();
    return value;
  };
}

function excerpt(content: string, item: Token[]): string {
  const first = item[0];
  const last = item.at(-1);
  if (!first || !last) return '';
  const text = content.slice(first.start, last.start + last.text.length).replace(/\s+/g, ' ');
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
