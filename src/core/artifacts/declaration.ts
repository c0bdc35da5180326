import type { DocumentPath, LocatedDocument } from './document.js';
import { nameProblem, parseSourceRef } from './identifiers.js';
import type {
  ArtifactColumn,
  ArtifactError,
  ArtifactErrorCode,
  GovernanceArtifact,
  ParseResult,
} from './types.js';

/** A declarative artifact (YAML or JSON) turned into a governance artifact, or the first thing wrong with it. */
export function readDeclaration(kind: 'yaml' | 'json', doc: LocatedDocument): ParseResult {
  const known = knownFormat(doc.value);
  const fail = (code: ArtifactErrorCode, message: string, path: DocumentPath = []): ParseResult => ({
    ok: false,
    error: {
      code,
      message: known ? `this is ${known}, not a gds table declaration: ${message}` : message,
      ...doc.locate(path),
    } satisfies ArtifactError,
  });
  const root = doc.value;
  if (!isRecord(root)) {
    return fail(
      'not_a_mapping',
      'the file must be a mapping with a `table` (or `name`) key and a `columns` (or `fields`) key',
    );
  }

  const tableKey = pickKey(root, 'table', 'name');
  if (tableKey === 'both')
    return fail('ambiguous_key', 'both `table` and `name` are set and differ: keep one', ['name']);
  if (tableKey === undefined) return fail('missing_table', 'no table name: add a `table` (or `name`) key');
  const table = root[tableKey];
  if (typeof table !== 'string')
    return fail('invalid_table', `\`${tableKey}\` must be a text value`, [tableKey]);
  const tableProblem = nameProblem(table);
  if (tableProblem) return fail('invalid_table', `the table name ${tableProblem}`, [tableKey]);

  const columnsKey = pickKey(root, 'columns', 'fields');
  if (columnsKey === 'both')
    return fail('ambiguous_key', 'both `columns` and `fields` are set: keep one', ['fields']);
  const columns = readColumns(
    kind,
    columnsKey === undefined ? undefined : root[columnsKey],
    columnsKey ?? 'columns',
  );
  if (!columns.ok) return fail(columns.code, columns.message, columns.path);

  const artifact: GovernanceArtifact = { kind, mimeType: kind, table, columns: columns.columns };

  const source = root['source'];
  if (source !== undefined && source !== null) {
    const ref = typeof source === 'string' ? parseSourceRef(source) : undefined;
    if (!ref) return fail('invalid_source', sourceMessage('`source`'), ['source']);
    artifact.source = ref;
  }
  const decisionContext = root['decision_context'];
  if (decisionContext !== undefined && decisionContext !== null) {
    if (typeof decisionContext !== 'string') {
      return fail('invalid_decision_context', '`decision_context` must be text', ['decision_context']);
    }
    artifact.decisionContext = decisionContext;
  }
  return { ok: true, artifact };
}

export function sourceMessage(what: string): string {
  return `${what} must be a schema-qualified name \`schema.table\` (e.g. analytics.orders; quote a part with "" when it has other characters)`;
}

type Columns =
  | { ok: true; columns: ArtifactColumn[] }
  | { ok: false; code: ArtifactErrorCode; message: string; path: DocumentPath };

function readColumns(kind: 'yaml' | 'json', value: unknown, key: string): Columns {
  // Each column read where it is, its path made only for an error (a plan reads thousands of artifacts).
  const list = Array.isArray(value) ? (value as unknown[]) : undefined;
  const names = list === undefined && isRecord(value) ? Object.keys(value) : undefined;
  const count = list?.length ?? names?.length ?? 0;
  if (count === 0) {
    return {
      ok: false,
      code: 'no_columns',
      message:
        'no columns: add a `columns` (or `fields`) key with a list of columns or a map of column name to type',
      path: value === undefined ? [] : [key],
    };
  }
  const columns: ArtifactColumn[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < count; index += 1) {
    const mapKey = names?.[index];
    const item = list === undefined ? (value as Record<string, unknown>)[mapKey as string] : list[index];
    const column = readColumn(item, mapKey);
    const invalid = (code: ArtifactErrorCode, message: string): Columns => ({
      ok: false,
      code,
      message,
      path: [key, mapKey ?? index],
    });
    if (typeof column === 'string') return invalid('invalid_column', column);
    const problem = nameProblem(column.name);
    if (problem) return invalid('invalid_column', `column name ${JSON.stringify(column.name)} ${problem}`);
    if (seen.has(column.name))
      return invalid('duplicate_column', `duplicate column ${JSON.stringify(column.name)}`);
    if (kind === 'json' && column.type === undefined) {
      return invalid(
        'missing_column_type',
        `column ${JSON.stringify(column.name)} has no type: a JSON artifact declares a type for each column`,
      );
    }
    seen.add(column.name);
    columns.push(column);
  }
  return { ok: true, columns };
}

/** One column from a list item (`name` or `{name, type?, required?, references?, min?, max?}`) or a map entry (`name: type` or `name: {type?, …}`). */
function readColumn(item: unknown, mapKey: string | undefined): ArtifactColumn | string {
  if (mapKey !== undefined && (item === null || typeof item === 'string')) {
    return item === null ? { name: mapKey } : withType({ name: mapKey }, item);
  }
  if (mapKey === undefined && typeof item === 'string') return { name: item };
  if (!isRecord(item)) {
    return mapKey === undefined
      ? 'a column must be a name or a mapping with `name` and optional `type` and `required`'
      : `column ${JSON.stringify(mapKey)} must map to a type or to a mapping with optional \`type\` and \`required\``;
  }
  const name = mapKey ?? item['name'];
  if (typeof name !== 'string') return 'a column mapping needs a `name` text value';
  const column: ArtifactColumn = { name };
  const type = item['type'];
  if (type !== undefined && type !== null) {
    if (typeof type !== 'string') return `the type of column ${JSON.stringify(name)} must be text`;
    const typed = withType(column, type);
    if (typeof typed === 'string') return typed;
  }
  const required = item['required'];
  if (required !== undefined && required !== null) {
    if (typeof required !== 'boolean')
      return `\`required\` of column ${JSON.stringify(name)} must be true or false`;
    column.required = required;
  }
  return withChecks(column, item);
}

const QUALIFIED_COLUMN = /^[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*\.[A-Za-z_][A-Za-z0-9_$]*$/;

/** The declarations Gate 1's baseline checks read: `references: schema.table.column`, `min`, `max`. */
function withChecks(column: ArtifactColumn, item: Record<string, unknown>): ArtifactColumn | string {
  // Run for each column of every declaration a plan reads: its name is written out only for a refusal, the bounds
  // are read by index, not for-of over a new array (an iterator's result object each, with TurboFan off while
  // a plan reads and compares: about 2 MB a no-change plan of 2,000 models).
  const references = item['references'];
  if (references !== undefined && references !== null) {
    if (typeof references !== 'string' || !QUALIFIED_COLUMN.test(references))
      return `\`references\` of column ${JSON.stringify(column.name)} must be schema.table.column`;
    column.references = references;
  }
  for (let i = 0; i < BOUNDS.length; i++) {
    const bound = BOUNDS[i] as (typeof BOUNDS)[number];
    const value = item[bound];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value))
      return `\`${bound}\` of column ${JSON.stringify(column.name)} must be a number`;
    column[bound] = value;
  }
  if (column.min !== undefined && column.max !== undefined && column.min > column.max)
    return `\`min\` of column ${JSON.stringify(column.name)} is above its \`max\``;
  return column;
}

const BOUNDS = ['min', 'max'] as const;

function withType(column: ArtifactColumn, type: string): ArtifactColumn | string {
  if (type.trim() === '') return `the type of column ${JSON.stringify(column.name)} is empty`;
  column.type = type.trim();
  return column;
}

/** Which of two synonymous keys is set; 'both' when both are set to different values. */
function pickKey<K extends string>(
  root: Record<string, unknown>,
  primary: K,
  synonym: K,
): K | 'both' | undefined {
  const has = (k: string) => root[k] !== undefined && root[k] !== null;
  if (has(primary) && has(synonym)) {
    return JSON.stringify(root[primary]) === JSON.stringify(root[synonym]) ? primary : 'both';
  }
  if (has(primary)) return primary;
  return has(synonym) ? synonym : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !ArrayBuffer.isView(value);
}

/** Files of other tools that people push by mistake, named so the refusal says what the file is. */
function knownFormat(root: unknown): string | undefined {
  if (!isRecord(root)) return undefined;
  const metadata = root['metadata'];
  const dbtSchema = isRecord(metadata) ? metadata['dbt_schema_version'] : undefined;
  if (typeof dbtSchema === 'string') {
    const [, artifact, version] = /\/dbt\/([a-z_-]+)\/(v\d+)/.exec(dbtSchema) ?? [];
    return (
      `a dbt ${artifact ?? 'artifact'} ${version ?? ''}`.trimEnd() +
      " (push a model's SQL, or its properties file with --model)"
    );
  }
  if ('dataContractSpecification' in root) return 'a datacontract.com data contract';
  if (root['kind'] === 'DataContract' || 'apiVersion' in root) return 'an ODCS data contract';
  if ('config-version' in root || ('profile' in root && 'name' in root)) return 'a dbt_project.yml';
  if (typeof root['$schema'] === 'string') return 'a JSON Schema document';
  return undefined;
}
