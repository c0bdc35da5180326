// A plan tells a held definition or contract from the declared one without writing either as JSON
// (src/core/same-json.ts, sameDefinition): the answer must be JSON.stringify's, for any value.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { definitionKey, sameDefinition } from '../../src/core/artifacts/index.js';
import type { DefinitionSummary } from '../../src/core/artifacts/index.js';
import { sameJson } from '../../src/core/same-json.js';

const odd = fc.constantFrom(
  undefined,
  null,
  Number.NaN,
  -0,
  0,
  Infinity,
  '',
  'a',
  () => 1,
  [undefined],
  [null],
);
const value = fc.oneof(odd, fc.anything(), fc.array(fc.oneof(odd, fc.string(), fc.integer())));

describe('sameJson', () => {
  it('is JSON.stringify(a) === JSON.stringify(b)', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
        expect(sameJson(a, a)).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('an array element left out of an object is written null', () => {
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson([() => 1], [null])).toBe(true);
    expect(sameJson([Number.NaN], [null])).toBe(true);
    expect(sameJson([[1, undefined]], [[1, null]])).toBe(true);
    expect(sameJson(['a', 'b'], ['a', 'b', 'c'])).toBe(false);
    expect(sameJson({ toJSON: () => [1] }, [1])).toBe(true);
  });
});

describe('sameDefinition', () => {
  const text = fc.constantFrom('id', 'ID', ' bigint', 'BIGINT ', 'bigint', 's.t.c', 'analytics.orders', '');
  const member = fc.oneof(text, fc.constantFrom(undefined, null, 0, -0, 1, Number.NaN, true, false));
  const column = fc.record(
    { name: text, type: text, required: member, references: member, min: member, max: member, extra: member },
    { requiredKeys: ['name'] },
  );
  const summary = fc.record(
    { table: text, source: text, columns: fc.array(column, { maxLength: 3 }), decisionContext: member },
    { requiredKeys: ['table', 'source', 'columns'] },
  ) as fc.Arbitrary<DefinitionSummary>;

  it('is definitionKey(a) === definitionKey(b)', () => {
    fc.assert(
      fc.property(summary, summary, (a, b) => {
        expect(sameDefinition(a, b)).toBe(definitionKey(a) === definitionKey(b));
      }),
      { numRuns: 5_000 },
    );
  });

  it('types trimmed and in lower case, required false unless set, other members ignored', () => {
    const held = { table: 't', source: 's.t', columns: [{ name: 'id', type: 'BIGINT ', required: false }] };
    const declared = { table: 't', source: 's.t', columns: [{ name: 'id', type: ' bigint', extra: 1 }] };
    expect(sameDefinition(held, declared as DefinitionSummary)).toBe(true);
    expect(sameDefinition(held, { ...held, decisionContext: 'why' })).toBe(false);
  });
});
