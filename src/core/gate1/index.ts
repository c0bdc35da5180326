// The gate1.yml language: schema, validation with positions, and the checks the server reuses.
// Importing it loads PostgreSQL's parser (libpg-query's WebAssembly) for the predicate checks, yaml and the
// schema's validator before anything else runs; the CLI imports validate.js and diagnostic.js instead (see
// validateGate1Lazily).
import { loadPredicateParser } from './predicate-sql.js';
import type { ValidateOptions, ValidationResult } from './validate.js';
import { loadGate1Libraries, validateGate1With } from './validate.js';

const [libraries] = await Promise.all([loadGate1Libraries(), loadPredicateParser()]);

/** Validates the text of a gate1.yml file. Pure: no I/O. Never throws on any input. */
export function validateGate1(text: string, opts: ValidateOptions): ValidationResult {
  return validateGate1With(libraries, text, opts);
}
export type { Diagnostic } from './diagnostic.js';
export { countDiagnostics, diagnosticParts, formatDiagnostic } from './diagnostic.js';
export type { Finding } from './finding.js';
export type { PredicateCheckOptions } from './predicate-sql.js';
export { ALLOWED_CAST_TYPES, ALLOWED_FUNCTIONS, checkPredicateSql } from './predicate-sql.js';
export type { RegexProblem } from './regex-check.js';
export { checkRegex, PG_MAX_REPEAT } from './regex-check.js';
export type {
  CustomPredicate,
  FieldOverride,
  Gate1Document,
  Gate1Severity,
  PatternCheck,
  UniqueCheck,
} from './schema.js';
export { GATE1_SEVERITIES, gate1Schema } from './schema.js';
export type { ValidateOptions, ValidationResult } from './validate.js';
