// The input readers of `gds records import`: which format a file is, and its rows (CSV, NDJSON, a JSON
// array, from a file or stdin), each numbered with its line, its values or why it cannot be read.

import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Readable, TransformCallback } from 'node:stream';
import { Transform } from 'node:stream';
import { CliError, ExitCode } from '../core/errors.js';
import { firstInvalidUtf8, notUtf8Error } from '../io/input.js';
import type { TableColumns } from '../contract/types.js';
import type { CsvColumnType } from '../core/csv.js';
import { csvValue, restoreFormula, type CsvCellOptions } from '../core/csv.js';

export type ImportFormat = 'csv' | 'ndjson' | 'json';

/** A JSON array is parsed whole: NDJSON or CSV for anything bigger. */
export const MAX_JSON_BYTES = 256 * 1024 * 1024;

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

export function formatOf(input: string): ImportFormat {
  const extension = extname(input).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.json') return 'json';
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  if (input === '-') return 'ndjson';
  throw new CliError(`Cannot tell the format of ${input} from its name.`, {
    exitCode: ExitCode.Usage,
    code: 'unknown_format',
    suggestion: 'Pass --format csv, ndjson or json.',
  });
}

/** The input's rows in order, each numbered, with its values or what is wrong with it. */
export async function* readRows(
  input: string,
  format: ImportFormat,
  stdin: NodeJS.ReadableStream,
  table: TableColumns,
  key: string | undefined,
  cells: CsvCellOptions,
): AsyncGenerator<InputRow, void, undefined> {
  const stream = (): NodeJS.ReadableStream => {
    if (input === '-') return stdin;
    return createReadStream(input).on('error', () => undefined);
  };
  await checkReadable(input);
  if (format === 'json') {
    yield* jsonRows(jsonText(input === '-' ? await readAll(stdin) : await readFile(input), input), input);
    return;
  }
  if (format === 'ndjson') {
    let row = 0;
    let line = 0;
    for await (const text of linesOf(stream())) {
      line += 1;
      if (typeof text !== 'string') {
        row += 1;
        const at = firstInvalidUtf8(text.bytes) ?? 0;
        yield { row, line, problem: notUtf8(at + 1, text.bytes[at] ?? 0), text: text.bytes.toString('hex') };
        continue;
      }
      if (text.trim() === '') continue;
      row += 1;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        yield {
          row,
          line,
          problem: { code: 'invalid_json', message: `Not JSON: ${(error as Error).message}` },
          text,
        };
        continue;
      }
      yield { ...objectRow(value, row, line), text };
    }
    return;
  }
  yield* csvRows(stream() as Readable, table, key, cells);
}

/** A line whose bytes are not UTF-8: reported as such, never decoded into replacement characters. */
export interface NotUtf8Line {
  bytes: Buffer;
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The lines of a stream, read as they are needed: the stream's own iterator waits for each chunk to be taken
 * (readline's iterator buffers every line the file gives, however far ahead: a 1M-row file was held whole).
 * Split on the bytes (a newline byte is never inside a UTF-8 character), then each line decoded on its own:
 * one that is not UTF-8 comes as its bytes, so that a Latin-1 file is refused row by row instead of stored
 * with U+FFFD in place of its letters. A byte order mark before the first line is dropped.
 */
export async function* linesOf(
  stream: NodeJS.ReadableStream,
): AsyncGenerator<string | NotUtf8Line, void, undefined> {
  let held: Buffer[] = [];
  let first = true;
  const firstLine = (text: string) => {
    first = false;
    return text.startsWith('\uFEFF') ? text.slice(1) : text;
  };
  const decode = (line: Buffer): string | NotUtf8Line => {
    const bytes = line.at(-1) === 0x0d ? line.subarray(0, -1) : line;
    if (!isUtf8(bytes)) {
      first = false;
      return { bytes: Buffer.from(bytes) };
    }
    const text = bytes.toString('utf8');
    return first ? firstLine(text) : text;
  };
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const last = bytes.lastIndexOf(0x0a);
    if (last < 0) {
      // Copied: the stream may reuse its buffer for the next chunk.
      held.push(Buffer.from(bytes));
      continue;
    }
    held.push(bytes.subarray(0, last + 1));
    const lines = held.length === 1 ? (held[0] ?? bytes) : Buffer.concat(held);
    held = last + 1 < bytes.length ? [Buffer.from(bytes.subarray(last + 1))] : [];
    if (isUtf8(lines)) {
      // The usual case: the chunk's whole lines decoded at once, then cut.
      let text = lines.toString('utf8');
      if (first) text = firstLine(text);
      let start = 0;
      for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
        yield text.slice(start, end > start && text[end - 1] === '\r' ? end - 1 : end);
        start = end + 1;
      }
      continue;
    }
    let start = 0;
    for (let end = lines.indexOf(0x0a); end >= 0; end = lines.indexOf(0x0a, start)) {
      yield decode(lines.subarray(start, end));
      start = end + 1;
    }
  }
  if (held.length > 0) yield decode(Buffer.concat(held));
}

/** The problem of a row that is not UTF-8: its first bad byte (1-based in the row), and how to convert the file. */
function notUtf8(at: number, byte: number): RowError['error'] {
  return {
    code: 'input_not_utf8',
    message:
      `The row is not UTF-8: its byte ${at} is 0x${byte.toString(16).toUpperCase().padStart(2, '0')}, which begins or ` +
      'continues no UTF-8 character (save the file as UTF-8, e.g. iconv -f latin1 -t utf-8).',
  };
}

/** A JSON input's text: a byte order mark dropped; bytes that are not UTF-8 refused (nothing sent). */
function jsonText(bytes: Buffer, input: string): string {
  const body = bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes;
  const invalid = firstInvalidUtf8(body);
  if (invalid !== undefined) throw notUtf8Error(input === '-' ? '<stdin>' : input, body, invalid, 'the rows');
  return body.toString('utf8');
}

function objectRow(value: unknown, row: number, line?: number): InputRow {
  const at = line === undefined ? {} : { line };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      row,
      ...at,
      problem: { code: 'invalid_record', message: 'The row is not a JSON object of column values.' },
    };
  }
  return { row, ...at, values: value as Record<string, unknown> };
}

function* jsonRows(text: string, input: string): Generator<InputRow, void, undefined> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${input === '-' ? '<stdin>' : input} is not JSON: ${(error as Error).message}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: 'Give a JSON array of objects, or one JSON object per line with --format ndjson.',
    });
  }
  if (!Array.isArray(value)) {
    throw new CliError(`${input === '-' ? '<stdin>' : input} is not a JSON array of rows.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: 'Give a JSON array of objects, or one JSON object per line with --format ndjson.',
    });
  }
  for (const [index, item] of value.entries()) yield objectRow(item, index + 1);
}

async function* csvRows(
  stream: Readable,
  table: TableColumns,
  key: string | undefined,
  options: CsvCellOptions,
): AsyncGenerator<InputRow, void, undefined> {
  const { parse, CsvError } = await import('csv-parse');
  const types = new Map<string, CsvColumnType>(table.columns.map((c) => [c.name, c.type]));
  const utf8 = new Utf8Check();
  const parser = stream.pipe(utf8).pipe(
    parse({
      bom: true,
      relax_column_count: true,
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
      const values: Record<string, unknown> = {};
      header.forEach((name, index) => {
        const cell = cells[index];
        if (cell === undefined) return;
        const value = csvValue(cell.value, cell.quoted, types.get(name), options);
        // An empty id field is no id (a row to create).
        if (name === 'id' && value === null) return;
        values[name] = value;
      });
      yield { row, line, values };
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    // Quoting that no reading makes sense of: where it is, and what CSV wants instead.
    throw new CliError(`The CSV cannot be read after row ${row}: ${error.message}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_csv',
      suggestion:
        'A field holding a quote, a comma or a line break is quoted whole, its quotes doubled ("5"" screen"); fix the file and import it again (with --key, rows sent before it are only updated the second time).',
      details: { row, reason: error.code },
    });
  }
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
      suggestion: `Name every column (${table.columns.map((c) => c.name).join(', ')}) or drop the unnamed ones. Nothing was sent.`,
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
    throw new CliError(`The CSV header names columns ${table.name} does not have: ${unknown.join(', ')}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_columns',
      suggestion: `Its columns are ${table.columns.map((c) => c.name).join(', ')}; rename or drop the others. Nothing was sent.`,
      details: { unknown },
    });
  }
  if (key !== undefined && !header.includes(key)) {
    throw new CliError(`The CSV has no column ${key} (--key).`, {
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

export async function checkReadable(input: string): Promise<void> {
  if (input === '-') return;
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(`Cannot read ${input}: ${error.code === 'ENOENT' ? 'no such file' : error.message}.`, {
      exitCode: ExitCode.Usage,
      code: 'input_unreadable',
      suggestion: 'Check the path given to -f.',
    });
  });
  if (!info.isFile()) {
    throw new CliError(`${input} is not a regular file.`, {
      exitCode: ExitCode.Usage,
      code: 'input_unreadable',
      suggestion: 'Give -f a file, or - and pipe the rows in.',
    });
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > MAX_JSON_BYTES) {
      throw new CliError('The JSON array on stdin is over 256 MiB.', {
        exitCode: ExitCode.Usage,
        code: 'input_too_large',
        suggestion: 'Give big inputs as NDJSON (one object per line) or CSV: those are read a row at a time.',
      });
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}
