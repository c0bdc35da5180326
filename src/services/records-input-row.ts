// What the input readers of `gds records import` yield: a row, numbered, with its values or what is wrong
// with it.

import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { CliError, ExitCode } from '../core/errors.js';
import { echoedPath } from '../core/echo.js';

export type ImportFormat = 'csv' | 'ndjson' | 'json';

export interface RowError {
  /** 1-based row of the input (the CSV header is not a row). */
  row: number;
  /** 1-based line of the input where the row starts, when the format has lines. */
  line?: number;
  error: { code: string; message: string; details?: unknown };
}

export interface InputRow {
  row: number;
  line?: number;
  /** The row's text as read (an NDJSON line); other formats are digested from values or problem. */
  text?: string;
  values?: Record<string, unknown>;
  problem?: RowError['error'];
}

/** The problem of a row that is not UTF-8: its first bad byte (1-based in the row), and how to convert the file. */
export function notUtf8(at: number, byte: number): RowError['error'] {
  return {
    code: 'input_not_utf8',
    message:
      `The row is not UTF-8: its byte ${at} is 0x${byte.toString(16).toUpperCase().padStart(2, '0')}, which begins or ` +
      'continues no UTF-8 character (save the file as UTF-8, e.g. iconv -f latin1 -t utf-8).',
  };
}

/**
 * The most bytes of one NDJSON line or CSV record: the service's request body limit, since no request could
 * carry a longer row. A longer one is not held (a line that never ends, `yes | tr -d '\n'`, filled memory until
 * the string could not be made): an NDJSON line's bytes are counted and dropped, and it is one row with a
 * problem; a CSV record that long ends the import (after a quote left open, no reading of the rest is sure).
 */
export const MAX_LINE_BYTES = REQUEST_BODY_LIMIT_BYTES;

/**
 * The problem of a row whose line is over the most bytes read of one (the service's request body limit, which
 * a request of that row alone would pass): the same code as a row too large as JSON (records-import-item.ts).
 */
export function longLine(line: { longBytes: number; maxLineBytes: number }): RowError['error'] {
  return {
    code: 'row_too_large',
    message: `The line is ${line.longBytes.toLocaleString('en')} bytes; a request to the service carries at most ${line.maxLineBytes.toLocaleString('en')}, so gds did not read it.`,
  };
}

/**
 * A CSV or JSON input with nothing in it (no byte but blanks): a closed or forgotten pipe, not a wish to import
 * no rows, which a CSV header alone or a JSON [] says. Empty NDJSON is no rows: `records export` of an empty
 * table writes nothing, and its pipe into `records import` copies nothing.
 */
export function emptyInputError(input: string): CliError {
  return new CliError(
    `${input === '-' ? '<stdin>' : echoedPath(input)} is empty: there are no rows to import.`,
    {
      exitCode: ExitCode.Usage,
      code: 'empty_input',
      suggestion:
        'Check the file, or what is piped in; nothing was sent. To import no rows on purpose, give a CSV header alone, a JSON [] or an empty NDJSON input.',
    },
  );
}
