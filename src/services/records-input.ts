// The input readers of `gds records import`: which format a file is, and its rows (CSV, NDJSON, a JSON
// array, from a file or stdin), each numbered with its line, its values or why it cannot be read. CSV is
// read by records-input-csv.ts.

import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import type { Readable } from 'node:stream';
import { CliError, ExitCode } from '../core/errors.js';
import { parseLossless } from '../core/lossless-json.js';
import { firstInvalidUtf8, notUtf8Error } from '../io/input.js';
import type { TableColumns } from '../contract/types.js';
import type { CsvCellOptions } from '../core/csv.js';
import { csvRows } from './records-input-csv.js';
import {
  emptyInputError,
  longLine,
  MAX_LINE_BYTES,
  notUtf8,
  type ImportFormat,
  type InputRow,
} from './records-input-row.js';
import { echoedPath, withPathEchoed } from '../core/echo.js';

/** A JSON array is parsed whole: NDJSON or CSV for anything bigger. */
export const MAX_JSON_BYTES = 256 * 1024 * 1024;

export function formatOf(input: string): ImportFormat {
  const extension = extname(input).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.json') return 'json';
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  if (input === '-') return 'ndjson';
  throw new CliError(`Cannot tell the format of ${echoedPath(input)} from its name.`, {
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
      if (typeof text !== 'string' && 'longBytes' in text) {
        row += 1;
        yield { row, line, problem: longLine(text) };
        continue;
      }
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
        value = parseLossless(text);
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
  yield* csvRows(stream() as Readable, table, key, cells, input);
}

/** A line whose bytes are not UTF-8: reported as such, never decoded into replacement characters. */
export interface NotUtf8Line {
  bytes: Buffer;
}

/** A line over `maxLineBytes`: how many bytes it had (its line break left out). */
export interface LongLine {
  longBytes: number;
  maxLineBytes: number;
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
  maxLineBytes = MAX_LINE_BYTES,
): AsyncGenerator<string | NotUtf8Line | LongLine, void, undefined> {
  let held: Buffer[] = [];
  let heldBytes = 0;
  /** Bytes of a line past `maxLineBytes` read so far (dropped as they come), or -1 while within it. */
  let longBytes = -1;
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
    let bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (longBytes >= 0) {
      // A line past the bound: its bytes are counted and dropped up to its end, then it is one LongLine.
      const end = bytes.indexOf(0x0a);
      if (end < 0) {
        longBytes += bytes.length;
        continue;
      }
      yield { longBytes: longBytes + end, maxLineBytes };
      first = false;
      longBytes = -1;
      bytes = bytes.subarray(end + 1);
    }
    const last = bytes.lastIndexOf(0x0a);
    if (last < 0) {
      if (heldBytes + bytes.length > maxLineBytes) {
        longBytes = heldBytes + bytes.length;
        held = [];
        heldBytes = 0;
        continue;
      }
      // Copied: the stream may reuse its buffer for the next chunk.
      held.push(Buffer.from(bytes));
      heldBytes += bytes.length;
      continue;
    }
    held.push(bytes.subarray(0, last + 1));
    const lines = held.length === 1 ? (held[0] ?? bytes) : Buffer.concat(held);
    held = last + 1 < bytes.length ? [Buffer.from(bytes.subarray(last + 1))] : [];
    heldBytes = held[0]?.length ?? 0;
    if (heldBytes > maxLineBytes) {
      longBytes = heldBytes;
      held = [];
      heldBytes = 0;
    }
    if (lines.length <= maxLineBytes && isUtf8(lines)) {
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
      const line = lines.subarray(start, end);
      if (line.length > maxLineBytes) {
        first = false;
        yield { longBytes: line.length, maxLineBytes };
      } else yield decode(line);
      start = end + 1;
    }
  }
  if (longBytes >= 0) yield { longBytes, maxLineBytes };
  else if (held.length > 0) yield decode(Buffer.concat(held));
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
  if (text.trim() === '') throw emptyInputError(input);
  let value: unknown;
  try {
    value = parseLossless(text);
  } catch (error) {
    throw new CliError(
      `${input === '-' ? '<stdin>' : echoedPath(input)} is not JSON: ${(error as Error).message}`,
      {
        exitCode: ExitCode.Usage,
        code: 'invalid_json',
        suggestion: 'Give a JSON array of objects, or one JSON object per line with --format ndjson.',
      },
    );
  }
  if (!Array.isArray(value)) {
    throw new CliError(`${input === '-' ? '<stdin>' : echoedPath(input)} is not a JSON array of rows.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: 'Give a JSON array of objects, or one JSON object per line with --format ndjson.',
    });
  }
  for (const [index, item] of value.entries()) yield objectRow(item, index + 1);
}

export async function checkReadable(input: string): Promise<void> {
  if (input === '-') return;
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      `Cannot read ${echoedPath(input)}: ${error.code === 'ENOENT' ? 'no such file' : withPathEchoed(error.message, input)}.`,
      {
        exitCode: ExitCode.Usage,
        code: 'input_unreadable',
        suggestion: 'Check the path given to -f.',
      },
    );
  });
  if (!info.isFile()) {
    throw new CliError(`${echoedPath(input)} is not a regular file.`, {
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
