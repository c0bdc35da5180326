import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import type { ParseResult } from '../../../src/core/artifacts/index.js';

const parseJson = (content: string, fileName = 'orders.json'): Promise<ParseResult> =>
  parseArtifact({ fileName, content });

describe('JSON artifacts: what a file declares', () => {
  it('table, a list of typed columns and a source', async () => {
    const content = JSON.stringify(
      {
        table: 'orders',
        source: 'raw.orders',
        columns: [
          { name: 'id', type: 'bigint', required: true },
          { name: 'amount', type: 'numeric' },
        ],
      },
      null,
      2,
    );
    expect(await parseJson(content)).toEqual({
      ok: true,
      artifact: {
        kind: 'json',
        mimeType: 'json',
        table: 'orders',
        source: { schema: 'raw', table: 'orders' },
        columns: [
          { name: 'id', type: 'bigint', required: true },
          { name: 'amount', type: 'numeric' },
        ],
      },
    });
  });

  it('name and a map of column name to type, indented with tabs, with a byte order mark (.JSON)', async () => {
    const content =
      '\uFEFF{\n\t"name": "customers",\n\t"columns": {"id": "bigint", "email": {"type": "text", "required": false}}\n}';
    expect(await parseJson(content, 'customers.JSON')).toEqual({
      ok: true,
      artifact: {
        kind: 'json',
        mimeType: 'json',
        table: 'customers',
        columns: [
          { name: 'id', type: 'bigint' },
          { name: 'email', type: 'text', required: false },
        ],
      },
    });
  });

  it('`fields` works as in YAML', async () => {
    expect(await parseJson('{"table": "t", "fields": {"a": "int"}}')).toMatchObject({
      ok: true,
      artifact: { columns: [{ name: 'a', type: 'int' }] },
    });
  });
});

describe('JSON artifacts: what is refused, and where', () => {
  it('a trailing comma: the position comes from the parser offset', async () => {
    expect(await parseJson('{\n  "table": "orders",\n  "columns": {"id": "int",}\n}')).toEqual({
      ok: false,
      error: {
        code: 'syntax_error',
        message: expect.stringMatching(/^JSON syntax error: /) as string,
        line: 3,
        column: 27,
      },
    });
  });

  it('a missing comma between members', async () => {
    expect(await parseJson('{\n  "table": "orders"\n  "columns": {}\n}')).toMatchObject({
      ok: false,
      error: { code: 'syntax_error', line: 3, column: 3 },
    });
  });

  it('a truncated file points at its end', async () => {
    expect(await parseJson('{"table": "orders",\n "columns": [')).toEqual({
      ok: false,
      error: {
        code: 'syntax_error',
        message: 'JSON syntax error: unexpected end of input',
        line: 2,
        column: 14,
      },
    });
  });

  it('a column without a type points at that column', async () => {
    const content =
      '{\n  "table": "orders",\n  "columns": [\n    {"name": "id", "type": "int"},\n    {"name": "amount"}\n  ]\n}';
    expect(await parseJson(content)).toEqual({
      ok: false,
      error: {
        code: 'missing_column_type',
        message: 'column "amount" has no type: a JSON artifact declares a type for each column',
        line: 5,
        column: 5,
      },
    });
  });

  it('a list of bare names has no types', async () => {
    expect(await parseJson('{"table": "t", "columns": ["a"]}')).toMatchObject({
      ok: false,
      error: { code: 'missing_column_type', line: 1, column: 28 },
    });
  });

  it('a map entry with a null type', async () => {
    expect(await parseJson('{"table": "t",\n "columns": {"a": null}}')).toMatchObject({
      ok: false,
      error: { code: 'missing_column_type', line: 2, column: 14 },
    });
  });

  it('a duplicate key', async () => {
    expect(await parseJson('{"table": "a", "columns": {"x": "int"}, "table": "b"}')).toMatchObject({
      ok: false,
      error: { code: 'syntax_error', message: 'JSON error: duplicate key in an object', line: 1, column: 41 },
    });
  });

  it('no table name', async () => {
    expect(await parseJson('{"columns": {"x": "int"}}')).toMatchObject({
      ok: false,
      error: { code: 'missing_table' },
    });
  });

  it('a duplicate column', async () => {
    const content =
      '{"table": "t", "columns": [\n {"name": "a", "type": "int"},\n {"name": "a", "type": "text"}]}';
    expect(await parseJson(content)).toMatchObject({
      ok: false,
      error: { code: 'duplicate_column', line: 3, column: 2 },
    });
  });

  it('a source that is not text', async () => {
    expect(
      await parseJson('{"table": "t", "columns": {"a": "int"},\n "source": {"schema": "raw"}}'),
    ).toMatchObject({
      ok: false,
      error: { code: 'invalid_source', line: 2, column: 2 },
    });
  });

  it('a top-level array', async () => {
    expect(await parseJson('[{"table": "t"}]')).toMatchObject({
      ok: false,
      error: { code: 'not_a_mapping' },
    });
  });
});
