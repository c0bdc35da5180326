// The WHERE of a list whose optional filters are written only when given. Not `($n IS NULL OR column = $n)`:
// a generic plan (a prepared statement reused, a pooler's server-side prepares, plan_cache_mode =
// force_generic_plan) cannot take that OR as an index condition, so a filter meant to narrow the read to a few
// rows read the workspace's every row. Each combination of the filters given is its own query text instead.

/** Conditions joined by AND, and the query's parameters, each numbered (`$1`, `$2`, …) as it is added. */
export class WhereClause<P = unknown> {
  private readonly conditions: string[] = [];
  private readonly values: P[] = [];

  /** The query's parameters so far, in their numbers' order. */
  get params(): P[] {
    return [...this.values];
  }

  /** The conditions joined by AND; the empty string when there is none. */
  get sql(): string {
    return this.conditions.join(' AND ');
  }

  /** Adds a parameter (one a condition or another part of the query reads) and answers its placeholder. */
  param(value: P): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Adds a condition, written as it is. */
  and(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  /**
   * Adds `condition(placeholder)` with `value` as its parameter when the value is given (neither undefined nor
   * null); otherwise adds nothing, neither condition nor parameter.
   */
  given(value: P | null | undefined, condition: (placeholder: string) => string): this {
    if (value === null || value === undefined) return this;
    return this.and(condition(this.param(value)));
  }
}
