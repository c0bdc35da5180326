// The CSV reader of `gds records import`: the header mapped onto the table's columns, then each record's
// cells typed by their column; a record whose bytes are not UTF-8, or whose field count is not the header's,
// is a row with a problem, not values.

import type { Readable, TransformCallback } from 'node:stream';
import { Transform } from 'node:stream';
import { CliError, ExitCode } from '../core/errors.js';
import { firstInvalidUtf8 } from '../io/input.js';
import type { TableColumns } from '../contract/types.js';
import type { CsvColumnType } from '../core/csv.js';
import { csvValue, restoreFormula, type CsvCellOptions } from '../core/csv.js';
import { emptyInputError, MAX_LINE_BYTES, notUtf8, type InputRow } from './records-input-row.js';
import { echoed } from '../core/echo.js';
import { onOneLine } from '../core/terminal-text.js';

export async function* csvRows(
  stream: Readable,
  table: TableColumns,
  key: string | undefined,
  options: CsvCellOptions,
  input: string,
): AsyncGenerator<InputRow, void, undefined> {
  const { parse, CsvError } = await import('csv-parse');
  const types = new Map<string, CsvColumnType>(table.columns.map((c) => [c.name, c.type]));
  const utf8 = new Utf8Check();
  const parser = stream.pipe(utf8).pipe(
    parse({
      bom: true,
      relax_column_count: true,
      // A record no request could carry is refused once read that far, not held whole (a quote left open, a
      // file of one endless line): the bound of an NDJSON line (MAX_LINE_BYTES).
      max_record_size: MAX_LINE_BYTES,
      // A blank line (one at the end of the file, most often) is no row; an exported row always has its id.
      skip_empty_lines: true,
      info: true,
      cast: (value, context) => ({ value, quoted: context.quoting }),
    }),
  );
  let header: string[] | undefined;
  let row = 0;
  // Line breaks before the record being read: its own and those of the records before it (csv-parse's
  // `lines` is where a record ends, and counts a CRLF inside quotes as two).
  let breaks = 0;
  let bytesBefore = 0;
  const records = parser as AsyncIterable<{
    record: Array<{ value: string; quoted: boolean }>;
    info: { bytes: number; empty_lines: number };
  }>;
  try {
    for await (const parsed of records) {
      const cells = parsed.record;
      const line = 1 + breaks + parsed.info.empty_lines;
      for (const cell of cells) breaks += lineBreaks(cell.value);
      breaks += 1;
      const bytesBeforeRow = bytesBefore;
      const invalid = utf8.takeBefore(parsed.info.bytes, bytesBefore);
      bytesBefore = parsed.info.bytes;
      if (header === undefined) {
        if (invalid !== undefined) {
          throw new CliError('The CSV header is not UTF-8.', {
            exitCode: ExitCode.Usage,
            code: 'input_not_utf8',
            suggestion:
              'Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8), then run again; nothing was sent.',
          });
        }
        header = cells.map((cell) =>
          (options.rawCells === true ? cell.value : restoreFormula(cell.value)).trim(),
        );
        checkHeader(header, table, types, key);
        continue;
      }
      row += 1;
      if (invalid !== undefined) {
        yield { row, line, problem: notUtf8(invalid.offset - bytesBeforeRow + 1, invalid.byte) };
        continue;
      }
      if (cells.length !== header.length) {
        yield {
          row,
          line,
          problem: {
            code: 'invalid_csv',
            message: `The row has ${cells.length} fields; the header has ${header.length}.`,
          },
        };
        continue;
      }
      yield { row, line, values: valuesOf(header, cells, types, options) };
    }
    if (header === undefined) throw emptyInputError(input);
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw unreadable(error, row);
  }
}

/** A record's values by the header's names, each cell typed by its column. */
function valuesOf(
  header: string[],
  cells: Array<{ value: string; quoted: boolean }>,
  types: Map<string, CsvColumnType>,
  options: CsvCellOptions,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  header.forEach((name, index) => {
    const cell = cells[index];
    if (cell === undefined) return;
    const value = csvValue(cell.value, cell.quoted, types.get(name), options);
    // An empty id field is no id (a row to create).
    if (name === 'id' && value === null) return;
    values[name] = value;
  });
  return values;
}

/** Quoting that no reading makes sense of: where it is, and what CSV wants instead. */
function unreadable(error: Error & { code: string }, row: number): CliError {
  if (error.code === 'CSV_MAX_RECORD_SIZE') {
    // The parser's count of the records it read (the header one of them): the rows before this one may not
    // have been taken yet when it stops, within the same chunk.
    const records = (error as { records?: unknown }).records;
    const long = typeof records === 'number' ? records : row + 1;
    return new CliError(
      `Row ${long} of the CSV is over ${MAX_LINE_BYTES.toLocaleString('en')} bytes, the most a request to the service carries: gds stopped reading there.`,
      {
        exitCode: ExitCode.Usage,
        code: 'row_too_large',
        suggestion:
          'A quote left open makes the rest of the file one field: check the quoting of that row, or shorten it (with --key, rows sent before it are only updated the second time).',
        details: { row: long, limit: MAX_LINE_BYTES },
      },
    );
  }
  return new CliError(`The CSV cannot be read after row ${row}: ${error.message}.`, {
    exitCode: ExitCode.Usage,
    code: 'invalid_csv',
    suggestion:
      'A field holding a quote, a comma or a line break is quoted whole, its quotes doubled ("5"" screen"); fix the file and import it again (with --key, rows sent before it are only updated the second time).',
    details: { row, reason: error.code },
  });
}

/** The line breaks inside a field (CRLF, LF or CR, each one line). */
function lineBreaks(text: string): number {
  let count = 0;
  for (let at = 0; at < text.length; at += 1) {
    const c = text.charCodeAt(at);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(at + 1) !== 0x0a)) count += 1;
  }
  return count;
}

/** A CSV header gds can map: every name a column of the table (or id), none twice or empty, the key among them. */
function checkHeader(
  header: string[],
  table: TableColumns,
  types: Map<string, CsvColumnType>,
  key: string | undefined,
): void {
  const empty = header.flatMap((name, index) => (name === '' ? [index + 1] : []));
  if (empty.length > 0) {
    throw new CliError(`The CSV header has no name for column ${empty.join(', ')}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_columns',
      suggestion: onOneLine(
        `Name every column (${table.columns.map((c) => c.name).join(', ')}) or drop the unnamed ones. Nothing was sent.`,
      ),
      details: { unnamed: empty },
    });
  }
  const twice = [...new Set(header.filter((name, index) => header.indexOf(name) !== index))];
  if (twice.length > 0) {
    throw new CliError(`The CSV header names ${twice.join(', ')} more than once.`, {
      exitCode: ExitCode.Usage,
      code: 'duplicate_columns',
      suggestion:
        'Keep one column of each name (which of the values to keep is yours to say). Nothing was sent.',
      details: { duplicates: twice },
    });
  }
  const unknown = header.filter((name) => name !== 'id' && !types.has(name));
  if (unknown.length > 0) {
    // One line each: the table's name and its columns' are the service's.
    throw new CliError(
      `The CSV header names columns ${onOneLine(table.name)} does not have: ${unknown.join(', ')}.`,
      {
        exitCode: ExitCode.Usage,
        code: 'unknown_columns',
        suggestion: onOneLine(
          `Its columns are ${table.columns.map((c) => c.name).join(', ')}; rename or drop the others. Nothing was sent.`,
        ),
        details: { unknown },
      },
    );
  }
  if (key !== undefined && !header.includes(key)) {
    throw new CliError(`The CSV has no column ${echoed(key)} (--key).`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_key_column',
      suggestion: `Its header is ${header.join(', ')}.`,
    });
  }
}

/**
 * Passes bytes on unchanged and notes where they are not UTF-8 (the CSV parser would decode them into U+FFFD
 * without a word): the row whose bytes hold such a place is refused instead of stored with its letters lost.
 */
class Utf8Check extends Transform {
  /** Bad bytes not yet claimed by a record, in order: their offset in the stream and their value. */
  private readonly bad: Array<{ offset: number; byte: number }> = [];
  /** Bytes checked before `held`. */
  private offset = 0;
  /** The end of the last chunk when it stops inside a character: checked with the next chunk. */
  private held = Buffer.alloc(0);

  /** A UTF-16 (little-endian) file, by its byte order mark: the parser decodes it as such, nothing to check. */
  private utf16: boolean | undefined;

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    this.utf16 ??= bytes[0] === 0xff && bytes[1] === 0xfe;
    if (this.utf16) {
      done(null, bytes);
      return;
    }
    const data = this.held.length > 0 ? Buffer.concat([this.held, bytes]) : bytes;
    const end = data.length - incompleteTail(data);
    this.check(data.subarray(0, end));
    this.held = Buffer.from(data.subarray(end));
    done(null, bytes);
  }

  override _flush(done: TransformCallback): void {
    this.check(this.held);
    this.held = Buffer.alloc(0);
    done();
  }

  /** The first bad byte in bytes [from, to) of the stream; every one before `to` is dropped. */
  takeBefore(to: number, from: number): { offset: number; byte: number } | undefined {
    let found: { offset: number; byte: number } | undefined;
    while (this.bad.length > 0 && (this.bad[0]?.offset ?? to) < to) {
      const place = this.bad.shift();
      if (found === undefined && place !== undefined && place.offset >= from) found = place;
    }
    return found;
  }

  private check(bytes: Buffer): void {
    for (let at = firstInvalidUtf8(bytes); at !== undefined; at = firstInvalidUtf8(bytes, at + 1)) {
      this.bad.push({ offset: this.offset + at, byte: bytes[at] ?? 0 });
    }
    this.offset += bytes.length;
  }
}

/** Bytes at the end of `data` that begin a UTF-8 character the chunk does not finish (0 to 3). */
function incompleteTail(data: Buffer): number {
  for (let back = 1; back <= Math.min(3, data.length); back += 1) {
    const byte = data[data.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}
