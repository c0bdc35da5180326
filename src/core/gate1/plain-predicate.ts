// The predicates that are safe on sight: comparisons of plain column names, numbers and simple strings, joined
// by AND, OR and NOT, with IN (…), BETWEEN … AND … and IS [NOT] NULL/TRUE/FALSE. For such a text PostgreSQL's
// grammar can only build nodes that checkPredicateSql allows (A_Expr comparisons, BoolExpr, NullTest,
// BooleanTest, ColumnRef, A_Const), so the checker's answer is known without its parser: no finding. Deciding
// it here spares `gds gate validate` PostgreSQL's parser (its WebAssembly: about 35 ms of CPU and 15 MiB of
// memory per process, measured). Anything else, or anything in doubt, answers false and the full checker
// (PostgreSQL's parser) reads the text: this is a shortcut for an answer, never a second set of rules.
// test/core/gate1/plain-predicate.test.ts checks every text this accepts against the parser's checker.
import { PG_KEYWORDS } from './pg-keywords.js';

type Token =
  { kind: 'word'; text: string } | { kind: 'number' | 'string' | 'operator' | '(' | ')' | ','; text: string };

/** The longest identifier PostgreSQL keeps whole (NAMEDATALEN - 1): a longer one is truncated. */
const MAX_NAME = 63;
/** Bounds that keep the shortcut far from the parser's own limits (stack depth, very long lists). */
const MAX_TOKENS = 200;
const MAX_DEPTH = 16;
const COMPARISONS = new Set(['=', '<>', '!=', '<', '<=', '>', '>=']);
/** Every character PostgreSQL's lexer reads into an operator (a run of them is one operator token). */
const OPERATOR_CHARS = /[+\-*/<>=~!@#%^&|`?]/;

// Sticky: each reads at its lastIndex only, so the text is read in place (no rest of it sliced per token).
const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /[0-9]+(?:\.[0-9]+)?/y;
const STRING = /'[ !#-&(-[\]-~]*'/y;
/** After a word: a quote, `$` or `&` (a typed or prefixed literal). */
const AFTER_WORD = /['"$&]/y;
/** After a number: what makes it read otherwise in PostgreSQL. */
const AFTER_NUMBER = /[A-Za-z0-9_.$'"]/y;

/** Whether the sticky `pattern` matches `sql` at `at`; its lastIndex is then where the match ends. */
function matchesAt(pattern: RegExp, sql: string, at: number): boolean {
  pattern.lastIndex = at;
  return pattern.test(sql);
}

/** The tokens of a plain predicate, or undefined when a character or token is outside the plain subset. */
function tokens(sql: string): Token[] | undefined {
  const out: Token[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] ?? '';
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i += 1;
      continue;
    }
    let end: number;
    if (matchesAt(WORD, sql, i)) {
      end = WORD.lastIndex;
      // A word right before a quote is a typed or prefixed literal (E'…', B'…', date '…' is spaced): refused.
      if (matchesAt(AFTER_WORD, sql, end)) return undefined;
      out.push({ kind: 'word', text: sql.slice(i, end) });
    } else if (matchesAt(NUMBER, sql, i)) {
      end = NUMBER.lastIndex;
      // 0x1F, 1e5, 1_000, 1abc and 1.2.3 read otherwise (or fail) in PostgreSQL: refused.
      if (matchesAt(AFTER_NUMBER, sql, end)) return undefined;
      out.push({ kind: 'number', text: sql.slice(i, end) });
    } else if (matchesAt(STRING, sql, i)) {
      end = STRING.lastIndex;
      // Printable ASCII without quotes or backslashes inside, and not followed by another quote ('a''b').
      if (sql[end] === "'") return undefined;
      out.push({ kind: 'string', text: sql.slice(i, end) });
    } else if (OPERATOR_CHARS.test(c)) {
      end = i;
      while (end < sql.length && OPERATOR_CHARS.test(sql[end] ?? '')) end += 1;
      out.push({ kind: 'operator', text: sql.slice(i, end) });
    } else if (c === '(' || c === ')' || c === ',') {
      out.push({ kind: c, text: c });
      end = i + 1;
    } else {
      return undefined;
    }
    i = end;
    if (out.length > MAX_TOKENS) return undefined;
  }
  return out;
}

/** A recursive-descent reader of the plain subset: true when every token is read and nothing is left. */
class PlainReader {
  private at = 0;
  private depth = 0;

  constructor(
    private readonly list: Token[],
    private readonly columns: ReadonlySet<string> | undefined,
  ) {}

  read(): boolean {
    return this.disjunction() && this.at === this.list.length;
  }

  private peek(): Token | undefined {
    return this.list[this.at];
  }

  private keyword(word: string): boolean {
    const t = this.peek();
    if (t?.kind !== 'word' || t.text.toLowerCase() !== word) return false;
    this.at += 1;
    return true;
  }

  private punctuation(kind: '(' | ')' | ','): boolean {
    if (this.peek()?.kind !== kind) return false;
    this.at += 1;
    return true;
  }

  private disjunction(): boolean {
    if (!this.conjunction()) return false;
    while (this.keyword('or')) if (!this.conjunction()) return false;
    return true;
  }

  private conjunction(): boolean {
    if (!this.negation()) return false;
    while (this.keyword('and')) if (!this.negation()) return false;
    return true;
  }

  private negation(): boolean {
    if (this.keyword('not')) return this.negation();
    return this.test();
  }

  /** ( disjunction ) | operand comparison operand | operand [NOT] IN (…) | [NOT] BETWEEN … | IS [NOT] … */
  private test(): boolean {
    if (this.punctuation('(')) {
      this.depth += 1;
      if (this.depth > MAX_DEPTH || !this.disjunction() || !this.punctuation(')')) return false;
      this.depth -= 1;
      return true;
    }
    if (!this.operand()) return false;
    const t = this.peek();
    if (t?.kind === 'operator') {
      this.at += 1;
      return COMPARISONS.has(t.text) && this.operand();
    }
    if (this.keyword('is')) {
      this.keyword('not');
      return this.keyword('null') || this.keyword('true') || this.keyword('false');
    }
    this.keyword('not');
    if (this.keyword('between')) return this.operand() && this.keyword('and') && this.operand();
    if (this.keyword('in')) {
      if (!this.punctuation('(') || !this.operand()) return false;
      while (this.punctuation(',')) if (!this.operand()) return false;
      return this.punctuation(')');
    }
    return false;
  }

  /** A column (a word that is no keyword of PostgreSQL's, of the table when its columns are known), a number or a string. */
  private operand(): boolean {
    const t = this.peek();
    if (t === undefined) return false;
    if (t.kind === 'number' || t.kind === 'string') {
      this.at += 1;
      return true;
    }
    if (t.kind !== 'word') return false;
    const name = t.text.toLowerCase();
    if (name.length > MAX_NAME || PG_KEYWORDS.has(name)) return false;
    if (this.columns !== undefined && !this.columns.has(name)) return false;
    this.at += 1;
    return true;
  }
}

/**
 * Whether `sql` (already through lexPredicate without a finding) is a plain predicate, for which the checker
 * finds nothing: see the head of this file. `columns`: the table's columns when known (a name outside them
 * is left to the checker, which names it).
 */
export function isPlainPredicate(sql: string, columns?: ReadonlySet<string>): boolean {
  const list = tokens(sql);
  return list !== undefined && list.length > 0 && new PlainReader(list, columns).read();
}
