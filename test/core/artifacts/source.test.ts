import { describe, expect, it } from 'vitest';
import {
  artifactKindOf,
  formatArtifactError,
  formatSourceRef,
  parseArtifact,
  parseSourceRef,
  resolveSource,
} from '../../../src/core/artifacts/index.js';
import type { GovernanceArtifact } from '../../../src/core/artifacts/index.js';

const declared: GovernanceArtifact = {
  kind: 'yaml',
  mimeType: 'yaml',
  table: 'orders',
  source: { schema: 'analytics', table: 'orders' },
  columns: [{ name: 'id' }],
};
const undeclared: GovernanceArtifact = {
  kind: 'json',
  mimeType: 'json',
  table: 'orders',
  columns: [{ name: 'id', type: 'int' }],
};

describe('resolveSource: --source, else the artifact, never the file name', () => {
  it('--source wins over the artifact declaration', () => {
    expect(resolveSource(declared, 'raw.orders_v2')).toEqual({
      ok: true,
      source: { schema: 'raw', table: 'orders_v2' },
    });
  });

  it("the artifact's own source when there is no --source", () => {
    expect(resolveSource(declared)).toEqual({ ok: true, source: { schema: 'analytics', table: 'orders' } });
  });

  it('neither: an error saying --source <schema.table> is required', () => {
    expect(resolveSource(undeclared)).toEqual({
      ok: false,
      error: {
        code: 'source_required',
        message: expect.stringMatching(/^--source <schema\.table> is required/) as string,
      },
    });
  });

  it('a malformed --source is refused even when the artifact declares one', () => {
    expect(resolveSource(declared, 'orders')).toMatchObject({ ok: false, error: { code: 'invalid_source' } });
  });

  it('a view parsed from SQL without a schema needs --source', async () => {
    const parsed = await parseArtifact({
      fileName: 'analytics.orders.sql',
      content: 'CREATE VIEW orders AS SELECT id FROM t',
    });
    if (!parsed.ok) throw new Error('expected an artifact');
    expect(resolveSource(parsed.artifact)).toMatchObject({ ok: false, error: { code: 'source_required' } });
  });
});

describe('schema.table references', () => {
  it.each([
    ['raw.orders', { schema: 'raw', table: 'orders' }],
    ['Raw.Orders', { schema: 'raw', table: 'orders' }],
    [' raw . orders ', { schema: 'raw', table: 'orders' }],
    ['"Raw Data"."Order ""Lines"""', { schema: 'Raw Data', table: 'Order "Lines"' }],
    ['_s$1.t_2', { schema: '_s$1', table: 't_2' }],
  ])('%s reads as %o', (text, expected) => {
    expect(parseSourceRef(text)).toEqual(expected);
  });

  it.each([
    'orders',
    'a.b.c',
    'raw.',
    '.orders',
    'raw..orders',
    '1raw.orders',
    'raw.or-ders',
    '"".orders',
    '"raw.orders',
    '',
  ])('%j is not a source', (text) => {
    expect(parseSourceRef(text)).toBeUndefined();
  });

  it('formatting and reading back gives the same source', () => {
    for (const source of [
      { schema: 'raw', table: 'orders' },
      { schema: 'Raw Data', table: 'Order "Lines"' },
      { schema: 'UPPER', table: 'x.y' },
    ]) {
      expect(parseSourceRef(formatSourceRef(source))).toEqual(source);
    }
    expect(formatSourceRef({ schema: 'raw', table: 'Orders' })).toBe('raw."Orders"');
  });
});

describe('file types', () => {
  it.each(['orders.csv', 'orders', 'orders.sql.txt', 'orders.yml.bak', '.sql', 'dir.sql/orders'])(
    '%s is an unsupported file type',
    async (fileName) => {
      expect(await parseArtifact({ fileName, content: 'table: orders\ncolumns: [id]\n' })).toEqual({
        ok: false,
        error: { code: 'unsupported_file_type', message: 'Unsupported file type' },
      });
    },
  );

  it.each([
    ['models/orders.sql', 'sql'],
    ['C:\\work\\Orders.YML', 'yaml'],
    ['orders.v2.yaml', 'yaml'],
    ['ORDERS.Json', 'json'],
  ])('%s is %s', (fileName, kind) => {
    expect(artifactKindOf(fileName)).toBe(kind);
  });

  it('a declared kind (a definition mimeType) reads a file whose name has no extension', async () => {
    const result = await parseArtifact({
      fileName: 'orders',
      kind: 'yaml',
      content: 'table: orders\ncolumns: [id]\n',
    });
    expect(result).toMatchObject({ ok: true, artifact: { kind: 'yaml', table: 'orders' } });
  });

  it('a declared kind that contradicts the extension is refused', async () => {
    expect(await parseArtifact({ fileName: 'orders.sql', kind: 'json', content: '{}' })).toEqual({
      ok: false,
      error: { code: 'kind_mismatch', message: 'the file name says sql but the declared type is json' },
    });
  });

  it('an error reads as file:line:column: message', () => {
    expect(
      formatArtifactError('orders.yml', {
        code: 'duplicate_column',
        message: 'duplicate column "id"',
        line: 5,
        column: 5,
      }),
    ).toBe('orders.yml:5:5: duplicate column "id"');
    expect(
      formatArtifactError('x.txt', { code: 'unsupported_file_type', message: 'Unsupported file type' }),
    ).toBe('x.txt: Unsupported file type');
  });
});
