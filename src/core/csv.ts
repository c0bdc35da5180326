// CSV as `gds records export` writes it and `gds records import` reads it (RFC 4180): a header line, comma
// separated, fields quoted when they hold a comma, a quote, a line break or surrounding spaces, quotes
// doubled. A null is an empty field and an empty string is a quoted empty field ("") — PostgreSQL's COPY
// CSV convention — so both survive a round trip. Typed columns are read back by the table's column types.

export type CsvColumnType = 'text' | 'integer' | 'numeric' | 'boolean' | 'date' | 'timestamp';

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** One field: null and undefined are empty, strings quoted when they must be, anything else as JSON. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (text === '' || NEEDS_QUOTES.test(text)) return `"${text.replace(/"/g, '""')}"`;
  return text;
}

/** One line of fields, ending in CRLF as RFC 4180 says. */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TRUE = new Set(['true', 't', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'f', 'no', 'n', '0']);

/**
 * A CSV field as the value of a column of `type`: an unquoted empty field is null; numbers and booleans are
 * read as such when they are written as such (else the text is kept, and the table refuses it by name).
 */
export function csvValue(field: string, quoted: boolean, type: CsvColumnType | undefined): unknown {
  if (field === '' && !quoted) return null;
  switch (type) {
    case 'integer': {
      const n = Number(field);
      return INTEGER.test(field.trim()) && Number.isSafeInteger(n) ? n : field;
    }
    case 'numeric':
      return NUMBER.test(field.trim()) ? Number(field) : field;
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
