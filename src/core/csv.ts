// CSV as `gds records export` writes it and `gds records import` reads it (RFC 4180): a header line, comma
// separated, fields quoted when they hold a comma, a quote, a line break or surrounding spaces, quotes
// doubled. A null is an empty field and an empty string is a quoted empty field ("") — PostgreSQL's COPY
// CSV convention — so both survive a round trip. Typed columns are read back by the table's column types.
//
// A text cell that a spreadsheet would run as a formula (it starts with =, +, -, @, a tab or a carriage return:
// OWASP's CSV injection) is written with a leading ' unless the caller asks for raw cells, and import takes that
// one ' off again. A text that already starts with quotes before such a character gets one more, so the two
// directions are exact inverses: every text survives export | import unchanged.

import { numberOfText } from './lossless-json.js';

export type CsvColumnType = 'text' | 'integer' | 'numeric' | 'boolean' | 'date' | 'timestamp';

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

const FORMULA_START = /^'*[=+\-@\t\r]/;

export interface CsvCellOptions {
  /** Write text cells as they are, formula-like ones included. */
  rawCells?: boolean;
}

/** A text as a spreadsheet shows it but never runs it: a leading ' before a formula-like start. */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** The text `neutraliseFormula` was given. */
export function restoreFormula(text: string): string {
  return text.startsWith("'") && FORMULA_START.test(text) ? text.slice(1) : text;
}

/**
 * One field: null and undefined are empty, strings quoted when they must be (and neutralised unless
 * `rawCells`), anything else as JSON. Numbers, a negative one included, are never changed.
 */
export function csvField(value: unknown, options: CsvCellOptions = {}): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? options.rawCells === true
        ? value
        : neutraliseFormula(value)
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);
  if (text === '' || NEEDS_QUOTES.test(text)) return `"${text.replace(/"/g, '""')}"`;
  return text;
}

/** One line of fields, ending in CRLF as RFC 4180 says. */
export function csvLine(values: readonly unknown[], options: CsvCellOptions = {}): string {
  return `${values.map((value) => csvField(value, options)).join(',')}\r\n`;
}

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'f', 'no', 'n', '0']);

/**
 * A CSV field as the value of a column of `type`: an unquoted empty field is null; numbers and booleans are
 * read as such when they are written as such (else the text is kept, and the table refuses it by name).
 */
export function csvValue(
  field: string,
  quoted: boolean,
  type: CsvColumnType | undefined,
  options: CsvCellOptions = {},
): unknown {
  if (field === '' && !quoted) return null;
  if (options.rawCells !== true) field = restoreFormula(field);
  switch (type) {
    // A number a double cannot hold (an int8 above 2^53, a numeric(30,6)) is kept to the digit, never rounded.
    case 'integer':
      return INTEGER.test(field.trim()) ? numberOfText(field.trim()) : field;
    case 'numeric':
      return NUMBER.test(field.trim()) ? numberOfText(field.trim()) : field;
    case 'boolean': {
      const word = field.trim().toLowerCase();
      if (TRUE.has(word)) return true;
      if (FALSE.has(word)) return false;
      return field;
    }
    default:
      return field;
  }
}
