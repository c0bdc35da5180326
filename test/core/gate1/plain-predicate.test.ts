// The parser-free shortcut of checkPredicateSql (plain-predicate.ts) must never answer what PostgreSQL's
// parser would not: every text it accepts is checked here by the parser's checker, which must find nothing,
// over hand-picked near misses and thousands of generated texts mixing the plain subset with the tokens that
// read otherwise (keywords, typed and prefixed literals, casts, calls, odd numbers and operators).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { beforeAll, describe, expect, it } from 'vitest';
import { pgGrammar } from '../../../src/core/artifacts/pg-grammar.js';
import { PG_KEYWORDS } from '../../../src/core/gate1/pg-keywords.js';
import { isPlainPredicate } from '../../../src/core/gate1/plain-predicate.js';
import {
  checkParsedPredicate,
  checkPredicateSql,
  loadPredicateParser,
} from '../../../src/core/gate1/predicate-sql.js';
import { lexPredicate } from '../../../src/core/gate1/sql-lexer.js';

beforeAll(loadPredicateParser);

/** What the shortcut answers, checked against the parser: a plain text must draw no finding from it. */
function plainAndAgreed(sql: string, columns?: ReadonlySet<string>): boolean {
  const lexed = lexPredicate(sql);
  if (lexed.findings.length > 0) return false;
  const plain = isPlainPredicate(sql, columns);
  if (plain)
    expect({ sql, findings: checkParsedPredicate(sql, lexed, columns) }).toEqual({ sql, findings: [] });
  return plain;
}

describe('PostgreSQL keywords', () => {
  it('are the parser’s own list, each a keyword for its scanner', async () => {
    const wasm = readFileSync(createRequire(import.meta.url).resolve('libpg-query/wasm/libpg-query.wasm'));
    let at = wasm.indexOf(Buffer.from('abort\0absent\0'));
    expect(at).toBeGreaterThan(0);
    const fromParser: string[] = [];
    for (;;) {
      const end = wasm.indexOf(0, at);
      const word = wasm.subarray(at, end).toString('latin1');
      if (!/^[a-z_]+$/.test(word)) break;
      fromParser.push(word);
      at = end + 1;
    }
    expect([...PG_KEYWORDS]).toEqual(fromParser);
    const { scanSync } = await pgGrammar();
    const { tokens } = scanSync([...PG_KEYWORDS].join(' ')) as {
      tokens: Array<{ text: string; keywordName: string }>;
    };
    expect(tokens.filter((t) => t.keywordName === 'NO_KEYWORD').map((t) => t.text)).toEqual([]);
    expect(tokens).toHaveLength(PG_KEYWORDS.size);
  });
});

describe('plain predicates', () => {
  it('decides the common comparisons without the parser, as the parser would', () => {
    const plain = [
      'amount >= 0',
      "status IN ('open', 'closed')",
      'email IS NOT NULL',
      'end_date >= start_date',
      'quantity BETWEEN 1 AND 100',
      "NOT (status = 'void') OR amount <> 0",
      'a != 1 and (b < 2.5 or c IS NULL) AND d NOT IN (1, 2, 3)',
      'flag IS TRUE',
      'x NOT BETWEEN 0 AND 10 AND y IS NOT FALSE',
      "code = 'A-1;$`x'",
      'Amount\n>=\t0',
    ];
    for (const sql of plain) expect(plainAndAgreed(sql), sql).toBe(true);
  });

  it('leaves everything else to the parser', () => {
    const notPlain = [
      'amount',
      'amount + 1 > 0',
      'amount > -1',
      "lower(status) = 'x'",
      'amount::int > 0',
      "created_at > date '2020-01-01'",
      "code = x'1F'",
      "code = b'101'",
      'amount > 0x1F',
      'amount > 1e5',
      'amount > 1_000',
      'amount > 1abc',
      'amount > .5',
      'amount > 1.',
      "status = 'it''s'",
      "status = 'a' 'b'",
      'status = "Status"',
      'user = 1',
      'amount = interval',
      'current_date > due',
      'a = b = c',
      'a =< b',
      'a !=- 1',
      'a IN ()',
      'a IN (lower(b))',
      't.amount > 0',
      'amount > 0 AND',
      'amount > all',
      'amount IS DISTINCT FROM 1',
      "status LIKE 'a%'",
      "status ~ '^a'",
      `${'x'.repeat(64)} = 1`,
      `${'('.repeat(17)}a = 1${')'.repeat(17)}`,
      'é = 1',
    ];
    for (const sql of notPlain) expect(plainAndAgreed(sql), sql).toBe(false);
  });

  it('answers with the columns given as the parser’s checker does', () => {
    const columns = new Set(['amount', 'status']);
    expect(plainAndAgreed('Amount >= 0 AND status IS NOT NULL', columns)).toBe(true);
    expect(isPlainPredicate('total >= 0', columns)).toBe(false);
    expect(checkPredicateSql('total >= 0', { columns }).map((f) => f.code)).toEqual(['sql-unknown-column']);
  });

  it('never accepts a generated text the parser’s checker refuses or warns about', () => {
    let seed = 24;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const keywords = [...PG_KEYWORDS];
    const operand = () =>
      pick([
        () => pick(['amount', 'status', 'Code', 'due_date', 'x1', '_y', 'date', 'now', 'name']),
        () => pick(keywords),
        () => pick(['0', '42', '3.14', '007', '0x1F', '1e5', '1_000', '.5', '2.', '9999999999999999999999']),
        () => pick(["'open'", "''", "'a b'", "'it''s'", "E'x'", "x'1F'", "'a' 'b'", "'%;--'"]),
        () => `${pick(['lower', 'abs', 'pg_sleep', 'count'])}(${pick(['amount', '1', "'x'"])})`,
        () => `${pick(['amount', "'1'"])}::${pick(['int', 'text', 'regclass'])}`,
        () => pick(['TRUE', 'NULL', '-1', '+1', 't.amount', '"Q"']),
      ])();
    const comparison = () => pick(['=', '<>', '!=', '<', '<=', '>', '>=', '=<', '!=-', '||', '~', '+', '==']);
    const test = (depth: number): string =>
      pick([
        () => `${operand()} ${comparison()} ${operand()}`,
        () => `${operand()} IS ${pick(['', 'NOT '])}${pick(['NULL', 'TRUE', 'FALSE', 'UNKNOWN'])}`,
        () =>
          `${operand()} ${pick(['', 'NOT '])}IN (${Array.from({ length: 1 + Math.floor(random() * 3) }, operand).join(', ')})`,
        () => `${operand()} ${pick(['', 'NOT '])}BETWEEN ${operand()} AND ${operand()}`,
        () => (depth < 3 ? `(${expression(depth + 1)})` : `${operand()} = ${operand()}`),
        () => (depth < 3 ? `NOT ${test(depth + 1)}` : operand()),
      ])();
    const expression = (depth: number): string => {
      const parts = [test(depth)];
      while (random() < 0.4) parts.push(pick(['AND', 'OR', 'and', 'Or']), test(depth));
      return parts.join(pick([' ', '\n', '  ']));
    };
    let accepted = 0;
    for (let i = 0; i < 12_000; i += 1) if (plainAndAgreed(expression(0))) accepted += 1;
    // The generator reaches both sides: the check above ran on hundreds of accepted texts.
    expect(accepted).toBeGreaterThan(300);
    expect(accepted).toBeLessThan(11_000);
  });
});
