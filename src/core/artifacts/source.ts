import { sourceMessage } from './declaration.js';
import { parseSourceRef } from './identifiers.js';
import type { ArtifactError, GovernanceArtifact, SourceRef } from './types.js';

export type SourceResult = { ok: true; source: SourceRef } | { ok: false; error: ArtifactError };

/**
 * The warehouse object an artifact governs: `--source` (or the `source` field of a definition) wins, else the
 * artifact's own declaration. There is never a fallback to the file name (spec §4.9).
 */
export function resolveSource(artifact: GovernanceArtifact, sourceFlag?: string): SourceResult {
  if (sourceFlag !== undefined) {
    const source = parseSourceRef(sourceFlag);
    return source
      ? { ok: true, source }
      : { ok: false, error: { code: 'invalid_source', message: sourceMessage('--source') } };
  }
  if (artifact.source) return { ok: true, source: artifact.source };
  return {
    ok: false,
    error: {
      code: 'source_required',
      message: `--source <schema.table> is required: ${artifact.table} does not declare its source (a schema-qualified view name in SQL, or a \`source\` key in YAML/JSON)`,
    },
  };
}
