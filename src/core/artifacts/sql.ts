import { chooseDialect, dialectHint } from './dialect.js';
import type { Dialect } from './dialect.js';
import { nameProblem } from './identifiers.js';
import { positionAt } from './position.js';
import type { ArtifactColumn, ArtifactErrorCode, ParseResult, SourceRef } from './types.js';
import { readPostgresView } from './pg-view.js';
import { readWarehouseView } from './warehouse-view.js';

/**
 * Reads a SQL governance artifact: exactly one view definition. The table is the view's name; a schema-qualified
 * view name (`analytics.orders`) declares the source `analytics.orders` (a catalog prefix `db.` is dropped).
 * PostgreSQL views are read by PostgreSQL's own grammar; the warehouses' by a reader of the view's header and
 * its top-level SELECT list, which names a column only where the warehouse names it the same way.
 */
export async function readSql(content: string, asked?: Dialect, fileName = ''): Promise<ParseResult> {
  const choice = chooseDialect(content, asked);
  if (!choice.ok) return { ok: false, error: { code: 'invalid_dialect', message: choice.message } };
  const { dialect } = choice;
  const reading =
    dialect === 'postgres'
      ? await readPostgresView(content, fileName)
      : readWarehouseView(content, dialect, fileName);
  const fail = (code: ArtifactErrorCode, message: string, at?: number): ParseResult => ({
    ok: false,
    error: {
      code,
      message: `${message} ${dialectHint(dialect)}`,
      ...(at === undefined ? {} : positionAt(content, at)),
    },
  });
  if (!reading.ok) return fail(reading.code, reading.message, reading.at);
  const { view } = reading;

  const table = view.name.at(-1) ?? '';
  const problem = nameProblem(table);
  if (problem) return fail('invalid_table', `the view name ${problem}`, view.nameAt);
  const source: SourceRef | undefined =
    view.name.length >= 2 ? { schema: view.name.at(-2) ?? '', table } : undefined;
  if (source && nameProblem(source.schema))
    return fail('invalid_source', `the view's schema ${nameProblem(source.schema)}`, view.nameAt);

  if (view.columns.length === 0) return fail('no_columns', 'the view selects no columns');
  const columns: ArtifactColumn[] = [];
  const seen = new Set<string>();
  for (const column of view.columns) {
    const columnProblem = nameProblem(column.name);
    if (columnProblem)
      return fail('invalid_column', `column name ${JSON.stringify(column.name)} ${columnProblem}`, column.at);
    if (seen.has(column.name))
      return fail('duplicate_column', `duplicate column ${JSON.stringify(column.name)}`, column.at);
    seen.add(column.name);
    columns.push(column.type ? { name: column.name, type: column.type } : { name: column.name });
  }
  return {
    ok: true,
    artifact: {
      kind: 'sql',
      mimeType: 'sql',
      table,
      ...(source ? { source } : {}),
      columns,
      ...(view.dbt ? { fromDbtSql: view.dbt } : {}),
    },
  };
}
