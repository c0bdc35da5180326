// SQL safety of a customPredicates entry: ONE boolean expression over the table's columns, run by the
// server as `SELECT … FROM <table> WHERE (<sql>)`. Everything here is an allow-list: a node type, an
// operator, a function or a cast target that is not listed is refused, with the reason.
import type NodeSqlParser from 'node-sql-parser/build/postgresql.js';
import type { Finding } from './finding.js';
import { checkRegex } from './regex-check.js';
import { lexPredicate } from './sql-lexer.js';

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

/** Cast targets a predicate may use (the parser's upper-case spelling). Excludes regclass, oid, regproc and friends, which read the catalog. */
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
  'UUID',
]);

const COMPARISON_OPERATORS = new Set(['=', '<>', '!=', '<', '<=', '>', '>=']);
const REGEX_OPERATORS = new Set(['~', '~*', '!~', '!~*']);
const PATTERN_OPERATORS = new Set(['LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE', 'SIMILAR TO', 'NOT SIMILAR TO']);
const LOGICAL_OPERATORS = new Set(['AND', 'OR']);
const VALUE_OPERATORS = new Set(['+', '-', '*', '/', '%', '||']);
const LIST_OPERATORS = new Set(['IN', 'NOT IN', 'BETWEEN', 'NOT BETWEEN']);
const IS_OPERATORS = new Set(['IS', 'IS NOT']);
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
/** Keywords the parser keeps inside function arguments: trim(both 'x' from a), position('a' in b). */
const ARGUMENT_KEYWORDS = new Set(['both', 'leading', 'trailing', 'from', 'in', 'for']);
/** Bare words PostgreSQL evaluates as functions of the session, not as columns. */
const SESSION_VALUE_WORDS = new Set([
  'current_user',
  'session_user',
  'user',
  'current_role',
  'current_schema',
  'current_catalog',
  'system_user',
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

interface AstNode {
  type?: string;
  [key: string]: unknown;
}

type SqlParserModule = typeof NodeSqlParser;
type Parser = InstanceType<SqlParserModule['Parser']>;
// node-sql-parser's PostgreSQL grammar (with big-integer) is a large module: the CLI loads it only for a
// file that has predicates to check (validateGate1Lazily); index.ts provides it at once to everyone else.
let sqlParser: SqlParserModule | undefined;
let parser: Parser | undefined;
let baseline: string | undefined;
const WRAPPER = 'SELECT 1 FROM t WHERE ';

/** Thrown by checkPredicateSql before node-sql-parser is provided (see loadPredicateParser). */
export class PredicateParserMissing extends Error {
  constructor() {
    super(
      'checkPredicateSql needs node-sql-parser: import core/gate1/index.js or await loadPredicateParser()',
    );
  }
}

export function providePredicateParser(module: SqlParserModule): void {
  sqlParser ??= module;
}

export async function loadPredicateParser(): Promise<void> {
  providePredicateParser((await import('node-sql-parser/build/postgresql.js')).default);
}

function astify(sql: string): AstNode | AstNode[] {
  parser ??= new (loadedParser().Parser)();
  return parser.astify(sql, { database: 'postgresql' }) as unknown as AstNode | AstNode[];
}

function loadedParser(): SqlParserModule {
  if (sqlParser === undefined) throw new PredicateParserMissing();
  return sqlParser;
}

/** The wrapper's AST without its WHERE, to prove a predicate added no clause (GROUP BY, UNION, LIMIT, …). */
function shapeWithoutWhere(ast: AstNode): string {
  return JSON.stringify({ ...ast, where: null });
}

function isObject(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class PredicateWalker {
  readonly findings: Finding[] = [];
  readonly literals: string[] = [];
  /** How many times longer than its input a value can get through nested replace() calls. */
  private growth = 1;

  constructor(
    private readonly sql: string,
    private readonly columns?: ReadonlySet<string>,
  ) {}

  /** `near`: a word of the predicate to point at (its first occurrence, any case). */
  private refuse(code: string, message: string, near?: string): void {
    const index = near ? this.sql.toLowerCase().indexOf(near.toLowerCase()) : -1;
    this.findings.push({ code, severity: 'error', message, ...(index >= 0 ? { index } : {}) });
  }

  walk(node: unknown): void {
    if (!isObject(node)) {
      this.refuse('sql-unsupported', 'this predicate uses a construct the checker cannot read; simplify it');
      return;
    }
    if ('ast' in node) {
      this.refuse(
        'sql-subquery',
        'subqueries (SELECT, EXISTS, ARRAY(SELECT …)) are not allowed: a predicate tests one row of the table by its own columns',
        'select',
      );
      return;
    }
    switch (node.type) {
      case 'binary_expr':
        return this.binary(node);
      case 'unary_expr':
        if (!['NOT', '-', '+'].includes(String(node.operator).toUpperCase())) {
          this.refuse('sql-operator-not-allowed', `the operator ${String(node.operator)} is not allowed`);
        }
        return this.walk(node.expr);
      case 'column_ref':
        return this.column(node);
      case 'number':
      case 'bigint':
      case 'bool':
      case 'null':
        return;
      case 'single_quote_string':
      case 'date': // typed literals: date '2020-01-01', time '…', timestamp '…'
      case 'time':
      case 'timestamp':
        this.literals.push(String(node.value));
        return;
      case 'function':
        return this.func(node);
      case 'cast':
        return this.cast(node);
      case 'case':
        for (const arm of Array.isArray(node.args) ? (node.args as AstNode[]) : []) {
          if (arm.type === 'when') this.walk(arm.cond);
          this.walk(arm.result);
        }
        if (node.expr) this.walk(node.expr);
        return;
      case 'interval':
        return this.walk(node.expr);
      case 'extract':
        return this.extract(node);
      case 'aggr_func':
        this.refuse(
          'sql-aggregate',
          `the aggregate ${String(node.name)}() is not allowed: a predicate is tested row by row; declare a fieldOverride or a baseline check for table-wide figures`,
          String(node.name),
        );
        return;
      case 'var':
        this.refuse(
          'sql-dollar',
          "parameters and dollar-quoted strings are not allowed; write string values as '…'",
        );
        return;
      default:
        this.refuse(
          'sql-unsupported',
          `this predicate uses a construct the checker does not allow (${String(node.type)}${typeof node.value === 'string' ? ` ${node.value.slice(0, 40)}` : ''}); use comparisons, IN, BETWEEN, LIKE, ~, CASE and the allowed functions`,
        );
    }
  }

  private binary(node: AstNode): void {
    const op = String(node.operator).toUpperCase();
    this.walk(node.left);
    if (LIST_OPERATORS.has(op)) {
      const list = node.right;
      if (isObject(list) && list.type === 'expr_list' && Array.isArray(list.value)) {
        for (const item of list.value) this.walk(item);
      } else {
        this.walk(list);
      }
      return;
    }
    if (IS_OPERATORS.has(op)) {
      const right = node.right;
      if (!isObject(right) || (right.type !== 'null' && right.type !== 'bool')) {
        this.refuse(
          'sql-unsupported',
          'only IS [NOT] NULL, IS [NOT] TRUE and IS [NOT] FALSE are allowed; for IS DISTINCT FROM write the comparison out with = and IS NULL',
        );
      }
      return;
    }
    if (
      !COMPARISON_OPERATORS.has(op) &&
      !REGEX_OPERATORS.has(op) &&
      !PATTERN_OPERATORS.has(op) &&
      !LOGICAL_OPERATORS.has(op) &&
      !VALUE_OPERATORS.has(op)
    ) {
      this.refuse(
        'sql-operator-not-allowed',
        `the operator ${op} is not allowed; use comparisons, AND/OR/NOT, IN, BETWEEN, LIKE/ILIKE, ~, IS NULL or arithmetic`,
      );
    }
    if (REGEX_OPERATORS.has(op)) this.regexOperand(node.right);
    this.walk(node.right);
  }

  /** The regex on the right of `~` is checked like a patternChecks regex. */
  private regexOperand(right: unknown): void {
    if (!isObject(right) || right.type !== 'single_quote_string') return;
    const raw = String(right.value);
    const literalStart = this.sql.indexOf(`'${raw}'`) + 1;
    for (const p of checkRegex(raw.replaceAll("''", "'"))) {
      const quotesBefore = raw.replaceAll("''", "'").slice(0, p.index).split("'").length - 1;
      this.findings.push({
        code: p.code,
        severity: p.severity,
        message: `in the regex '${raw}': ${p.message}`,
        ...(literalStart > 0 ? { index: literalStart + p.index + quotesBefore } : {}),
      });
    }
  }

  private column(node: AstNode): void {
    const column = node.column as AstNode | string | undefined;
    const expr = isObject(column) ? (column.expr as AstNode | undefined) : undefined;
    if (node.table || node.schema) {
      this.refuse(
        'sql-qualified-name',
        `"${String(node.table)}.…" names another table or schema; a predicate refers to the table's own columns by their plain names`,
        String(node.table),
      );
      return;
    }
    if (!expr || typeof expr.value !== 'string' || node.array_index || node.options) {
      this.refuse(
        'sql-unsupported',
        'this column reference uses a form the checker does not allow; write the plain column name',
      );
      return;
    }
    const quoted = expr.type === 'double_quote_string';
    const name = quoted ? expr.value : expr.value.toLowerCase();
    if (!quoted && SESSION_VALUE_WORDS.has(name)) {
      this.refuse(
        'sql-session-value',
        `${name} is a value of the database session, not a column; a predicate tests the table's own columns`,
        name,
      );
      return;
    }
    if (this.columns && !this.columns.has(name)) {
      this.refuse('sql-unknown-column', `the table has no column ${JSON.stringify(name)}`, name);
    }
  }

  private func(node: AstNode): void {
    const nameNode = node.name as { name?: AstNode[]; schema?: AstNode } | undefined;
    const parts = nameNode?.name ?? [];
    const first = parts[0];
    const raw = typeof first?.value === 'string' ? first.value : '';
    const name = raw.toLowerCase();
    const args = node.args as AstNode | undefined;
    const values = isObject(args) && Array.isArray(args.value) ? (args.value as AstNode[]) : [];
    if (values.some((arg) => isObject(arg) && 'ast' in arg)) {
      this.walk(values.find((arg) => 'ast' in arg));
      return;
    }
    if (name === 'not' && first?.type === 'default' && values.length === 1) {
      this.walk(values[0]); // the parser reads `NOT (x)` as a call
      return;
    }
    if (nameNode?.schema || parts.length !== 1) {
      const schema = typeof nameNode?.schema?.value === 'string' ? `${nameNode.schema.value}.` : '';
      this.refuse(
        'sql-function-not-allowed',
        `${schema}${raw}() is schema-qualified; only the plain names of allowed functions may be called${dangerHint(name)}`,
        schema || raw,
      );
      return;
    }
    if (first?.type === 'double_quote_string') {
      this.refuse(
        'sql-function-not-allowed',
        `the quoted function name "${raw}" is not allowed; call allowed functions by their plain name`,
        `"${raw}"`,
      );
      return;
    }
    if (!ALLOWED_FUNCTIONS.has(name)) {
      this.refuse(
        'sql-function-not-allowed',
        `${raw}() is not on the allow-list of functions${dangerHint(name)}; use comparisons and the allowed functions (lower, upper, length, trim, substring, coalesce, date_trunc, now, … listed in the README)`,
        raw,
      );
      return;
    }
    if (node.over) {
      this.refuse(
        'sql-window',
        'window functions (OVER …) are not allowed: a predicate tests one row at a time',
      );
    }
    this.sizeBound(name, raw, values);
    for (const arg of values) {
      if (arg.type === 'origin' && ARGUMENT_KEYWORDS.has(String(arg.value).toLowerCase())) continue;
      this.walk(arg);
    }
  }

  /** Refuses an argument that lets one call build a value of unbounded size (see MAX_BUILT_LENGTH). */
  private sizeBound(name: string, raw: string, values: AstNode[]): void {
    const lengthAt = LENGTH_ARGUMENT.get(name);
    const length = lengthAt === undefined ? undefined : values[lengthAt];
    if (length) {
      const literal = length.type === 'number' && Number.isInteger(length.value);
      if (!literal || Number(length.value) > MAX_BUILT_LENGTH) {
        this.refuse(
          'sql-size-bound',
          `${raw}()'s length must be a whole-number literal of at most ${MAX_BUILT_LENGTH}${literal || length.type === 'bigint' ? ` (got ${String(length.value)})` : ', not an expression'}: a predicate may not build values longer than ${MAX_BUILT_LENGTH} characters`,
          raw,
        );
      }
      return;
    }
    if (name !== 'replace') return;
    // replace() multiplies a value's length by its replacement's (the pattern is at least one
    // character, or nothing is replaced), and nested calls multiply again.
    const replacement = values[2];
    if (!replacement || replacement.type !== 'single_quote_string') {
      this.refuse(
        'sql-size-bound',
        `${raw}()'s replacement must be a string literal: a column or expression there could make the value grow without bound`,
        raw,
      );
      return;
    }
    const before = this.growth;
    this.growth *= Math.max(1, String(replacement.value).replaceAll("''", "'").length);
    if (this.growth > MAX_BUILT_LENGTH && before <= MAX_BUILT_LENGTH) {
      this.refuse(
        'sql-size-bound',
        `the ${raw}() calls of this predicate can make a value up to ${this.growth} times longer; at most ${MAX_BUILT_LENGTH} times is allowed (use shorter replacement texts or fewer nested calls)`,
        raw,
      );
    }
  }

  private cast(node: AstNode): void {
    for (const target of Array.isArray(node.target) ? (node.target as AstNode[]) : []) {
      const base = String(target.dataType ?? '').toUpperCase();
      const suffix = Array.isArray(target.suffix) ? (target.suffix as unknown[]).join(' ').toUpperCase() : '';
      const type = base === 'TIMESTAMP' && suffix === 'WITH TIME ZONE' ? 'TIMESTAMPTZ' : base;
      const plainSuffix = suffix === '' || suffix === 'WITH TIME ZONE' || suffix === 'WITHOUT TIME ZONE';
      if (!ALLOWED_CAST_TYPES.has(type) || !plainSuffix || target.array) {
        this.refuse(
          'sql-cast-not-allowed',
          `casting to ${[base, suffix].filter(Boolean).join(' ')}${target.array ? '[]' : ''} is not allowed (casts to regclass, oid and other catalog types read the database catalog); cast to a plain type such as text, integer, numeric, date or timestamp`,
          base,
        );
      }
    }
    this.walk(node.expr);
  }

  private extract(node: AstNode): void {
    const args = node.args as AstNode | undefined;
    const field = String(args?.field ?? '').toLowerCase();
    if (!EXTRACT_FIELDS.has(field)) {
      this.refuse(
        'sql-unsupported',
        `EXTRACT(${field} FROM …) is not allowed; use one of ${[...EXTRACT_FIELDS].join(', ')}`,
      );
    }
    this.walk(args?.source);
  }
}

/** A reason when the top-level expression surely does not yield a boolean; a warning when it may not. */
function topLevelKind(node: AstNode): Finding | undefined {
  const notBoolean = (what: string): Finding => ({
    code: 'sql-not-boolean',
    severity: 'error',
    message: `the predicate is ${what}, not a boolean expression; compare it, e.g. "<expression> IS NOT NULL" or "<expression> > 0"`,
  });
  switch (node.type) {
    case 'number':
    case 'single_quote_string':
    case 'interval':
      return notBoolean('a constant value');
    case 'null':
      return notBoolean('NULL');
    case 'bool':
      return {
        code: 'sql-constant',
        severity: 'warning',
        message: 'the predicate is a constant, so it checks nothing; compare a column instead',
      };
    case 'column_ref':
      return {
        code: 'sql-bare-column',
        severity: 'warning',
        message:
          'a bare column is a predicate only if the column is boolean; write "<column> IS TRUE" to say so, or compare it',
      };
    case 'binary_expr':
      return VALUE_OPERATORS.has(String(node.operator)) || String(node.operator).startsWith('->')
        ? notBoolean(`an arithmetic or text value (${String(node.operator)})`)
        : undefined;
    case 'function': {
      const name = String((node.name as { name?: AstNode[] })?.name?.[0]?.value ?? '').toLowerCase();
      return BOOLEAN_FUNCTIONS.has(name) ? undefined : notBoolean(`the value of ${name}()`);
    }
    case 'cast': {
      const targets = (node.target as AstNode[] | undefined) ?? [];
      const last = String(targets[targets.length - 1]?.dataType ?? '').toUpperCase();
      return last === 'BOOLEAN' || last === 'BOOL' ? undefined : notBoolean(`a cast to ${last}`);
    }
    case 'case': {
      const arms = Array.isArray(node.args) ? (node.args as AstNode[]) : [];
      for (const arm of arms) {
        const result = arm.result as AstNode | undefined;
        const finding =
          result && result.type !== 'bool' && result.type !== 'column_ref' ? topLevelKind(result) : undefined;
        if (finding?.severity === 'error') return notBoolean('a CASE whose results are not boolean');
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function sortedEqual(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);
}

export interface PredicateCheckOptions {
  /** The table's columns, when known (the server knows them): references to other names are refused. */
  columns?: Iterable<string>;
}

/**
 * Checks one customPredicates `sql` text. An empty list, or warnings only, means the server may run it
 * as `WHERE (<sql>)`. Each finding says why it is refused and what to write instead.
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
  loadedParser(); // outside the try below, which reads any error as a syntax error
  const lexed = lexPredicate(sql);
  if (lexed.findings.length > 0) return lexed.findings;

  let ast: AstNode | AstNode[];
  try {
    ast = astify(WRAPPER + sql);
  } catch (err) {
    const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
    return [
      {
        code: 'sql-syntax',
        severity: 'error',
        message: `this is not an expression the checker can read (${message.slice(0, 160)}); write one boolean expression such as "amount >= 0 AND status IN ('open', 'closed')"`,
      },
    ];
  }
  const statements = Array.isArray(ast) ? ast : [ast];
  const select = statements[0];
  baseline ??= shapeWithoutWhere(astify(`${WRAPPER}true`) as AstNode);
  if (statements.length !== 1 || !select || shapeWithoutWhere(select) !== baseline) {
    return [
      {
        code: 'sql-statement',
        severity: 'error',
        message:
          'the predicate adds clauses or statements (GROUP BY, ORDER BY, LIMIT, UNION, …); a predicate is a single boolean expression, the server writes the query around it',
      },
    ];
  }
  const where = select.where as AstNode;
  const walker = new PredicateWalker(sql, opts.columns ? new Set(opts.columns) : undefined);
  walker.walk(where);
  const findings = [...walker.findings];
  if (!sortedEqual(walker.literals, lexed.stringLiterals) && findings.length === 0) {
    findings.push({
      code: 'sql-ambiguous-literal',
      severity: 'error',
      message:
        'PostgreSQL and the checker split the string literals of this predicate differently; simplify the quoting',
    });
  }
  const kind = topLevelKind(where);
  if (kind) findings.push(kind);
  return findings;
}
