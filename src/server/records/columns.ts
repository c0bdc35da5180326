// A table's columns and the checks on values written to a Mode B table.

export type ColumnType = 'text' | 'integer' | 'numeric' | 'boolean' | 'date' | 'timestamp';

export interface Column {
  name: string;
  type: ColumnType;
  required: boolean;
  /** Declared by the artifact: a foreign key `schema.table.column`, and numeric bounds (Gate 1 checks them). */
  references?: string;
  min?: number;
  max?: number;
}

export interface ValueProblems {
  missing: string[];
  unknown: string[];
  invalid: Array<{ column: string; expected: string }>;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function fits(type: ColumnType, value: unknown): boolean {
  switch (type) {
    case 'text':
      return typeof value === 'string';
    case 'integer':
      // Stored and checked as bigint, read back as a JavaScript number: only integers both hold exactly.
      return Number.isSafeInteger(value);
    case 'numeric':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && DATE.test(value) && !Number.isNaN(Date.parse(value));
    case 'timestamp':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value));
  }
}

/**
 * What is wrong with `values` for these columns: required columns absent or null (unless `partial`,
 * a PATCH, where only present ones are checked), unknown columns (`id` included: it is the
 * record's, not a column), and values of the wrong type. Null is fine for optional columns.
 */
export function checkValues(
  columns: Column[],
  values: Record<string, unknown>,
  partial: boolean,
): ValueProblems | null {
  const byName = new Map(columns.map((c) => [c.name, c]));
  const problems: ValueProblems = { missing: [], unknown: [], invalid: [] };
  for (const column of columns) {
    const value = values[column.name];
    const absent = !(column.name in values);
    if (column.required && (partial ? !absent && value === null : absent || value === null)) {
      problems.missing.push(column.name);
    }
  }
  for (const [name, value] of Object.entries(values)) {
    const column = byName.get(name);
    if (!column) problems.unknown.push(name);
    else if (value !== null && !fits(column.type, value))
      problems.invalid.push({ column: name, expected: column.type });
  }
  const clean = problems.missing.length + problems.unknown.length + problems.invalid.length === 0;
  return clean ? null : problems;
}

/** A one-line explanation of `checkValues` problems, naming the columns. */
export function describeProblems(problems: ValueProblems): string {
  const parts: string[] = [];
  if (problems.missing.length > 0) parts.push(`missing required columns: ${problems.missing.join(', ')}`);
  if (problems.unknown.length > 0) parts.push(`unknown columns: ${problems.unknown.join(', ')}`);
  if (problems.invalid.length > 0) {
    parts.push(
      `wrong types or out of range: ${problems.invalid.map((i) => `${i.column} (expected ${i.expected}${i.expected === 'integer' ? ' from -9007199254740991 to 9007199254740991' : ''})`).join(', ')}`,
    );
  }
  return parts.join('; ');
}
