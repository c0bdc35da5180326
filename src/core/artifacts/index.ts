export { artifactKindOf, formatArtifactError, parseArtifact } from './parse.js';
export { resolveSource } from './source.js';
export type { SourceResult } from './source.js';
export { formatSourceRef, parseSourceRef } from './identifiers.js';
export type * from './types.js';
export { DIALECTS, DIALECT_NAMES, declaresDialect, isDialect } from './dialect.js';
export type { Dialect } from './dialect.js';
export { declarationYaml } from './dbt.js';
