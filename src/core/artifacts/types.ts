import type { Dialect } from './dialect.js';

/** The three artifact formats the service accepts (spec §2.10); also the `mimeType` of `POST /api/workspace/definitions`. */
export type ArtifactKind = 'sql' | 'yaml' | 'json';

/** A warehouse object, `schema.table`, as declared by an artifact or by `--source`. */
export interface SourceRef {
  schema: string;
  table: string;
}

export interface ArtifactColumn {
  name: string;
  type?: string;
  required?: boolean;
  /** Declares a foreign key, `schema.table.column`: Gate 1's referential-integrity check reads it. */
  references?: string;
  /** Declared numeric bounds: Gate 1's numeric-bounds check reads them. */
  min?: number;
  max?: number;
}

/** What a governance artifact declares once parsed: the table, its columns and, when declared, its source. */
export interface GovernanceArtifact {
  kind: ArtifactKind;
  mimeType: ArtifactKind;
  table: string;
  source?: SourceRef;
  columns: ArtifactColumn[];
  decisionContext?: string;
  /** Set when the artifact is one model (or `<source>.<table>`) of a dbt properties file, read with --model. */
  fromDbtModel?: string;
  /** Set when the artifact is dbt's compiled SQL of a model, or its run SQL (`create … <name>__dbt_tmp as (…)`). */
  fromDbtSql?: 'compiled' | 'run';
}

export type ArtifactErrorCode =
  | 'unsupported_file_type'
  | 'kind_mismatch'
  | 'empty_file'
  | 'syntax_error'
  | 'not_a_mapping'
  | 'not_a_view'
  | 'multiple_statements'
  | 'select_star'
  | 'unnamed_column'
  | 'missing_table'
  | 'ambiguous_key'
  | 'invalid_table'
  | 'no_columns'
  | 'invalid_column'
  | 'missing_column_type'
  | 'duplicate_column'
  | 'invalid_decision_context'
  | 'invalid_source'
  | 'source_required'
  | 'invalid_dialect'
  | 'dbt_model_required'
  | 'dbt_model_not_found'
  | 'model_not_applicable'
  | 'dbt_template';

/** A parse failure. `line` and `column` are 1-based and point at the offending text when it can be located. */
export interface ArtifactError {
  code: ArtifactErrorCode;
  message: string;
  line?: number;
  column?: number;
  /** What to do next, when the parser knows better than "fix the file". */
  suggestion?: string;
}

export type ParseResult = { ok: true; artifact: GovernanceArtifact } | { ok: false; error: ArtifactError };

export interface ArtifactFile {
  fileName: string;
  content: string;
  /** The declared kind (`mimeType` of `POST /api/workspace/definitions`); absent: the file name's extension decides. */
  kind?: ArtifactKind;
  /** The SQL dialect asked for (`--dialect`); absent: the file's `-- dialect:` line, else PostgreSQL. */
  dialect?: Dialect;
  /** The model (or `<source>.<table>`) of a dbt properties file to read (`--model`). */
  model?: string;
}

export interface Position {
  line: number;
  column: number;
}
