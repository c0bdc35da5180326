// Bind parameters of one gate statement (relation.ts, sample.ts and the checks build their SQL with it).

/** Bind parameters of one statement: `add` returns the placeholder of a new one. */
export class Params {
  readonly values: unknown[] = [];
  add = (value: unknown): string => {
    this.values.push(value);
    return `$${this.values.length}`;
  };
}
