// What a definition declares, for comparing a file with the definition the service holds
// (`push --replace`, `env promote`): the table name, the source, the columns with their declared
// types and checks, the decision context. Not the file name, the format, comments or layout.
import type { Yaml } from '../libraries/yaml.js';
import { sameJson } from '../same-json.js';
import type { ArtifactColumn, GovernanceArtifact } from './types.js';

export interface DefinitionSummary {
  table: string;
  /** `schema.table`. */
  source: string;
  columns: ArtifactColumn[];
  decisionContext?: string;
}

export function definitionSummary(
  artifact: Pick<GovernanceArtifact, 'table' | 'columns' | 'decisionContext'>,
  source: string,
): DefinitionSummary {
  // Each key set in this order, not spread from objects made for it: a plan compares thousands.
  const columns: ArtifactColumn[] = [];
  for (const column of artifact.columns) {
    const summary = { name: column.name } as ArtifactColumn;
    if (column.type !== undefined) summary.type = column.type.trim().toLowerCase();
    summary.required = column.required ?? false;
    if (column.references !== undefined) summary.references = column.references;
    if (column.min !== undefined) summary.min = column.min;
    if (column.max !== undefined) summary.max = column.max;
    columns.push(summary);
  }
  const summary: DefinitionSummary = { table: artifact.table, source, columns };
  if (artifact.decisionContext !== undefined) summary.decisionContext = artifact.decisionContext;
  return summary;
}

/** The summary as YAML with a fixed key order: what `--dry-run` diffs and what equality compares. */
export function definitionText(yaml: Yaml, summary: DefinitionSummary): string {
  return yaml.stringify(definitionSummary(summary, summary.source), { lineWidth: 0 });
}

/** What equality compares: the summary's fields in definitionText's order, as JSON (YAML's printer is slow). */
export function definitionKey(summary: DefinitionSummary): string {
  return JSON.stringify(definitionSummary(summary, summary.source));
}

/**
 * definitionKey(a) === definitionKey(b), told member by member without writing either (a plan compares every
 * table it holds): a member definitionSummary leaves out, or JSON.stringify does, is left out of both.
 */
export function sameDefinition(a: DefinitionSummary, b: DefinitionSummary): boolean {
  if (!sameJson(a.table, b.table) || !sameJson(a.source, b.source)) return false;
  const columns = a.columns;
  const others = b.columns;
  if (columns.length !== others.length) return false;
  for (let i = 0; i < columns.length; i += 1)
    if (!sameColumn(columns[i] as ArtifactColumn, others[i] as ArtifactColumn)) return false;
  return sameJson(a.decisionContext, b.decisionContext);
}

/** Two columns as definitionSummary writes them: the type trimmed and in lower case, `required` false unless set. */
function sameColumn(a: ArtifactColumn, b: ArtifactColumn): boolean {
  if (!sameJson(a.name, b.name)) return false;
  const type = a.type;
  const other = b.type;
  if (type === undefined || other === undefined) {
    if (type !== other) return false;
  } else if (type !== other && type.trim().toLowerCase() !== other.trim().toLowerCase()) return false;
  return (
    sameJson(a.required ?? false, b.required ?? false) &&
    sameJson(a.references, b.references) &&
    sameJson(a.min, b.min) &&
    sameJson(a.max, b.max)
  );
}
