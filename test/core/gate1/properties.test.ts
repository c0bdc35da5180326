// 10,000 generated and mutated inputs in all: the validator never throws, it only reports diagnostics,
// and every diagnostic is well formed (a position inside the file, a known severity, a stable code).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Diagnostic } from '../../../src/core/gate1/index.js';
import {
  checkPredicateSql,
  checkRegex,
  GATE1_SEVERITIES,
  validateGate1,
} from '../../../src/core/gate1/index.js';

const RUNS = { generated: 3500, mutated: 3500, sql: 1500, regex: 1500 }; // 10,000 in total

const sqlPieces = [
  'amount',
  '>',
  '0',
  'AND',
  'OR',
  'NOT',
  '(',
  ')',
  "'x'",
  "'it''s'",
  ';',
  '--',
  '/*',
  '$$',
  '$1',
  "E'\\''",
  'U&"a"',
  '"col"',
  'lower(',
  'pg_sleep(',
  'SELECT',
  'FROM',
  'IN',
  'BETWEEN',
  'IS NULL',
  '::regclass',
  '::int',
  '~',
  "'^a+$'",
  'CASE WHEN',
  'THEN',
  'ELSE',
  'END',
  ',',
  '\\',
  '\n',
  'now()',
  'count(*)',
  '.',
];
const regexPieces = [
  'a',
  '\\',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '2',
  ',',
  '*',
  '+',
  '?',
  '|',
  '^',
  '$',
  '-',
  '(?',
  '<',
  '>',
  '=',
  '!',
  ':',
  '\\d',
  '\\b',
  '\\p{L}',
  '[:alpha:]',
  '(?i)',
  '{300}',
  '\\1',
  '\\x41',
  '#',
  ' ',
  '\n',
];
const fromPieces = (pieces: string[]) =>
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.array(fc.constantFrom(...pieces), { maxLength: 12 }).map((p) => p.join(' ')),
  );

const anyValue = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);
const severity = fc.oneof(fc.constantFrom(...GATE1_SEVERITIES), fc.string({ maxLength: 10 }), anyValue);
const name = fc.oneof(fc.constantFrom('a', 'b', 'email_ok'), fc.string({ maxLength: 20 }), anyValue);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

const patternCheck = fc.record(
  {
    name,
    column: fc.oneof(fc.string({ maxLength: 70 }), anyValue),
    regex: fc.oneof(fromPieces(regexPieces), anyValue),
    severity,
  },
  { requiredKeys: [] },
);
const customPredicate = fc.record(
  { name, sql: fc.oneof(fromPieces(sqlPieces), anyValue), severity },
  { requiredKeys: [] },
);
const rate = fc.oneof(fc.double({ min: -2, max: 3, noNaN: true }), anyValue);
const fieldOverride = fc.record(
  { field: name, nullRate: fc.oneof(fc.record({ warn: rate, fail: rate }, { requiredKeys: [] }), anyValue) },
  { requiredKeys: [] },
);
const documentValue = fc.record(
  {
    patternChecks: maybe(fc.oneof(fc.array(patternCheck, { maxLength: 4 }), anyValue)),
    customPredicates: maybe(fc.oneof(fc.array(customPredicate, { maxLength: 4 }), anyValue)),
    fieldOverrides: maybe(fc.oneof(fc.array(fieldOverride, { maxLength: 3 }), anyValue)),
    extra: maybe(anyValue),
  },
  { requiredKeys: [] },
);
const documentText = documentValue.map((doc) => stringify(doc, { lineWidth: 0 }));

const yamlNoise = fc.oneof(
  fc.constantFrom(
    ':',
    '-',
    '- ',
    '[',
    ']',
    '{',
    '}',
    "'",
    '"',
    '|',
    '>',
    '&a',
    '*a',
    '!!str',
    '#',
    '\n',
    '\t',
    '  ',
    '---',
    '? ',
    '%YAML',
  ),
  fc.string({ maxLength: 4 }),
);
const mutation = fc.record({ at: fc.nat(), length: fc.nat({ max: 8 }), insert: yamlNoise });
const mutatedText = fc
  .tuple(documentText, fc.array(mutation, { minLength: 1, maxLength: 4 }))
  .map(([text, edits]) =>
    edits.reduce((t, e) => {
      const at = t.length === 0 ? 0 : e.at % (t.length + 1);
      return t.slice(0, at) + e.insert + t.slice(at + e.length);
    }, text),
  );

function expectWellFormed(text: string, diagnostics: Diagnostic[], document: unknown): void {
  const lines = text.split('\n').length;
  for (const d of diagnostics) {
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.line).toBeLessThanOrEqual(lines + 1);
    expect(d.column).toBeGreaterThanOrEqual(1);
    expect(['error', 'warning']).toContain(d.severity);
    expect(d.code).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(d.message.length).toBeGreaterThan(0);
    expect(d.file).toBe('gate1.yml');
  }
  expect(document !== undefined).toBe(diagnostics.every((d) => d.severity !== 'error'));
}

describe('validateGate1 never throws, it reports', () => {
  it(`on ${RUNS.generated} generated documents`, () => {
    fc.assert(
      fc.property(documentText, (text) => {
        const { diagnostics, document } = validateGate1(text, { fileName: 'gate1.yml' });
        expectWellFormed(text, diagnostics, document);
      }),
      { numRuns: RUNS.generated },
    );
  });

  it(`on ${RUNS.mutated} mutated documents`, () => {
    fc.assert(
      fc.property(mutatedText, (text) => {
        const { diagnostics, document } = validateGate1(text, { fileName: 'gate1.yml' });
        expectWellFormed(text, diagnostics, document);
      }),
      { numRuns: RUNS.mutated },
    );
  });

  it(`checkPredicateSql on ${RUNS.sql} generated predicates`, () => {
    fc.assert(
      fc.property(fromPieces(sqlPieces), (sql) => {
        for (const f of checkPredicateSql(sql)) expect(f.code).toMatch(/^(sql|regex)-[a-z-]+$/);
      }),
      { numRuns: RUNS.sql },
    );
  });

  it(`checkRegex on ${RUNS.regex} generated regexes`, () => {
    fc.assert(
      fc.property(fromPieces(regexPieces), (re) => {
        for (const p of checkRegex(re)) {
          expect(p.index).toBeGreaterThanOrEqual(0);
          expect(p.index).toBeLessThanOrEqual(re.length);
        }
      }),
      { numRuns: RUNS.regex },
    );
  });

  it('a valid generated document comes back as the document', () => {
    const text = stringify({
      patternChecks: [{ name: 'p', column: 'email', regex: '^[^@]+@', severity: 'HARD_FAIL' }],
      customPredicates: [{ name: 'c', sql: 'amount > 0', severity: 'WARN' }],
      fieldOverrides: [{ field: 'email', nullRate: { warn: 0.1, fail: 0.2 } }],
    });
    const result = validateGate1(text, { fileName: 'gate1.yml' });
    expect(result.diagnostics).toEqual([]);
    expect(result.document?.customPredicates?.[0]?.sql).toBe('amount > 0');
  });
});
