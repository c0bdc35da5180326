// A table's columns and the checks on values written to a Mode B table: the service checks every write with
// them, and `gds records import` checks each row with them before sending it (and for --dry-run).
import { isRawJson } from './lossless-json.js';

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

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

// Read character by character, allocating nothing: an import checks every row's dates with them, and a
// regular expression's match arrays for each of 1,000,000 rows grew the CLI's heap by a third.

/** The number written by `count` digits at `at`, or -1 when they are not all digits. */
function digitsAt(text: string, at: number, count: number): number {
  if (at + count > text.length) return -1;
  let value = 0;
  for (let i = at; i < at + count; i += 1) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * `YYYY-MM-DD` at the start of `text`, a day of the calendar from 0001-01-01: what PostgreSQL's `date` reads
 * (the certified view casts the stored text with it). `Date.parse` is no check: it takes 2024-02-30 (as
 * March 1) and 0000-01-01.
 */
function calendarDayAtStart(text: string): boolean {
  if (text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d) return false;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : (MONTH_DAYS[month - 1] ?? 0));
}

function isCalendarDay(text: string): boolean {
  return text.length === 10 && calendarDayAtStart(text);
}

/**
 * A timestamp PostgreSQL's `timestamptz` reads, in ISO 8601: a day, then a time after `T` or a space
 * (`HH:MM`, `:SS`, `.fraction`), then a zone (`Z`, `+05`, `-08:00`, `+0530`, `UTC`, a space before it allowed).
 * `Date.parse` also takes `hello 5` and `1`.
 */
function isTimestamp(text: string): boolean {
  if (text.length < 10 || !calendarDayAtStart(text)) return false;
  if (text.length === 10) return true;
  let at = 10;
  const separator = text.charCodeAt(at);
  if (separator !== 0x54 && separator !== 0x20) return false; // T or a space
  const hour = digitsAt(text, at + 1, 2);
  const minute = digitsAt(text, at + 4, 2);
  if (text.charCodeAt(at + 3) !== 0x3a || hour < 0 || hour > 23 || minute < 0 || minute > 59) return false;
  at += 6;
  if (text.charCodeAt(at) === 0x3a) {
    const second = digitsAt(text, at + 1, 2);
    if (second < 0 || second > 59) return false;
    at += 3;
    if (text.charCodeAt(at) === 0x2e) {
      const start = at + 1;
      for (at = start; digitsAt(text, at, 1) >= 0; at += 1);
      if (at === start) return false;
    }
  }
  if (at === text.length) return true;
  if (text.charCodeAt(at) === 0x20) at += 1;
  // UTC or GMT by name, as BigQuery writes timestamps (2024-06-01 12:00:00 UTC) and PostgreSQL reads them.
  const named = text.slice(at).toUpperCase();
  if (named === 'UTC' || named === 'GMT') return true;
  const zone = text.charCodeAt(at);
  if (zone === 0x5a) return at + 1 === text.length; // Z
  if (zone !== 0x2b && zone !== 0x2d) return false; // + or -
  const zoneHours = digitsAt(text, at + 1, 2);
  if (zoneHours < 0 || zoneHours > 15) return false;
  at += 3;
  if (at === text.length) return true;
  if (text.charCodeAt(at) === 0x3a) at += 1;
  const zoneMinutes = digitsAt(text, at, 2);
  return zoneMinutes >= 0 && zoneMinutes <= 59 && at + 2 === text.length;
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

const INTEGER_RANGE: Record<2 | 4 | 8, [bigint, bigint]> = {
  2: [-32_768n, 32_767n],
  4: [-2_147_483_648n, 2_147_483_647n],
  // A value above 2^53 is read as its own text (lossless-json.ts), never as a rounded double.
  8: [-9_223_372_036_854_775_808n, 9_223_372_036_854_775_807n],
};

/** The integer a value holds exactly: a JSON number, or the text of one no double holds; else undefined. */
function integerOf(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : undefined;
  if (!isRawJson(value) || !/^-?\d+$/.test(value.rawJSON)) return undefined;
  return BigInt(value.rawJSON);
}

/**
 * The digits before and after the point of a decimal number's text (`-0012.3400e1` → 3 and 1), exact
 * whatever its length, for a number no double holds.
 */
function decimalShape(text: string): { before: number; after: number } {
  const [mantissa = '', exponent = '0'] = text.replace(/^[-+]/, '').toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  const digits = whole + fraction;
  const significant = digits.replace(/^0+/, '');
  const point = whole.length + Number(exponent) - (digits.length - significant.length);
  const kept = significant.replace(/0+$/, '');
  if (kept === '') return { before: 0, after: 0 };
  return { before: Math.max(0, point), after: Math.max(0, kept.length - point) };
}

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
      const integer = integerOf(value);
      if (integer === undefined) return false;
      const [min, max] = INTEGER_RANGE[column.integerBytes ?? 8];
      return integer >= min && integer <= max;
    }
    case 'numeric': {
      // A number no double holds (123456789012345678.123456) comes as its own text and is kept to the digit.
      const raw = isRawJson(value) ? value.rawJSON : undefined;
      if (raw === undefined && (typeof value !== 'number' || !Number.isFinite(value))) return false;
      if (column.precision === undefined) return true;
      // numeric(p,s): PostgreSQL would round away digits past the scale (silently changing the value) and
      // refuse more than p − s digits before the point: both are refused here, before anything is stored.
      const scale = column.scale ?? 0;
      if (raw !== undefined) {
        const shape = decimalShape(raw);
        return shape.after <= scale && shape.before <= column.precision - scale;
      }
      return (
        fractionDigits(value as number) <= scale &&
        Math.abs(value as number) < 10 ** (column.precision - scale)
      );
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
