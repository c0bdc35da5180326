/** One problem found by a single check (regex or SQL), before it is placed in a file. */
export interface Finding {
  /** Stable kebab-case code, e.g. `sql-function-not-allowed`. */
  code: string;
  severity: 'error' | 'warning';
  /** Why it is refused and what to do instead. */
  message: string;
  /** Offset in the checked text where the problem starts, when known. */
  index?: number;
}
