/** One problem in a gate1.yml file, placed in its source. */
export interface Diagnostic {
  file: string;
  /** 1-based line and column in the YAML source. */
  line: number;
  column: number;
  /** Where in the document, e.g. `customPredicates[1].sql`; empty for the document itself. */
  path: string;
  /** `error` makes the file invalid; `warning` does not. */
  severity: 'error' | 'warning';
  /** Stable kebab-case code, e.g. `sql-function-not-allowed`, `regex-named-group`, `schema-required`. */
  code: string;
  /** Why, and what to do. */
  message: string;
}

const LINE_BREAKS = /[\n\r\v\f\u0085\u2028\u2029]+/g;
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * The three parts of a compiler-style line (location, severity, the rest), for callers that colour the severity.
 * Each on one line, its line breaks spaces as onOneLine makes them (the service's diagnostics are shown under an
 * error: a line break in one, its severity too, would start a line of gds's own), its other controls `?`.
 */
export function diagnosticParts(d: Diagnostic): [location: string, severity: string, rest: string] {
  const clean = (s: string) => s.replace(LINE_BREAKS, ' ').replace(CONTROL_CHARACTERS, '?');
  const where = d.path ? ` ${d.path}` : '';
  return [
    clean(`${d.file}:${d.line}:${d.column}`),
    // The service's severity may be absent or not a string: what it is, or nothing, never a crash of the error.
    clean(String((d.severity as unknown) ?? '')),
    clean(`${where}: ${d.message} (${d.code})`),
  ];
}

/** A compiler-style line: `gate1.yml:12:9 error customPredicates[1].sql: message (code)`. */
export function formatDiagnostic(d: Diagnostic): string {
  const [location, severity, rest] = diagnosticParts(d);
  return `${location} ${severity}${rest}`;
}

export function countDiagnostics(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number } {
  const errors = diagnostics.filter((d) => d.severity === 'error').length;
  return { errors, warnings: diagnostics.length - errors };
}

/** Orders diagnostics as they appear in the file. */
export function byPosition(a: Diagnostic, b: Diagnostic): number {
  return a.line - b.line || a.column - b.column;
}
