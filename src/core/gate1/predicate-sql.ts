// SQL safety of a customPredicates entry: ONE boolean expression over the table's columns, run by the
// server as `SELECT … FROM <table> WHERE (<sql>)`. The text is read by PostgreSQL's own parser
// (libpg-query), inside that very query, so the checks see what the server will run. Everything here is an
// allow-list: a node type, an operator, a function or a cast target that is not listed is refused, with the
// reason and, where the parser says, the place.
import type { PgGrammar } from '../artifacts/pg-grammar.js';
import { pgGrammar, pgRefusal } from '../artifacts/pg-grammar.js';
import type { Finding } from './finding.js';
import { checkRegex } from './regex-check.js';
import { isPlainPredicate } from './plain-predicate.js';
import { lexPredicate } from './sql-lexer.js';
import type { LexedPredicate } from './sql-lexer.js';

/** Functions a predicate may call (lower case; unquoted names only). All are immutable or stable, return one value per row, and read nothing but their arguments. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  // text
  'lower',
  'upper',
  'initcap',
  'length',
  'char_length',
  'character_length',
  'octet_length',
  'trim',
  'btrim',
  'ltrim',
  'rtrim',
  'substr',
  'substring',
  'left',
  'right',
  'replace',
  'translate',
  'position',
  'strpos',
  'split_part',
  'concat',
  'concat_ws',
  'lpad',
  'rpad',
  'reverse',
  'starts_with',
  'to_char',
  'to_date',
  'to_timestamp',
  'to_number',
  // numbers
  'abs',
  'ceil',
  'ceiling',
  'floor',
  'round',
  'trunc',
  'sign',
  'mod',
  'power',
  'sqrt',
  'greatest',
  'least',
  // nulls
  'coalesce',
  'nullif',
  // time
  'now',
  'current_date',
  'current_timestamp',
  'current_time',
  'localtimestamp',
  'localtime',
  'date_trunc',
  'date_part',
  'age',
  'make_date',
  'isfinite',
]);

/**
 * The largest value a predicate may build with a function whose output size is set by an argument
 * (padding to a length, replacing by a longer text): a predicate runs once per row, and a
 * 268,000,000-character lpad() stalls the warehouse for every other caller.
 */
export const MAX_BUILT_LENGTH = 1000;

/** Functions whose output length is their argument at this index (0-based): it must be a small literal. */
const LENGTH_ARGUMENT: ReadonlyMap<string, number> = new Map([
  ['lpad', 1],
  ['rpad', 1],
]);

/** Functions that return boolean, so they may stand alone as a predicate. */
const BOOLEAN_FUNCTIONS = new Set(['starts_with', 'isfinite', 'not']);

/**
 * Cast targets a predicate may use (upper case), by the name PostgreSQL's parser gives them (`integer` is
 * pg_catalog.int4, `char` bpchar, `time with time zone` timetz). Excludes regclass, oid, regproc and friends,
 * which read the catalog.
 */
export const ALLOWED_CAST_TYPES: ReadonlySet<string> = new Set([
  'TEXT',
  'VARCHAR',
  'CHAR',
  'CHARACTER',
  'CHARACTER VARYING',
  'SMALLINT',
  'INT',
  'INTEGER',
  'BIGINT',
  'INT2',
  'INT4',
  'INT8',
  'NUMERIC',
  'DECIMAL',
  'REAL',
  'FLOAT',
  'FLOAT4',
  'FLOAT8',
  'DOUBLE PRECISION',
  'BOOLEAN',
  'BOOL',
  'DATE',
  'TIME',
  'TIMESTAMP',
  'TIMESTAMPTZ',
  'INTERVAL',
  'BPCHAR',
  'TIMETZ',
  'UUID',
]);

const COMPARISON_OPERATORS = new Set(['=', '<>', '<', '<=', '>', '>=']);
const REGEX_OPERATORS = new Set(['~', '~*', '!~', '!~*']);
const VALUE_OPERATORS = new Set(['+', '-', '*', '/', '%', '||']);
/** LIKE, ILIKE and SIMILAR TO, as the parser files them, with the escape function it may call for them. */
const PATTERN_KINDS: ReadonlyMap<string, string> = new Map([
  ['AEXPR_LIKE', 'like_escape'],
  ['AEXPR_ILIKE', 'like_escape'],
  ['AEXPR_SIMILAR', 'similar_to_escape'],
]);
const BETWEEN_KINDS = new Set([
  'AEXPR_BETWEEN',
  'AEXPR_NOT_BETWEEN',
  'AEXPR_BETWEEN_SYM',
  'AEXPR_NOT_BETWEEN_SYM',
]);
const EXTRACT_FIELDS = new Set([
  'year',
  'quarter',
  'month',
  'week',
  'day',
  'dow',
  'doy',
  'hour',
  'minute',
  'second',
  'epoch',
]);
/**
 * Functions the parser itself writes, schema-qualified, for SQL's own syntax (COERCE_SQL_SYNTAX):
 * trim(both ' ' from a) is pg_catalog.btrim, position('a' in b) pg_catalog.position, and so on. Each is
 * allowed when the function the user meant is.
 */
const SYNTAX_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['btrim', 'trim'],
  ['ltrim', 'trim'],
  ['rtrim', 'trim'],
  ['position', 'position'],
  ['substring', 'substring'],
  ['extract', 'extract'],
]);
/** Aggregates (a predicate tests one row): the built-in ones a predicate might reach for. */
const AGGREGATES = new Set([
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'array_agg',
  'string_agg',
  'json_agg',
  'jsonb_agg',
  'json_object_agg',
  'jsonb_object_agg',
  'bool_and',
  'bool_or',
  'every',
  'bit_and',
  'bit_or',
  'stddev',
  'stddev_pop',
  'stddev_samp',
  'variance',
  'var_pop',
  'var_samp',
  'percentile_cont',
  'percentile_disc',
  'mode',
]);
/** SQLValueFunction operations that read the clock: the rest (user, current_schema, …) read the session. */
const CLOCK_VALUES = new Set([
  'SVFOP_CURRENT_DATE',
  'SVFOP_CURRENT_TIME',
  'SVFOP_CURRENT_TIME_N',
  'SVFOP_CURRENT_TIMESTAMP',
  'SVFOP_CURRENT_TIMESTAMP_N',
  'SVFOP_LOCALTIME',
  'SVFOP_LOCALTIME_N',
  'SVFOP_LOCALTIMESTAMP',
  'SVFOP_LOCALTIMESTAMP_N',
]);

function dangerHint(name: string): string {
  if (/^pg_sleep/.test(name)) return ' (it stalls the warehouse)';
  if (/^(pg_read|pg_ls_|pg_stat_file|lo_)/.test(name)) return ' (it reads files on the database server)';
  if (/^dblink/.test(name)) return ' (it opens connections from the database server)';
  if (/^(set_config|current_setting)$/.test(name)) return ' (it reads or changes server settings)';
  if (
    /^(generate_series|unnest|json_each|jsonb_each|regexp_matches|json_array_elements|jsonb_array_elements)/.test(
      name,
    )
  )
    return ' (it returns a set of rows, not one value)';
  if (/^(nextval|setval|pg_terminate_backend|pg_cancel_backend|pg_advisory)/.test(name))
    return ' (it changes server state)';
  if (/^(query_to_xml|table_to_xml|cursor_to_xml|xpath)/.test(name))
    return ' (it runs or reads other queries)';
  if (name === 'any' || name === 'all') return '; write a list with IN (…) instead';
  return '';
}

/** A node of PostgreSQL's parse tree as libpg-query gives it: `{ NodeType: { …fields } }`. */
type PgNode = Record<string, unknown>;
type Fields = Record<string, unknown>;

function isObject(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The node's type and fields, or undefined for anything that is not one node. */
function nodeOf(v: unknown): [type: string, fields: Fields] | undefined {
  if (!isObject(v)) return undefined;
  const keys = Object.keys(v);
  const [type] = keys;
  const fields = type === undefined ? undefined : v[type];
  return keys.length === 1 && type !== undefined && isObject(fields) ? [type, fields] : undefined;
}

/** A list field: an array, or a `{List: {items}}` node (IN and BETWEEN keep their operands in one). */
function list(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  const node = nodeOf(v);
  return node?.[0] === 'List' && Array.isArray(node[1].items) ? node[1].items : [];
}

/** The names of a name list (`[{String: {sval}}]`), or undefined when one is not a plain name (e.g. `*`). */
function names(v: unknown): string[] | undefined {
  const out: string[] = [];
  for (const item of list(v)) {
    const node = nodeOf(item);
    if (node?.[0] !== 'String' || typeof node[1].sval !== 'string') return undefined;
    out.push(node[1].sval);
  }
  return out;
}

/** An A_Const's value: protobuf's JSON leaves out zero and false, so `{ival: {}}` is 0. */
function constant(fields: Fields): {
  kind: 'int' | 'float' | 'string' | 'bool' | 'null' | 'bits';
  value: string;
} {
  if (fields.isnull === true) return { kind: 'null', value: 'NULL' };
  const part = (key: string) => (isObject(fields[key]) ? (fields[key] as Fields)[key] : undefined);
  if ('ival' in fields) return { kind: 'int', value: String(part('ival') ?? 0) };
  if ('fval' in fields) return { kind: 'float', value: String(part('fval') ?? '0') };
  if ('boolval' in fields) return { kind: 'bool', value: String(part('boolval') ?? false) };
  if ('bsval' in fields) return { kind: 'bits', value: String(part('bsval') ?? '') };
  return { kind: 'string', value: String(part('sval') ?? '') };
}

// PostgreSQL's own parser (libpg-query, the server's grammar compiled to WebAssembly, shared with the SQL
// artifacts): loaded once, asynchronously; the CLI loads it only for a file with predicates to check
// (validateGate1Lazily), index.ts at once for everyone else.
let grammar: PgGrammar | undefined;
let baseline: string | undefined;
/** The query the server runs the predicate in; the predicate's offsets are counted from its end. */
const WRAPPER = 'SELECT 1 FROM t WHERE (';
const UNWRAPPED = 'SELECT 1 FROM t WHERE ';

/** Thrown by checkPredicateSql before PostgreSQL's parser is loaded (see loadPredicateParser). */
export class PredicateParserMissing extends Error {
  constructor() {
    super(
      "checkPredicateSql needs PostgreSQL's parser: import core/gate1/index.js or await loadPredicateParser()",
    );
  }
}

export async function loadPredicateParser(): Promise<void> {
  grammar ??= await pgGrammar();
}

function loadedGrammar(): PgGrammar {
  if (grammar === undefined) throw new PredicateParserMissing();
  return grammar;
}

/** The statements of a text, or PostgreSQL's refusal. */
function parse(
  sql: string,
  grammar: PgGrammar,
): { statements: PgNode[] } | { refusal: { message: string; offset?: number } } {
  try {
    const tree = grammar.parseSync(sql) as { stmts?: Array<{ stmt?: PgNode }> };
    return { statements: (tree.stmts ?? []).map((s) => s.stmt ?? {}) };
  } catch (error) {
    return { refusal: pgRefusal(error) };
  }
}

/** A tree as JSON without its source positions, to compare shapes. */
function shape(tree: unknown): string {
  return JSON.stringify(tree, (key, value: unknown) => (key === 'location' ? undefined : value));
}

/** The wrapper's SELECT without its WHERE, to prove a predicate added no clause (GROUP BY, UNION, LIMIT, …). */
function selectShape(statements: PgNode[]): string | undefined {
  const [only] = statements;
  const select = statements.length === 1 ? nodeOf(only) : undefined;
  if (select?.[0] !== 'SelectStmt') return undefined;
  return shape({ ...select[1], whereClause: null });
}

function baselineShape(grammar: PgGrammar): string | undefined {
  if (baseline === undefined) {
    const parsed = parse(`${WRAPPER}true)`, grammar);
    baseline = 'statements' in parsed ? selectShape(parsed.statements) : undefined;
  }
  return baseline;
}

class PredicateWalker {
  readonly findings: Finding[] = [];
  readonly literals: string[] = [];
  /** How many times longer than its input a value can get through nested replace() calls. */
  private growth = 1;
  private readonly ascii: boolean;
  private readonly bytes: Buffer;

  constructor(
    private readonly sql: string,
    private readonly columns?: ReadonlySet<string>,
  ) {
    this.ascii = !/[^\u0000-\u007f]/.test(sql);
    this.bytes = Buffer.from(sql, 'utf8');
  }

  /** The character offset in the predicate of a parse-tree location (a byte offset in the wrapper). */
  private offset(location: unknown): number | undefined {
    if (typeof location !== 'number' || location < WRAPPER.length) return undefined;
    const byte = location - WRAPPER.length;
    if (byte > this.bytes.length) return undefined;
    return this.ascii ? byte : this.bytes.subarray(0, byte).toString('utf8').length;
  }

  /** `at`: the node's location; `near`: else a word of the predicate to point at (its first occurrence, any case). */
  private refuse(code: string, message: string, at?: { location?: unknown; near?: string }): void {
    let index = this.offset(at?.location);
    if (index === undefined && at?.near) {
      const found = this.sql.toLowerCase().indexOf(at.near.toLowerCase());
      if (found >= 0) index = found;
    }
    this.findings.push({ code, severity: 'error', message, ...(index === undefined ? {} : { index }) });
  }

  walk(value: unknown): void {
    const node = nodeOf(value);
    if (node === undefined) {
      this.refuse('sql-unsupported', 'this predicate uses a construct the checker cannot read; simplify it');
      return;
    }
    const [type, n] = node;
    switch (type) {
      case 'BoolExpr':
        for (const arg of list(n.args)) this.walk(arg);
        return;
      case 'A_Expr':
        return this.expression(n);
      case 'NullTest':
      case 'BooleanTest':
        return this.walk(n.arg);
      case 'ColumnRef':
        return this.column(n);
      case 'A_Const':
        return this.constant(n);
      case 'FuncCall':
        return this.func(n);
      case 'CoalesceExpr':
      case 'MinMaxExpr':
        for (const arg of list(n.args)) this.walk(arg);
        return;
      case 'TypeCast':
        return this.cast(n);
      case 'CaseExpr':
        if (n.arg !== undefined) this.walk(n.arg);
        for (const arm of list(n.args)) {
          const when = nodeOf(arm);
          if (when?.[0] !== 'CaseWhen') {
            this.walk(arm);
            continue;
          }
          this.walk(when[1].expr);
          this.walk(when[1].result);
        }
        if (n.defresult !== undefined) this.walk(n.defresult);
        return;
      case 'SQLValueFunction':
        return this.sessionValue(n);
      case 'SubLink':
        this.refuse(
          'sql-subquery',
          'subqueries (SELECT, EXISTS, ARRAY(SELECT …)) are not allowed: a predicate tests one row of the table by its own columns',
          { near: 'select' },
        );
        return;
      case 'ParamRef':
        this.refuse(
          'sql-dollar',
          "parameters and dollar-quoted strings are not allowed; write string values as '…'",
          { location: n.location },
        );
        return;
      default:
        this.refuse(
          'sql-unsupported',
          `this predicate uses a construct the checker does not allow (${type}); use comparisons, IN, BETWEEN, LIKE, ~, CASE and the allowed functions`,
          { location: n.location },
        );
    }
  }

  private expression(n: Fields): void {
    const kind = String(n.kind);
    const operator = names(n.name) ?? [];
    const op = operator.join('.');
    const at = { location: n.location };
    if (operator.length !== 1) {
      this.refuse(
        'sql-operator-not-allowed',
        `the operator OPERATOR(${op}) is not allowed; write the plain operator`,
        at,
      );
      return;
    }
    if (kind === 'AEXPR_OP_ANY' || kind === 'AEXPR_OP_ALL') {
      const word = kind === 'AEXPR_OP_ANY' ? 'ANY' : 'ALL';
      this.refuse(
        'sql-function-not-allowed',
        `${op} ${word}(…) is not allowed${dangerHint(word.toLowerCase())}`,
        at,
      );
      return;
    }
    if (kind === 'AEXPR_DISTINCT' || kind === 'AEXPR_NOT_DISTINCT') {
      this.refuse(
        'sql-unsupported',
        'only IS [NOT] NULL, IS [NOT] TRUE and IS [NOT] FALSE are allowed; for IS DISTINCT FROM write the comparison out with = and IS NULL',
        at,
      );
      return;
    }
    if (kind === 'AEXPR_IN' || BETWEEN_KINDS.has(kind)) {
      this.walk(n.lexpr);
      for (const item of list(n.rexpr)) this.walk(item);
      return;
    }
    if (kind === 'AEXPR_NULLIF') {
      this.walk(n.lexpr);
      this.walk(n.rexpr);
      return;
    }
    const escape = PATTERN_KINDS.get(kind);
    if (escape !== undefined) {
      this.walk(n.lexpr);
      const call = nodeOf(n.rexpr);
      const callee = call?.[0] === 'FuncCall' ? names(call[1].funcname)?.join('.') : undefined;
      if (call !== undefined && callee === `pg_catalog.${escape}`) {
        for (const arg of list(call[1].args)) this.walk(arg); // the parser's own call, for ESCAPE or SIMILAR TO
      } else {
        this.walk(n.rexpr);
      }
      return;
    }
    const allowed =
      kind === 'AEXPR_OP' &&
      (n.lexpr === undefined
        ? op === '-' || op === '+'
        : COMPARISON_OPERATORS.has(op) || REGEX_OPERATORS.has(op) || VALUE_OPERATORS.has(op));
    if (!allowed) {
      this.refuse(
        'sql-operator-not-allowed',
        `the operator ${op} is not allowed; use comparisons, AND/OR/NOT, IN, BETWEEN, LIKE/ILIKE, ~, IS NULL or arithmetic`,
        at,
      );
    }
    if (n.lexpr !== undefined) this.walk(n.lexpr);
    if (REGEX_OPERATORS.has(op)) this.regexOperand(n.rexpr);
    this.walk(n.rexpr);
  }

  /** The regex on the right of `~` is checked like a patternChecks regex. */
  private regexOperand(right: unknown): void {
    const node = nodeOf(right);
    if (node?.[0] !== 'A_Const' || constant(node[1]).kind !== 'string') return;
    const regex = constant(node[1]).value;
    const quoteAt = this.offset(node[1].location);
    for (const p of checkRegex(regex)) {
      const quotesBefore = regex.slice(0, p.index).split("'").length - 1;
      this.findings.push({
        code: p.code,
        severity: p.severity,
        message: `in the regex '${regex.replaceAll("'", "''")}': ${p.message}`,
        ...(quoteAt === undefined ? {} : { index: quoteAt + 1 + p.index + quotesBefore }),
      });
    }
  }

  private constant(n: Fields): void {
    const { kind, value } = constant(n);
    if (kind === 'string') this.literals.push(value);
    if (kind === 'bits') {
      this.refuse(
        'sql-unsupported',
        "bit-string constants (B'…', X'…') are not allowed; compare with numbers or text",
        { location: n.location },
      );
    }
  }

  private column(n: Fields): void {
    const parts = names(n.fields);
    const at = { location: n.location };
    if (parts === undefined) {
      this.refuse(
        'sql-unsupported',
        'this column reference uses a form the checker does not allow; write the plain column name',
        at,
      );
      return;
    }
    const [name = ''] = parts;
    if (parts.length > 1) {
      this.refuse(
        'sql-qualified-name',
        `"${name}.…" names another table or schema; a predicate refers to the table's own columns by their plain names`,
        at,
      );
      return;
    }
    if (this.columns && !this.columns.has(name)) {
      this.refuse('sql-unknown-column', `the table has no column ${JSON.stringify(name)}`, at);
    }
  }

  private sessionValue(n: Fields): void {
    const op = String(n.op);
    if (CLOCK_VALUES.has(op)) return;
    const name = op.replace(/^SVFOP_/, '').toLowerCase();
    this.refuse(
      'sql-session-value',
      `${name} is a value of the database session, not a column; a predicate tests the table's own columns`,
      { location: n.location },
    );
  }

  /** Whether the predicate's text at a location starts with a double quote (the tree keeps no quoting). */
  private quotedAt(location: unknown): boolean {
    const index = this.offset(location);
    return index !== undefined && this.sql[index] === '"';
  }

  private func(n: Fields): void {
    const parts = names(n.funcname) ?? [];
    const at = { location: n.location };
    const args = list(n.args);
    const syntax = n.funcformat === 'COERCE_SQL_SYNTAX' && parts.length === 2 && parts[0] === 'pg_catalog';
    const name = syntax ? (SYNTAX_FUNCTIONS.get(parts[1] ?? '') ?? parts.join('.')) : (parts[0] ?? '');
    if (syntax && parts[1] === 'system_user') {
      this.refuse(
        'sql-session-value',
        "system_user is a value of the database session, not a column; a predicate tests the table's own columns",
        at,
      );
      return;
    }
    if (args.some((arg) => nodeOf(arg)?.[0] === 'SubLink')) {
      this.walk(args.find((arg) => nodeOf(arg)?.[0] === 'SubLink'));
      return;
    }
    if (
      AGGREGATES.has(name) ||
      n.agg_star === true ||
      n.agg_distinct === true ||
      n.agg_order ||
      n.agg_filter
    ) {
      this.refuse(
        'sql-aggregate',
        `the aggregate ${name}() is not allowed: a predicate is tested row by row; declare a fieldOverride or a baseline check for table-wide figures`,
        at,
      );
      return;
    }
    if (!syntax && parts.length !== 1) {
      const last = parts.at(-1) ?? '';
      this.refuse(
        'sql-function-not-allowed',
        `${parts.join('.')}() is schema-qualified; only the plain names of allowed functions may be called${dangerHint(last)}`,
        at,
      );
      return;
    }
    if (!syntax && this.quotedAt(n.location)) {
      this.refuse(
        'sql-function-not-allowed',
        `the quoted function name "${name}" is not allowed; call allowed functions by their plain name`,
        at,
      );
      return;
    }
    if (!ALLOWED_FUNCTIONS.has(name) && !(syntax && name === 'extract')) {
      this.refuse(
        'sql-function-not-allowed',
        `${name}() is not on the allow-list of functions${dangerHint(name)}; use comparisons and the allowed functions (lower, upper, length, trim, substring, coalesce, date_trunc, now, … listed in the README)`,
        at,
      );
      return;
    }
    if (n.over !== undefined) {
      this.refuse(
        'sql-window',
        'window functions (OVER …) are not allowed: a predicate tests one row at a time',
        at,
      );
    }
    if (n.func_variadic === true || args.some((arg) => nodeOf(arg)?.[0] === 'NamedArgExpr')) {
      this.refuse(
        'sql-unsupported',
        `${name}() is called with VARIADIC or named arguments; pass its arguments by position`,
        at,
      );
      return;
    }
    if (name === 'extract') return this.extract(args, at);
    this.sizeBound(name, args, at);
    for (const arg of args) this.walk(arg);
  }

  /** Refuses an argument that lets one call build a value of unbounded size (see MAX_BUILT_LENGTH). */
  private sizeBound(name: string, args: unknown[], at: { location?: unknown }): void {
    const lengthAt = LENGTH_ARGUMENT.get(name);
    const length = lengthAt === undefined ? undefined : nodeOf(args[lengthAt]);
    if (length) {
      const value = length[0] === 'A_Const' ? constant(length[1]) : undefined;
      const numeric = value?.kind === 'int' || value?.kind === 'float';
      if (value?.kind !== 'int' || Number(value.value) > MAX_BUILT_LENGTH) {
        this.refuse(
          'sql-size-bound',
          `${name}()'s length must be a whole-number literal of at most ${MAX_BUILT_LENGTH}${numeric ? ` (got ${value.value})` : ', not an expression'}: a predicate may not build values longer than ${MAX_BUILT_LENGTH} characters`,
          at,
        );
      }
      return;
    }
    if (name !== 'replace') return;
    // replace() multiplies a value's length by its replacement's (the pattern is at least one
    // character, or nothing is replaced), and nested calls multiply again.
    const replacement = nodeOf(args[2]);
    const text = replacement?.[0] === 'A_Const' ? constant(replacement[1]) : undefined;
    if (text?.kind !== 'string') {
      this.refuse(
        'sql-size-bound',
        `${name}()'s replacement must be a string literal: a column or expression there could make the value grow without bound`,
        at,
      );
      return;
    }
    const before = this.growth;
    this.growth *= Math.max(1, text.value.length);
    if (this.growth > MAX_BUILT_LENGTH && before <= MAX_BUILT_LENGTH) {
      this.refuse(
        'sql-size-bound',
        `the ${name}() calls of this predicate can make a value up to ${this.growth} times longer; at most ${MAX_BUILT_LENGTH} times is allowed (use shorter replacement texts or fewer nested calls)`,
        at,
      );
    }
  }

  private cast(n: Fields): void {
    const typeName = isObject(n.typeName) ? n.typeName : {};
    const parts = names(typeName.names) ?? [];
    const type = (parts.at(-1) ?? '').toUpperCase();
    const qualified = parts.length > 2 || (parts.length === 2 && parts[0] !== 'pg_catalog');
    const array = list(typeName.arrayBounds).length > 0;
    const plain = !qualified && ALLOWED_CAST_TYPES.has(type) && !array && typeName.setof !== true;
    if (!plain || typeName.pct_type === true) {
      this.refuse(
        'sql-cast-not-allowed',
        `casting to ${parts
          .filter((p) => p !== 'pg_catalog')
          .join('.')
          .toUpperCase()}${array ? '[]' : ''} is not allowed (casts to regclass, oid and other catalog types read the database catalog); cast to a plain type such as text, integer, numeric, date or timestamp`,
        { location: typeName.location },
      );
    }
    for (const modifier of list(typeName.typmods)) {
      if (nodeOf(modifier)?.[0] !== 'A_Const') {
        this.refuse(
          'sql-cast-not-allowed',
          `a type's modifiers are numbers, as in numeric(12, 2); not expressions`,
          { location: typeName.location },
        );
      }
    }
    this.walk(n.arg);
  }

  private extract(args: unknown[], at: { location?: unknown }): void {
    const [field, source] = args;
    const fieldNode = nodeOf(field);
    const name = fieldNode?.[0] === 'A_Const' ? constant(fieldNode[1]).value.toLowerCase() : '';
    if (!EXTRACT_FIELDS.has(name)) {
      this.refuse(
        'sql-unsupported',
        `EXTRACT(${name} FROM …) is not allowed; use one of ${[...EXTRACT_FIELDS].join(', ')}`,
        at,
      );
    }
    this.walk(source);
  }
}

/** A reason when the top-level expression surely does not yield a boolean; a warning when it may not. */
function topLevelKind(value: unknown): Finding | undefined {
  const notBoolean = (what: string): Finding => ({
    code: 'sql-not-boolean',
    severity: 'error',
    message: `the predicate is ${what}, not a boolean expression; compare it, e.g. "<expression> IS NOT NULL" or "<expression> > 0"`,
  });
  const node = nodeOf(value);
  if (node === undefined) return undefined;
  const [type, n] = node;
  switch (type) {
    case 'A_Const': {
      const { kind } = constant(n);
      if (kind === 'null') return notBoolean('NULL');
      if (kind !== 'bool') return notBoolean('a constant value');
      return {
        code: 'sql-constant',
        severity: 'warning',
        message: 'the predicate is a constant, so it checks nothing; compare a column instead',
      };
    }
    case 'ColumnRef':
      return {
        code: 'sql-bare-column',
        severity: 'warning',
        message:
          'a bare column is a predicate only if the column is boolean; write "<column> IS TRUE" to say so, or compare it',
      };
    case 'A_Expr': {
      const op = (names(n.name) ?? []).join('.');
      if (n.kind === 'AEXPR_NULLIF') return notBoolean('the value of nullif()');
      return n.kind === 'AEXPR_OP' && VALUE_OPERATORS.has(op)
        ? notBoolean(`an arithmetic or text value (${op})`)
        : undefined;
    }
    case 'FuncCall': {
      const name = (names(n.funcname) ?? []).at(-1) ?? '';
      return BOOLEAN_FUNCTIONS.has(name) ? undefined : notBoolean(`the value of ${name}()`);
    }
    case 'CoalesceExpr':
      return notBoolean('the value of coalesce()');
    case 'MinMaxExpr':
      return notBoolean(`the value of ${n.op === 'IS_LEAST' ? 'least' : 'greatest'}()`);
    case 'SQLValueFunction':
      return notBoolean('a value of the clock or the session');
    case 'TypeCast': {
      const typeName = isObject(n.typeName) ? n.typeName : {};
      const last = ((names(typeName.names) ?? []).at(-1) ?? '').toUpperCase();
      if (last === 'INTERVAL' && nodeOf(n.arg)?.[0] === 'A_Const') return notBoolean('a constant value');
      return last === 'BOOLEAN' || last === 'BOOL' ? undefined : notBoolean(`a cast to ${last}`);
    }
    case 'CaseExpr': {
      const results = [
        ...list(n.args).map((arm) => nodeOf(arm)?.[1].result),
        ...(n.defresult === undefined ? [] : [n.defresult]),
      ];
      for (const result of results) {
        const kind = nodeOf(result)?.[0];
        const finding = kind === 'ColumnRef' ? undefined : topLevelKind(result);
        if (finding?.severity === 'error') return notBoolean('a CASE whose results are not boolean');
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function sortedEqual(a: string[], b: string[]): boolean {
  const [x, y] = [a.toSorted(), b.toSorted()];
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

export interface PredicateCheckOptions {
  /** The table's columns, when known (the server knows them): references to other names are refused. */
  columns?: Iterable<string>;
  /** PostgreSQL's grammar to read the text with (a dbt reader's); without it, the one loadPredicateParser loaded. */
  grammar?: PgGrammar;
}

const STATEMENT_REFUSAL: Finding = {
  code: 'sql-statement',
  severity: 'error',
  message:
    'the predicate adds clauses or statements (GROUP BY, ORDER BY, LIMIT, UNION, FOR UPDATE, …); a predicate is a single boolean expression, the server writes the query around it',
};

/**
 * Checks one customPredicates `sql` text, parsed by PostgreSQL's own grammar inside the query the server
 * runs (`… WHERE (<sql>)`). An empty list, or warnings only, means the server may run it. Each finding says
 * why it is refused and what to write instead, and where in the text when the parser says.
 */
export function checkPredicateSql(sql: string, opts: PredicateCheckOptions = {}): Finding[] {
  if (sql.trim() === '') {
    return [
      {
        code: 'sql-empty',
        severity: 'error',
        message: "the predicate is empty; write a boolean expression over the table's columns",
      },
    ];
  }
  const lexed = lexPredicate(sql);
  if (lexed.findings.length > 0) return lexed.findings;
  const columns = opts.columns ? new Set(opts.columns) : undefined;
  // Comparisons of columns and constants (amount >= 0, status IN ('open', 'closed')) need no parser.
  if (isPlainPredicate(sql, columns)) return [];
  return checkParsedPredicate(sql, lexed, columns, opts.grammar);
}

/** checkPredicateSql's answer from PostgreSQL's parser, for a text lexPredicate found nothing in. */
export function checkParsedPredicate(
  sql: string,
  lexed: LexedPredicate = lexPredicate(sql),
  columns?: ReadonlySet<string>,
  grammar: PgGrammar = loadedGrammar(),
): Finding[] {
  const parsed = parse(`${WRAPPER}${sql})`, grammar);
  if ('refusal' in parsed) {
    // Without the parentheses, a text that adds a clause (GROUP BY, UNION, …) parses: say that instead.
    const bare = parse(UNWRAPPED + sql, grammar);
    if ('statements' in bare && selectShape(bare.statements) !== baselineShape(grammar))
      return [STATEMENT_REFUSAL];
    const { offset } = parsed.refusal;
    const index =
      offset === undefined ? undefined : Math.min(Math.max(offset - WRAPPER.length, 0), sql.length);
    // The ")" the check adds after the text is not the user's: an error there is the end of their input.
    const message =
      index === sql.length
        ? parsed.refusal.message.replace('at or near ")"', 'at end of input')
        : parsed.refusal.message;
    return [
      {
        code: 'sql-syntax',
        severity: 'error',
        message: `this is not an expression PostgreSQL can read (${message.slice(0, 160)}); write one boolean expression such as "amount >= 0 AND status IN ('open', 'closed')"`,
        ...(index === undefined ? {} : { index }),
      },
    ];
  }
  if (selectShape(parsed.statements) !== baselineShape(grammar)) return [STATEMENT_REFUSAL];
  const select = nodeOf(parsed.statements[0]);
  const where = select?.[1].whereClause;
  const walker = new PredicateWalker(sql, columns);
  walker.walk(where);
  const findings = [...walker.findings];
  const lexedLiterals = lexed.stringLiterals.map((raw) => raw.replaceAll("''", "'"));
  if (!sortedEqual(walker.literals, lexedLiterals) && findings.length === 0) {
    findings.push({
      code: 'sql-ambiguous-literal',
      severity: 'error',
      message:
        'the checks and PostgreSQL split the string literals of this predicate differently; simplify the quoting (one literal per quoted text)',
    });
  }
  const kind = topLevelKind(where);
  if (kind) findings.push(kind);
  return findings;
}
