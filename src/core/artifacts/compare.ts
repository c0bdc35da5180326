// What a definition declares, for comparing a file with the definition the service holds
// (`push --replace`, `env promote`): the table name, the source, the columns with their declared
// types and checks, the decision context. Not the file name, the format, comments or layout.
import type { Yaml } from '../libraries/yaml.js';
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
  return {
    table: artifact.table,
    source,
    columns: artifact.columns.map((column) => ({
      name: column.name,
      ...(column.type === undefined ? {} : { type: column.type.trim().toLowerCase() }),
      required: column.required ?? false,
      ...(column.references === undefined ? {} : { references: column.references }),
      ...(column.min === undefined ? {} : { min: column.min }),
      ...(column.max === undefined ? {} : { max: column.max }),
    })),
    ...(artifact.decisionContext === undefined ? {} : { decisionContext: artifact.decisionContext }),
  };
}

/** The summary as YAML with a fixed key order: what `--dry-run` diffs and what equality compares. */
export function definitionText(yaml: Yaml, summary: DefinitionSummary): string {
  return yaml.stringify(definitionSummary(summary, summary.source), { lineWidth: 0 });
}

/** What equality compares: the summary's fields in definitionText's order, as JSON (YAML's printer is slow). */
export function definitionKey(summary: DefinitionSummary): string {
  return JSON.stringify(definitionSummary(summary, summary.source));
}

export function sameDefinition(a: DefinitionSummary, b: DefinitionSummary): boolean {
  return definitionKey(a) === definitionKey(b);
}
