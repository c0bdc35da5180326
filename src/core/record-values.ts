// A table's columns and the checks on values written to a Mode B table: the service checks every write with
// them, and `gds records import` checks each row with them before sending it (and for --dry-run).

export type ColumnType = 'text' | 'integer' | 'numeric' | 'boolean' | 'date' | 'timestamp';

export interface Column {
  name: string;
  type: ColumnType;
  required: boolean;
  /** Declared by the artifact: a foreign key `schema.table.column`, and numeric bounds (Gate 1 checks them). */
  references?: string;
  min?: number;
  max?: number;
  /**
   * The storage the column declares or the warehouse reports: an integer's size in bytes (int2, int4, int8)
   * and a numeric's precision and scale (`numeric(p,s)`). Absent: any exact integer, any finite number.
   */
  integerBytes?: 2 | 4 | 8;
  precision?: number;
  scale?: number;
}

export interface ValueProblems {
  missing: string[];
  unknown: string[];
  invalid: Array<{ column: string; expected: string }>;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** ISO 8601 as PostgreSQL reads it: a date, then a time (`T` or a space), then a zone (`Z`, `+05`, `-08:00`). */
const TIMESTAMP =
  /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?: ?(?:Z|[+-](\d{2})(?::?(\d{2}))?))?)?$/;
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A day of the calendar, `YYYY-MM-DD` from 0001-01-01: what PostgreSQL's `date` reads (the certified view casts
 * the stored text with it). `Date.parse` is no check: it takes 2024-02-30 (as March 1) and 0000-01-01.
 */
function isCalendarDay(text: string): boolean {
  const match = DATE.exec(text);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] ?? 0));
}

/** A timestamp PostgreSQL's `timestamptz` reads, in ISO 8601 (`Date.parse` also takes `hello 5` and `1`). */
function isTimestamp(text: string): boolean {
  const match = TIMESTAMP.exec(text);
  if (match === null || !isCalendarDay(match[1] ?? '')) return false;
  const [hour, minute, second, zoneHours, zoneMinutes] = match.slice(2).map((part) => Number(part ?? 0));
  return (
    (hour ?? 0) <= 23 &&
    (minute ?? 0) <= 59 &&
    (second ?? 0) <= 59 &&
    (zoneHours ?? 0) <= 15 &&
    (zoneMinutes ?? 0) <= 59
  );
}

/** Integer type names (declared, or information_schema's `data_type`) and their size in bytes. */
export const INTEGER_BYTES: Readonly<Record<string, 2 | 4 | 8>> = {
  smallint: 2,
  int2: 2,
  integer: 4,
  int: 4,
  int4: 4,
  bigint: 8,
  int8: 8,
};

const INTEGER_RANGE: Record<2 | 4 | 8, [number, number]> = {
  2: [-32_768, 32_767],
  4: [-2_147_483_648, 2_147_483_647],
  // int8 holds more, but a JavaScript number is exact only within ±(2^53 − 1): the stricter bound wins.
  8: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** Digits after the decimal point of a number's shortest exact decimal form (1.25 → 2, 1e-7 → 7, 3e20 → 0). */
export function fractionDigits(value: number): number {
  const [mantissa = '0', exponent = '0'] = value.toExponential().split('e');
  const digits = mantissa.split('.')[1]?.length ?? 0;
  return Math.max(0, digits - Number(exponent));
}

/** The type a value must have, as messages name it: `integer (int4)`, `numeric(10,2)`. */
export function expectedType(column: Column): string {
  if (column.type === 'integer' && column.integerBytes !== undefined)
    return `integer (int${column.integerBytes})`;
  if (column.type === 'numeric' && column.precision !== undefined)
    return `numeric(${column.precision},${column.scale ?? 0})`;
  return column.type;
}

/** What a value of this column may be, for the message: a range or digits. */
function rangeOf(column: Column): string {
  if (column.type === 'integer') {
    const [min, max] = INTEGER_RANGE[column.integerBytes ?? 8];
    return ` from ${min} to ${max}`;
  }
  if (column.type === 'date') return ': a day of the calendar, YYYY-MM-DD';
  if (column.type === 'timestamp') return ': ISO 8601, e.g. 2024-06-01T12:00:00Z';
  if (column.type === 'numeric' && column.precision !== undefined) {
    const scale = column.scale ?? 0;
    return `: at most ${column.precision - scale} digits before the point and ${scale} after`;
  }
  return '';
}

function fits(column: Column, value: unknown): boolean {
  switch (column.type) {
    case 'text':
      return typeof value === 'string';
    case 'integer': {
      // Stored and checked as bigint, read back as a JavaScript number: only integers both hold exactly.
      if (!Number.isSafeInteger(value)) return false;
      const [min, max] = INTEGER_RANGE[column.integerBytes ?? 8];
      return (value as number) >= min && (value as number) <= max;
    }
    case 'numeric': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (column.precision === undefined) return true;
      // numeric(p,s): PostgreSQL would round away digits past the scale (silently changing the value) and
      // refuse more than p − s digits before the point: both are refused here, before anything is stored.
      const scale = column.scale ?? 0;
      return fractionDigits(value) <= scale && Math.abs(value) < 10 ** (column.precision - scale);
    }
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && isCalendarDay(value);
    case 'timestamp':
      return typeof value === 'string' && isTimestamp(value);
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
    else if (value !== null && !fits(column, value))
      problems.invalid.push({ column: name, expected: expectedType(column) });
  }
  const clean = problems.missing.length + problems.unknown.length + problems.invalid.length === 0;
  return clean ? null : problems;
}

/** A one-line explanation of `checkValues` problems, naming the columns. */
export function describeProblems(problems: ValueProblems, columns: Column[]): string {
  const range = (name: string) => {
    const column = columns.find((c) => c.name === name);
    return column === undefined ? '' : rangeOf(column);
  };
  const parts: string[] = [];
  if (problems.missing.length > 0) parts.push(`missing required columns: ${problems.missing.join(', ')}`);
  if (problems.unknown.length > 0) parts.push(`unknown columns: ${problems.unknown.join(', ')}`);
  if (problems.invalid.length > 0) {
    parts.push(
      `wrong types or out of range: ${problems.invalid.map((i) => `${i.column} (expected ${i.expected}${range(i.column)})`).join(', ')}`,
    );
  }
  return parts.join('; ');
}
