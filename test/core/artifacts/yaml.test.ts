import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import type { ParseResult } from '../../../src/core/artifacts/index.js';

const lines = (...rows: string[]) => rows.join('\n') + '\n';
const parseYaml = (content: string, fileName = 'orders.yml'): Promise<ParseResult> =>
  parseArtifact({ fileName, content });

describe('YAML artifacts: what a file declares', () => {
  it('table, a list of column names and objects, decision_context and source', async () => {
    const content = lines(
      'table: orders',
      'source: analytics.orders',
      'decision_context: |',
      '  Drives the weekly pricing review.',
      'columns:',
      '  - id',
      '  - name: amount',
      '    type: numeric(12,2)',
      '    required: true',
      '  - name: note',
      '    required: false',
    );
    expect(await parseYaml(content)).toEqual({
      ok: true,
      artifact: {
        kind: 'yaml',
        mimeType: 'yaml',
        table: 'orders',
        source: { schema: 'analytics', table: 'orders' },
        decisionContext: 'Drives the weekly pricing review.\n',
        columns: [
          { name: 'id' },
          { name: 'amount', type: 'numeric(12,2)', required: true },
          { name: 'note', required: false },
        ],
      },
    });
  });

  it('name and fields as a map of column name to type, to an object, or to nothing (.yaml)', async () => {
    const content = lines(
      'name: customers',
      'fields:',
      '  id: bigint',
      '  email:',
      '    type: text',
      '    required: true',
      '  nickname:',
    );
    expect(await parseYaml(content, 'customers.YAML')).toEqual({
      ok: true,
      artifact: {
        kind: 'yaml',
        mimeType: 'yaml',
        table: 'customers',
        columns: [
          { name: 'id', type: 'bigint' },
          { name: 'email', type: 'text', required: true },
          { name: 'nickname' },
        ],
      },
    });
  });

  it('a flow-style list, and table and name given the same value, are fine', async () => {
    const result = await parseYaml(lines('table: t', 'name: t', 'columns: [a, b]'));
    expect(result).toMatchObject({
      ok: true,
      artifact: { table: 't', columns: [{ name: 'a' }, { name: 'b' }] },
    });
  });

  it('keys it does not know (dbt-style descriptions) are ignored', async () => {
    const result = await parseYaml(
      lines(
        'name: t',
        'description: x',
        'columns:',
        '  - name: a',
        '    description: the key',
        '    tests: [unique]',
      ),
    );
    expect(result).toMatchObject({ ok: true, artifact: { columns: [{ name: 'a' }] } });
  });

  it('a quoted source part keeps its case; a bare one folds', async () => {
    const result = await parseYaml(lines('table: t', 'source: \'Raw."Order Lines"\'', 'columns: [a]'));
    expect(result).toMatchObject({ ok: true, artifact: { source: { schema: 'raw', table: 'Order Lines' } } });
  });
});

describe('YAML artifacts: declarations for Gate 1', () => {
  it('a column may declare references (schema.table.column) and numeric bounds', async () => {
    const result = await parseYaml(
      lines(
        'table: orders',
        'columns:',
        '  - name: customer_id',
        '    references: analytics_dev.customers.customer_id',
        '  - name: amount',
        '    type: numeric',
        '    min: 0',
        '    max: 10000',
      ),
    );
    expect(result.ok && result.artifact.columns).toEqual([
      { name: 'customer_id', references: 'analytics_dev.customers.customer_id' },
      { name: 'amount', type: 'numeric', min: 0, max: 10000 },
    ]);
  });

  it.each([
    ['references: customers.customer_id', '`references` of column "c" must be schema.table.column'],
    ['references: a.b.c; drop table x', '`references` of column "c" must be schema.table.column'],
    ['min: "0"', '`min` of column "c" must be a number'],
    ['max: .nan', '`max` of column "c" must be a number'],
    ['min: 5\n    max: 1', '`min` of column "c" is above its `max`'],
  ])('refuses %s', async (declaration, message) => {
    const result = await parseYaml(lines('table: t', 'columns:', '  - name: c', `    ${declaration}`));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toContain(message);
  });
});

describe('YAML artifacts: what is refused, and where', () => {
  it('a syntax error carries the position the YAML parser reports', async () => {
    expect(await parseYaml(lines('table: orders', 'columns:', '  - id', ' - amount'))).toEqual({
      ok: false,
      error: {
        code: 'syntax_error',
        message: expect.stringMatching(/^YAML syntax error: /) as string,
        line: 4,
        column: 1,
      },
    });
  });

  it('an unclosed flow list', async () => {
    expect(await parseYaml('table: orders\ncolumns: [id, amount\n')).toMatchObject({
      ok: false,
      error: { code: 'syntax_error', line: 3, column: 1 },
    });
  });

  it('a duplicate key', async () => {
    expect(await parseYaml(lines('table: a', 'columns: [x]', 'table: b'))).toMatchObject({
      ok: false,
      error: {
        code: 'syntax_error',
        message: expect.stringContaining('unique') as string,
        line: 3,
        column: 1,
      },
    });
  });

  it('a document that is a list, not a mapping', async () => {
    expect(await parseYaml('- a\n- b\n')).toMatchObject({
      ok: false,
      error: { code: 'not_a_mapping', line: 1, column: 1 },
    });
  });

  it('no table name', async () => {
    expect(await parseYaml(lines('columns: [id]'))).toEqual({
      ok: false,
      error: {
        code: 'missing_table',
        message: 'no table name: add a `table` (or `name`) key',
        line: 1,
        column: 1,
      },
    });
  });

  it('a table name that is not text points at its key', async () => {
    expect(await parseYaml(lines('columns: [id]', 'table: [a, b]'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_table', line: 2, column: 1 },
    });
  });

  it('table and name that disagree', async () => {
    expect(await parseYaml(lines('table: a', 'name: b', 'columns: [x]'))).toMatchObject({
      ok: false,
      error: { code: 'ambiguous_key', line: 2, column: 1 },
    });
  });

  it('no columns key', async () => {
    expect(await parseYaml(lines('table: orders'))).toMatchObject({
      ok: false,
      error: { code: 'no_columns', line: 1, column: 1 },
    });
  });

  it('an empty columns list points at the key', async () => {
    expect(await parseYaml(lines('table: orders', 'columns: []'))).toMatchObject({
      ok: false,
      error: { code: 'no_columns', line: 2, column: 1 },
    });
  });

  it('columns and fields both set', async () => {
    expect(await parseYaml(lines('table: t', 'columns: [a]', 'fields: [b]'))).toMatchObject({
      ok: false,
      error: { code: 'ambiguous_key', line: 3, column: 1 },
    });
  });

  it('a duplicate column in a list points at the second one', async () => {
    expect(
      await parseYaml(lines('table: orders', 'columns:', '  - id', '  - amount', '  - name: id')),
    ).toEqual({
      ok: false,
      error: { code: 'duplicate_column', message: 'duplicate column "id"', line: 5, column: 5 },
    });
  });

  it('a column item that is neither a name nor a mapping', async () => {
    expect(await parseYaml(lines('table: t', 'columns:', '  - id', '  - [nested]'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_column', line: 4, column: 5 },
    });
  });

  it('a column whose required is not a boolean points at the column', async () => {
    expect(await parseYaml(lines('table: t', 'fields:', '  id:', '    required: sometimes'))).toEqual({
      ok: false,
      error: {
        code: 'invalid_column',
        message: '`required` of column "id" must be true or false',
        line: 3,
        column: 3,
      },
    });
  });

  it('a column with an empty type', async () => {
    expect(await parseYaml(lines('table: t', 'fields:', '  id: ""'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_column', line: 3, column: 3 },
    });
  });

  it('a source that is not schema.table', async () => {
    expect(await parseYaml(lines('table: t', 'columns: [a]', 'source: orders'))).toEqual({
      ok: false,
      error: {
        code: 'invalid_source',
        message: expect.stringContaining('schema.table') as string,
        line: 3,
        column: 1,
      },
    });
  });

  it('a source with too many parts or bad characters', async () => {
    for (const source of ['a.b.c', 'raw.or-ders', '1raw.orders', 'raw.']) {
      expect(await parseYaml(lines('table: t', 'columns: [a]', `source: "${source}"`))).toMatchObject({
        ok: false,
        error: { code: 'invalid_source' },
      });
    }
  });

  it('a decision_context that is not text', async () => {
    expect(await parseYaml(lines('table: t', 'columns: [a]', 'decision_context: [x]'))).toMatchObject({
      ok: false,
      error: { code: 'invalid_decision_context', line: 3, column: 1 },
    });
  });

  it('an empty file', async () => {
    expect(await parseYaml('\n  \n')).toEqual({
      ok: false,
      error: { code: 'empty_file', message: 'the file is empty' },
    });
  });

  it('an alias to an anchor that does not exist', async () => {
    expect(await parseYaml(lines('table: t', 'columns: *cols'))).toMatchObject({
      ok: false,
      error: { code: 'syntax_error' },
    });
  });

  it('an alias bomb is refused instead of expanded', async () => {
    const bomb = lines(
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'table: t',
      'columns: *d',
    );
    expect(await parseYaml(bomb)).toMatchObject({ ok: false, error: { code: 'syntax_error' } });
  });
});

describe('YAML as PyYAML and js-yaml read it', () => {
  it('a double-quoted string continued after an escaped line break, on a line no deeper than its key', async () => {
    const result = await parseYaml(
      lines(
        'table: people',
        'columns:',
        '  - name: national_id',
        '    type: text',
        '  - name: note',
        'decision_context: "Unique national identification number such as a social security\\',
        '\\ number."',
      ),
    );
    expect(result.ok && result.artifact.decisionContext).toBe(
      'Unique national identification number such as a social security number.',
    );
  });

  it('a quote never closed is still refused', async () => {
    expect(
      await parseYaml(lines('table: t', 'columns: [a]', 'decision_context: "open', 'x: 1')),
    ).toMatchObject({
      ok: false,
      error: { code: 'syntax_error', message: expect.stringContaining('Missing closing "quote') as string },
    });
  });
});
