// A declaration's JSON artifact with the value it was written from, so that `gds plan` compares what a model
// declares without parsing back the text the reader has just written (about 17 MB of JSON at 2,000 models).
// The value is trusted only while the artifact's content is the text written from it: a caller that puts
// other content in the artifact (`{ ...artifact, content }`) gets that content parsed, as before.
// Buys a no-change plan of 2,000 models 35 -> 15 ms of the main thread (docs/bench.md, fifteenth pass).
import type { DbtDeclaration, DeclaredArtifact } from './types.js';

/** The artifact of `value`, written as `gds push` would send it (two-space JSON, a final newline). */
export function declaredArtifact(fileName: string, value: Record<string, unknown>): DeclaredArtifact {
  const content = `${JSON.stringify(value, null, 2)}\n`;
  return { fileName, mimeType: 'json', content, written: { text: content, value } };
}

/** The value the artifact's content is the JSON text of, when it was kept with it; never to be changed. */
export function writtenValue(artifact: DeclaredArtifact): Record<string, unknown> | undefined {
  const written = artifact.written;
  return written !== undefined && written.text === artifact.content ? written.value : undefined;
}

/**
 * The artifact with its value changed by `change`, which gets a copy of the top-level object (the value kept,
 * else the content parsed) and copies whatever it changes below it.
 */
export function changedArtifact(
  artifact: DeclaredArtifact,
  change: (value: Record<string, unknown>) => Record<string, unknown>,
): DeclaredArtifact {
  const kept = writtenValue(artifact);
  const value = kept === undefined ? (JSON.parse(artifact.content) as Record<string, unknown>) : { ...kept };
  return declaredArtifact(artifact.fileName, change(value));
}

/** The declaration with `columns` for its own, in its artifact too. */
export function withColumns(declaration: DbtDeclaration, columns: DbtDeclaration['columns']): DbtDeclaration {
  return {
    ...declaration,
    columns,
    artifact: changedArtifact(declaration.artifact, (artifact) => {
      artifact['columns'] = columns;
      return artifact;
    }),
  };
}
