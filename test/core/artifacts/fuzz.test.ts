import fc from 'fast-check';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import type {
  ArtifactColumn,
  ArtifactKind,
  ParseResult,
  SourceRef,
} from '../../../src/core/artifacts/index.js';

const FILE_OF: Record<ArtifactKind, string> = { sql: 'orders.sql', yaml: 'orders.yml', json: 'orders.json' };
const ERROR_CODES = [
  'unsupported_file_type',
  'empty_file',
  'syntax_error',
  'not_a_mapping',
  'not_a_view',
  'multiple_statements',
  'select_star',
  'unnamed_column',
  'missing_table',
  'ambiguous_key',
  'invalid_table',
  'no_columns',
  'invalid_column',
  'missing_column_type',
  'duplicate_column',
  'invalid_decision_context',
  'invalid_source',
];

/** The shape every answer must have: a well-formed error, or an artifact that keeps the parser's promises. */
function assertWellFormed(result: ParseResult, kind: ArtifactKind, content: string): void {
  if (!result.ok) {
    expect(ERROR_CODES).toContain(result.error.code);
    expect(result.error.message.length).toBeGreaterThan(0);
    if (result.error.line !== undefined) {
      expect(Number.isInteger(result.error.line) && result.error.line >= 1).toBe(true);
      expect(result.error.line).toBeLessThanOrEqual(content.split('\n').length + 1);
    }
    if (result.error.column !== undefined)
      expect(Number.isInteger(result.error.column) && result.error.column >= 1).toBe(true);
    return;
  }
  const { artifact } = result;
  expect(artifact.kind).toBe(kind);
  expect(artifact.mimeType).toBe(kind);
  expect(artifact.table.trim()).not.toBe('');
  expect(artifact.columns.length).toBeGreaterThan(0);
  const names = artifact.columns.map((c) => c.name);
  expect(new Set(names).size).toBe(names.length);
  if (kind === 'json') expect(artifact.columns.every((c) => typeof c.type === 'string')).toBe(true);
}

const check = (kind: ArtifactKind) => async (content: string) => {
  assertWellFormed(await parseArtifact({ fileName: FILE_OF[kind], content }), kind, content);
};

// --- generated valid artifacts --------------------------------------------------------------------------------

const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const label = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 _-]{0,14}[A-Za-z0-9]$/);
const sqlType = fc.constantFrom(
  'int',
  'bigint',
  'text',
  'numeric(12,2)',
  'timestamp with time zone',
  'boolean',
);
const source = fc.record({ schema: word.map((w) => `s_${w}`), table: word.map((w) => `t_${w}`) });

interface Model {
  table: string;
  source?: SourceRef;
  columns: ArtifactColumn[];
}

const declaredColumn = fc.record(
  { name: label, type: sqlType, required: fc.boolean() },
  { requiredKeys: ['name', 'type'] },
);
const declaration: fc.Arbitrary<Model> = fc.record(
  {
    table: label,
    source,
    columns: fc.uniqueArray(declaredColumn, { minLength: 1, maxLength: 8, selector: (c) => c.name }),
  },
  { requiredKeys: ['table', 'columns'] },
);

/** A declaration written in one of the shapes the spec allows (table/name, columns/fields, list/map). */
function writeDeclaration(
  model: Model,
  style: { nameKey: boolean; fieldsKey: boolean; asMap: boolean },
): Record<string, unknown> {
  const columns = style.asMap
    ? Object.fromEntries(
        model.columns.map(({ name, ...rest }) => [name, rest.required === undefined ? rest.type : rest]),
      )
    : model.columns;
  return {
    [style.nameKey ? 'name' : 'table']: model.table,
    [style.fieldsKey ? 'fields' : 'columns']: columns,
    ...(model.source ? { source: `${model.source.schema}.${model.source.table}` } : {}),
  };
}
const style = fc.record({ nameKey: fc.boolean(), fieldsKey: fc.boolean(), asMap: fc.boolean() });

interface SqlModel {
  sql: string;
  expected: Model;
}

/** A view over a source table: bare column references (folded to lower case) and quoted aliases (kept). */
const sqlView: fc.Arbitrary<SqlModel> = fc
  .record({
    schema: fc.option(
      word.map((w) => `s_${w}`),
      { nil: undefined },
    ),
    view: word.map((w) => `v_${w}`),
    columns: fc.uniqueArray(
      fc.oneof(
        word.map((w) => ({ sql: `src.C_${w}`, name: `c_${w}` })),
        label.map((l) => ({ sql: `lower(src.x) AS "${l}"`, name: l })),
      ),
      { minLength: 1, maxLength: 8, selector: (c) => c.name },
    ),
    comment: fc.boolean(),
    cte: fc.boolean(),
  })
  .map(({ schema, view, columns, comment, cte }) => {
    // Written in upper case: PostgreSQL folds bare names, so the artifact names them in lower case.
    const name = (schema ? `${schema}.${view}` : view).toUpperCase();
    const from = cte ? 'WITH src AS (SELECT * FROM raw.data) SELECT' : 'SELECT';
    const list = columns.map((c) => c.sql).join(',\n  ');
    const sql = `${comment ? '-- generated view\n' : ''}CREATE OR REPLACE VIEW ${name} AS\n${from} ${list}\nFROM ${cte ? 'src' : 'raw.data src'};\n`;
    return {
      sql,
      expected: {
        table: view,
        ...(schema ? { source: { schema, table: view } } : {}),
        columns: columns.map((c) => ({ name: c.name })),
      },
    };
  });

// --- mutations ----------------------------------------------------------------------------------------------------

type Mutation = (text: string) => string;
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map(
    (n): Mutation =>
      (t) =>
        t.slice(0, n % (t.length + 1)),
  ),
  fc
    .tuple(fc.nat(), fc.string({ minLength: 1, maxLength: 3, unit: 'binary' }))
    .map(([n, s]): Mutation => (t) => {
      const at = n % (t.length + 1);
      return t.slice(0, at) + s + t.slice(at);
    }),
  fc.tuple(fc.nat(), fc.nat({ max: 8 })).map(([n, len]): Mutation => (t) => {
    const at = n % (t.length + 1);
    return t.slice(0, at) + t.slice(at + len);
  }),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        '"',
        "'",
        ':',
        ',',
        '{',
        '[',
        ']',
        '}',
        '-',
        '\t',
        '\n',
        ';',
        '(',
        '*',
        '&a',
        '*a',
        '/*',
        '--',
      ),
    )
    .map(([n, s]): Mutation => (t) => {
      const at = n % (t.length + 1);
      return t.slice(0, at) + s + t.slice(at);
    }),
);
const mutations = fc.array(mutation, { minLength: 1, maxLength: 3 });
const mutate = (text: string, ms: Mutation[]) => ms.reduce((t, m) => m(t), text);

const yamlText = fc.tuple(declaration, style).map(([m, s]) => stringify(writeDeclaration(m, s)));
const jsonText = fc
  .tuple(declaration, style, fc.boolean())
  .map(([m, s, pretty]) => JSON.stringify(writeDeclaration(m, s), null, pretty ? 2 : 0));

// Pure parsing of small inputs: far below the 30 s budget, a generous bound per property in case the machine is busy.
const LONG = 60_000;

describe('artifact parsing never throws and keeps its promises (fast-check)', () => {
  it.each(['sql', 'yaml', 'json'] as const)(
    'random text as %s',
    async (kind) => {
      const text = fc.oneof(
        fc.string({ maxLength: 200, unit: 'binary' }),
        fc.string({ maxLength: 200, unit: 'grapheme-ascii' }),
      );
      await fc.assert(fc.asyncProperty(text, check(kind)), { numRuns: 300 });
    },
    LONG,
  );

  it.each([
    // PostgreSQL's grammar reads 5000 levels; its parser stack ends well before 50000.
    ['sql', `CREATE VIEW v AS SELECT ${'('.repeat(50000)}1${')'.repeat(50000)} AS x`],
    ['yaml', `table: t\ncolumns: ${'['.repeat(5000)}a${']'.repeat(5000)}\n`],
    ['json', `{"table": "t", "columns": ${'['.repeat(5000)}"a"${']'.repeat(5000)}}`],
  ] as const)('nesting far too deep in %s is an error, not a crash', async (kind, content) => {
    expect(await parseArtifact({ fileName: FILE_OF[kind], content })).toMatchObject({
      ok: false,
      error: { code: kind === 'json' ? 'invalid_column' : 'syntax_error' },
    });
  });

  it(
    'random bytes decoded as UTF-8, under each extension',
    async () => {
      const bytes = fc.uint8Array({ maxLength: 200 }).map((b) => new TextDecoder().decode(b));
      await fc.assert(
        fc.asyncProperty(bytes, fc.constantFrom<ArtifactKind>('sql', 'yaml', 'json'), (text, kind) =>
          check(kind)(text),
        ),
        { numRuns: 300 },
      );
    },
    LONG,
  );

  it(
    'generated YAML declarations read back as declared',
    async () => {
      await fc.assert(
        fc.asyncProperty(declaration, style, async (model, s) => {
          const result = await parseArtifact({
            fileName: 'orders.yaml',
            content: stringify(writeDeclaration(model, s)),
          });
          expect(result).toEqual({ ok: true, artifact: { kind: 'yaml', mimeType: 'yaml', ...model } });
        }),
        { numRuns: 200 },
      );
    },
    LONG,
  );

  it(
    'generated JSON declarations read back as declared',
    async () => {
      await fc.assert(
        fc.asyncProperty(declaration, style, async (model, s) => {
          const result = await parseArtifact({
            fileName: 'orders.json',
            content: JSON.stringify(writeDeclaration(model, s), null, 2),
          });
          expect(result).toEqual({ ok: true, artifact: { kind: 'json', mimeType: 'json', ...model } });
        }),
        { numRuns: 200 },
      );
    },
    LONG,
  );

  it(
    'generated SQL views read back as declared',
    async () => {
      await fc.assert(
        fc.asyncProperty(sqlView, async ({ sql, expected }) => {
          const result = await parseArtifact({ fileName: 'orders.sql', content: sql });
          expect(result).toEqual({ ok: true, artifact: { kind: 'sql', mimeType: 'sql', ...expected } });
        }),
        { numRuns: 200 },
      );
    },
    LONG,
  );

  it(
    'mutated YAML: an error or a well-formed artifact',
    async () => {
      await fc.assert(
        fc.asyncProperty(yamlText, mutations, (t, ms) => check('yaml')(mutate(t, ms))),
        { numRuns: 400 },
      );
    },
    LONG,
  );

  it(
    'mutated JSON: an error or a well-formed artifact',
    async () => {
      await fc.assert(
        fc.asyncProperty(jsonText, mutations, (t, ms) => check('json')(mutate(t, ms))),
        { numRuns: 400 },
      );
    },
    LONG,
  );

  it(
    'mutated SQL: an error or a well-formed artifact',
    async () => {
      await fc.assert(
        fc.asyncProperty(sqlView, mutations, ({ sql }, ms) => check('sql')(mutate(sql, ms))),
        { numRuns: 400 },
      );
    },
    LONG,
  );
});
