// `gds plan` reads each model's JSON artifact from the value the dbt reader wrote it from (parseWrittenJson,
// src/core/dbt/declared-artifact.ts), not from the text: the same artifact and the same refusal, at the same
// line and column, as `gds push` parsing the file.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseArtifact, parseWrittenJson } from '../../../src/core/artifacts/index.js';
import { changedArtifact, declaredArtifact, writtenValue } from '../../../src/core/dbt/declared-artifact.js';

const fileName = 'dbt--shop--orders.json';

async function bothWays(value: Record<string, unknown>) {
  const { content } = declaredArtifact('orders.json', value);
  return {
    written: await parseWrittenJson({ fileName, content }, value),
    parsed: await parseArtifact({ fileName, content }),
  };
}

const orders = (change: Record<string, unknown> = {}) => ({
  table: 'orders',
  source: 'analytics.orders',
  decision_context: 'revenue',
  columns: [
    { name: 'id', type: ' BIGINT ', required: true, references: 'analytics.customers.id' },
    { name: 'amount', type: 'numeric', min: 0, max: 10 },
  ],
  ...change,
});

describe('a JSON artifact read from the value it was written from', () => {
  it.each([
    ['a valid declaration', orders()],
    ['a map of columns', orders({ columns: { id: 'bigint', label: { type: 'text', required: false } } })],
    ['no source', orders({ source: undefined })],
    ['a table name that is no name', orders({ table: 'orders; drop' })],
    ['both table and name, differing', orders({ name: 'other' })],
    ['no columns', orders({ columns: [] })],
    ['a column without a type', orders({ columns: [{ name: 'id' }] })],
    ['an empty type', orders({ columns: [{ name: 'id', type: '  ' }] })],
    [
      'a column twice',
      orders({
        columns: [
          { name: 'id', type: 'int' },
          { name: 'id', type: 'int' },
        ],
      }),
    ],
    ['a reference that is no column', orders({ columns: [{ name: 'id', type: 'int', references: 'x' }] })],
    ['min above max', orders({ columns: [{ name: 'id', type: 'int', min: 2, max: 1 }] })],
    ['a required that is text', orders({ columns: [{ name: 'id', type: 'int', required: 'yes' }] })],
    ['a source that is no schema.table', orders({ source: 'orders' })],
    ['a decision context that is a number', orders({ decision_context: 7 })],
    [
      'a dbt manifest',
      { metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' } },
    ],
  ])('%s: what push reads from the text, at the same position', async (_name, value) => {
    const { written, parsed } = await bothWays(value);
    expect(written).toEqual(parsed);
  });

  it('any value of a declaration of table, source and columns', async () => {
    const text = fc.oneof(fc.constantFrom('id', 'Amount', 'a.b', ' int ', '', 'x'.repeat(70)), fc.string());
    const column = fc.record(
      {
        name: text,
        type: fc.option(text, { nil: undefined }),
        required: fc.option(fc.oneof(fc.boolean(), text), { nil: undefined }),
        references: fc.option(fc.constantFrom('s.t.c', 's.t', 'S.T.C'), { nil: undefined }),
        min: fc.option(fc.integer(), { nil: undefined }),
      },
      { requiredKeys: ['name'] },
    );
    const value = fc.record({ table: text, source: text, columns: fc.array(column, { maxLength: 4 }) });
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        const { written, parsed } = await bothWays(v);
        expect(written).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
  });

  it('is not trusted once the artifact holds other text: that text is what is read', () => {
    const artifact = declaredArtifact('orders.json', orders());
    expect(writtenValue(artifact)).toEqual(orders());
    const edited = { ...artifact, content: JSON.stringify(orders({ decision_context: 'edited' })) };
    expect(writtenValue(edited)).toBeUndefined();
    const changed = changedArtifact(edited, (value) => ({ ...value, source: 'other.orders' }));
    expect(JSON.parse(changed.content)).toEqual(
      orders({ decision_context: 'edited', source: 'other.orders' }),
    );
    expect(writtenValue(changed)).toEqual(JSON.parse(changed.content));
  });
});
