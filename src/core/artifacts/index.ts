export { artifactKindOf, formatArtifactError, parseArtifact } from './parse.js';
export { resolveSource } from './source.js';
export type { SourceResult } from './source.js';
export { formatSourceRef, parseSourceRef } from './identifiers.js';
export type * from './types.js';
export { definitionSummary, definitionText, sameDefinition } from './compare.js';
export type { DefinitionSummary } from './compare.js';
