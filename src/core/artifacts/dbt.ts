// dbt properties files (`models:` / `sources:` lists, usually a dbt user's first YAML): one model, or one
// source table, chosen with --model, becomes a governance artifact. A model's description is its decision
// context (meta.decision_context wins); a column's data_type is its type, a not_null test makes it required.
import type { Yaml } from '../libraries/yaml.js';
import type { DocumentPath, LocatedDocument } from './document.js';
import { formatSourceRef, nameProblem } from './identifiers.js';
import type { ArtifactColumn, GovernanceArtifact, ParseResult, SourceRef } from './types.js';

type Entry = Record<string, unknown>;

/** True when the YAML is a dbt properties file rather than a gds declaration. */
export function isDbtProperties(value: unknown): value is Entry {
  if (!isRecord(value) || 'table' in value || 'columns' in value || 'fields' in value) return false;
  return Array.isArray(value['models']) || Array.isArray(value['sources']);
}

interface Candidate {
  /** What --model names it by: the model's name, or `<source>.<table>`. */
  id: string;
  entry: Entry;
  path: DocumentPath;
  source?: SourceRef;
}

function candidates(root: Entry): Candidate[] {
  const found: Candidate[] = [];
  for (const [i, model] of listOf(root['models']).entries()) {
    if (typeof model['name'] === 'string')
      found.push({ id: model['name'], entry: model, path: ['models', i, 'name'] });
  }
  for (const [i, source] of listOf(root['sources']).entries()) {
    const sourceName = source['name'];
    if (typeof sourceName !== 'string') continue;
    const schema = typeof source['schema'] === 'string' ? source['schema'] : sourceName;
    for (const [j, table] of listOf(source['tables']).entries()) {
      const tableName = table['name'];
      if (typeof tableName !== 'string') continue;
      const identifier = typeof table['identifier'] === 'string' ? table['identifier'] : tableName;
      found.push({
        id: `${sourceName}.${tableName}`,
        entry: table,
        path: ['sources', i, 'tables', j, 'name'],
        source: { schema, table: identifier },
      });
    }
  }
  return found;
}

export function readDbtModel(
  doc: LocatedDocument & { value: Entry },
  model: string | undefined,
): ParseResult {
  const all = candidates(doc.value);
  const listed = all.map((c) => c.id);
  const shown =
    listed.length > 12 ? `${listed.slice(0, 12).join(', ')}, … (${listed.length} in all)` : listed.join(', ');
  if (model === undefined) {
    return {
      ok: false,
      error: {
        code: 'dbt_model_required',
        message: `this is a dbt properties file, not one table's declaration: it describes ${listed.length === 0 ? 'no model' : shown}`,
        suggestion:
          listed.length === 0
            ? 'Add a model with its columns under models:, or push a gds declaration (table: and columns: keys).'
            : `Push one of them with --model <name>, e.g. --model ${listed[0] ?? ''}.`,
        ...doc.locate([]),
      },
    };
  }
  const chosen = all.find((c) => c.id === model);
  if (!chosen) {
    return {
      ok: false,
      error: {
        code: 'dbt_model_not_found',
        message: `the dbt properties file has no model ${JSON.stringify(model)}; it describes ${shown || 'no model'}`,
        suggestion: 'Pass --model with one of the names listed.',
      },
    };
  }
  const fail = (message: string, path: DocumentPath): ParseResult => ({
    ok: false,
    error: { code: 'invalid_column', message, ...doc.locate(path) },
  });
  const columns: ArtifactColumn[] = [];
  const seen = new Set<string>();
  const base = chosen.path.slice(0, -1);
  for (const [i, column] of listOf(chosen.entry['columns']).entries()) {
    const name = column['name'];
    const path = [...base, 'columns', i];
    if (typeof name !== 'string') return fail('a column of the model has no `name`', path);
    const problem = nameProblem(name);
    if (problem) return fail(`column name ${JSON.stringify(name)} ${problem}`, path);
    if (seen.has(name)) return fail(`duplicate column ${JSON.stringify(name)}`, path);
    seen.add(name);
    const type = column['data_type'];
    columns.push({
      name,
      ...(typeof type === 'string' && type.trim() !== '' ? { type: type.trim() } : {}),
      ...(isNotNull(column) ? { required: true } : {}),
    });
  }
  if (columns.length === 0) {
    return {
      ok: false,
      error: {
        code: 'no_columns',
        message: `${model} lists no columns: add them under its columns: key (dbt's own docs need them too)`,
        ...doc.locate(chosen.path),
      },
    };
  }
  const meta = isRecord(chosen.entry['meta']) ? chosen.entry['meta'] : {};
  const context = meta['decision_context'] ?? chosen.entry['description'];
  const metaSource = typeof meta['source'] === 'string' ? meta['source'] : undefined;
  const artifact: GovernanceArtifact = {
    kind: 'yaml',
    mimeType: 'yaml',
    table: chosen.id.split('.').at(-1) ?? chosen.id,
    columns,
    fromDbtModel: chosen.id,
    ...(typeof context === 'string' && context.trim() !== '' ? { decisionContext: context.trim() } : {}),
  };
  const source = chosen.source ?? (metaSource === undefined ? undefined : sourceOf(metaSource));
  if (source) artifact.source = source;
  return { ok: true, artifact };
}

function sourceOf(text: string): SourceRef | undefined {
  const [schema, table, ...rest] = text.split('.');
  return schema && table && rest.length === 0 ? { schema, table } : undefined;
}

/** dbt's not_null test, in `tests:`/`data_tests:` or as a constraint. */
function isNotNull(column: Entry): boolean {
  const tests = [...listOrNames(column['tests']), ...listOrNames(column['data_tests'])];
  const constraints = listOf(column['constraints']).map((c) => c['type']);
  return tests.includes('not_null') || constraints.includes('not_null');
}

function listOrNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((t) => (typeof t === 'string' ? [t] : isRecord(t) ? Object.keys(t) : []));
}

/** The gds declaration of an artifact, as YAML the service reads back to the same artifact. */
export function declarationYaml(yaml: Yaml, artifact: GovernanceArtifact): string {
  const declaration: Record<string, unknown> = { table: artifact.table };
  if (artifact.source) declaration['source'] = formatSourceRef(artifact.source);
  if (artifact.decisionContext) declaration['decision_context'] = artifact.decisionContext;
  declaration['columns'] = artifact.columns.map((c) => ({ ...c }));
  const origin = artifact.fromDbtModel
    ? `# dbt model ${artifact.fromDbtModel}, as gds push --model read it\n`
    : artifact.fromDbtSql
      ? `# dbt model ${artifact.table}, as gds push read its ${artifact.fromDbtSql} SQL\n`
      : '';
  return origin + yaml.stringify(declaration);
}

function listOf(value: unknown): Entry[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function isRecord(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
