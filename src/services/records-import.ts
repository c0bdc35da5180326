// `gds records import`: rows from a CSV, NDJSON or JSON (array) file, or stdin, into a table in batches of at
// most the service's limit: with `key`, through `import?mode=upsert&key=` (10,000 rows a request; a row whose
// key matches updates, else it is inserted), else through bulk-update (1,000 items; a row with an `id` updates
// that record, one without is created). Each row is checked against the table's columns before it is sent;
// a row the check or the service refuses is reported (row number, line, reason) and left out, the others go.
// Requests are paced by the rate headers like export's.
//
// A file import keeps a state file (under $XDG_STATE_HOME/gds/imports, named by a hash of the input's path,
// size and modification time, the table and the key): before a batch is sent it names the batch's rows as
// pending, after the service acknowledges it the rows count as done. `--resume` skips the rows done and sends
// the pending batch again: an upsert on a key is the same the second time, so nothing is doubled. Creations
// without a key are not: a pending batch of them is refused on resume (it may or may not have been written).
// An import from stdin keeps a state too (named by the table and the key), with a digest of the rows read up
// to each checkpoint: `--resume` reads the first rows of the new stdin, skips them only when their digest is
// the interrupted run's (the same rows in the same order), and refuses before sending anything when not.
import { isUtf8 } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { link, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Readable, TransformCallback } from 'node:stream';
import { Transform } from 'node:stream';
import { CliError, ExitCode } from '../core/errors.js';
import { stateDir } from '../core/folders.js';
import { firstInvalidUtf8, notUtf8Error } from '../io/input.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import { MAX_BULK_ITEMS, MAX_IMPORT_ROWS } from '../client/areas/records.js';
import { RatePacer } from '../client/rate-pacer.js';
import type { TableColumns } from '../contract/types.js';
import type { CsvColumnType } from '../core/csv.js';
import { csvValue, restoreFormula, type CsvCellOptions } from '../core/csv.js';
import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { checkValues, describeProblems } from '../core/record-values.js';
import { BatchBuffer } from './records-batch.js';
import { removeResumeState, writeResumeState } from './resume-state.js';

export type ImportFormat = 'csv' | 'ndjson' | 'json';

export interface RowError {
  /** 1-based row of the input (the CSV header is not a row). */
  row: number;
  /** 1-based line of the input where the row starts, when the format has lines. */
  line?: number;
  error: { code: string; message: string; details?: unknown };
}

export interface ImportProgress {
  rows: number;
  sent: number;
  refused: number;
  batches: number;
  waitingMs?: number;
}

export interface ImportOptions {
  /** A path, or `-` for stdin. */
  input: string;
  format?: ImportFormat | undefined;
  key?: string | undefined;
  /** Rows per request; at most the service's limit for the mode (the default). */
  batchSize?: number | undefined;
  /** In bulk mode: create every row, an `id` field dropped. */
  ignoreIds?: boolean;
  dryRun?: boolean;
  resume?: boolean;
  /** Start over, dropping the state of an interrupted import of the same input. */
  force?: boolean;
  /** CSV: take cells as they are, a leading ' before =, +, -, @ included (export's neutralising not undone). */
  rawCells?: boolean;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  pacer?: RatePacer;
  onRowError?: (error: RowError) => void;
  /** A sentence for the user before the work starts (a resumed stdin import says what it checks). */
  onNotice?: (message: string) => void;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportResult {
  tableId: string;
  input: string;
  format: ImportFormat;
  mode: 'upsert' | 'bulk';
  key: string | null;
  /** Input rows read (those a resumed run skipped included). */
  rows: number;
  /** Rows the service acknowledged, by this run and any it resumed. */
  sent: number;
  inserted: number;
  updated: number;
  refused: number;
  batches: number;
  resumedFrom: number | null;
  dryRun: boolean;
  requests: number;
  waitedMs: number;
}

interface ImportState {
  version: 1;
  tableId: string;
  key: string | null;
  input: { path: string; size: number; mtimeMs: number };
  /** stdin: sha256 over the rows 1..done as read (see RowDigest), which a resumed run's stdin must match. */
  digest?: string;
  /** Input rows handled (sent and acknowledged, or refused) before the pending batch. */
  done: number;
  sent: number;
  inserted: number;
  updated: number;
  refused: number;
  batches: number;
  /** The batch sent and not yet acknowledged: its input rows [from, to) and whether it creates records. */
  pending: { from: number; to: number; creates: boolean } | null;
}

interface InputRow {
  row: number;
  line?: number;
  /** The row's text as read (an NDJSON line); other formats are digested from values or problem. */
  text?: string;
  values?: Record<string, unknown>;
  problem?: RowError['error'];
}

export type ImportClient = Pick<ApiClient, 'records'>;

/** The largest request body the service takes is 25 MB: a batch is closed well before that. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** The bytes of a request body around its one row: `{"records":[` and `]}`. */
const MAX_BODY_FRAME = '{"records":[]}'.length;
/** A JSON array is parsed whole: NDJSON or CSV for anything bigger. */
const MAX_JSON_BYTES = 256 * 1024 * 1024;

export async function importRecords(
  client: ImportClient,
  tableId: string,
  options: ImportOptions,
): Promise<ImportResult> {
  const stdin = options.stdin ?? process.stdin;
  // A missing file is said as such, before its name is asked for a format it cannot tell.
  if (options.format === undefined) await checkReadable(options.input);
  const format = options.format ?? formatOf(options.input);
  if (options.input === '-' && stdin.isTTY === true) {
    throw new CliError('-f - reads the rows from stdin, which is a terminal.', {
      exitCode: ExitCode.Usage,
      code: 'stdin_is_terminal',
      suggestion: 'Pipe the rows in (gds records export … | gds records import … -f -), or give -f a file.',
    });
  }
  const statePath = options.dryRun === true ? undefined : await stateFileFor(tableId, options);
  const release = statePath === undefined ? undefined : await holdState(statePath, tableId, options);
  try {
    return await importRows(client, tableId, { ...options, format }, stdin, statePath);
  } finally {
    await release?.();
  }
}

async function importRows(
  client: ImportClient,
  tableId: string,
  options: ImportOptions & { format: ImportFormat },
  stdin: NodeJS.ReadableStream & { isTTY?: boolean },
  statePath: string | undefined,
): Promise<ImportResult> {
  const mode = options.key === undefined ? 'bulk' : 'upsert';
  const limit = mode === 'upsert' ? MAX_IMPORT_ROWS : MAX_BULK_ITEMS;
  const batchSize = Math.min(options.batchSize ?? limit, limit);
  const pacer = options.pacer ?? new RatePacer();
  const signal = options.signal;
  const format = options.format;
  const earlier = statePath === undefined ? null : await startState(statePath, options);
  const counts = {
    rows: 0,
    sent: earlier?.sent ?? 0,
    inserted: earlier?.inserted ?? 0,
    updated: earlier?.updated ?? 0,
    refused: earlier?.refused ?? 0,
    batches: earlier?.batches ?? 0,
  };
  let requests = 0;
  const progress = (waitingMs?: number) =>
    options.onProgress?.({
      rows: counts.rows,
      sent: counts.sent,
      refused: counts.refused,
      batches: counts.batches,
      ...(waitingMs === undefined ? {} : { waitingMs }),
    });
  const call = async <T>(request: (onHeaders: RatePacer['observe']) => Promise<T>): Promise<T> => {
    await pacer.wait(signal, (ms) => progress(ms));
    requests += 1;
    return request((headers, sentAt) => pacer.observe(headers, sentAt));
  };

  const table: TableColumns = await call((onHeaders) =>
    client.records.columns(tableId, { signal, onHeaders }),
  );
  if (table.mode === 'MODE_A') {
    // The service refuses every write to it (400 read_only_table): said before a row is read, --dry-run too.
    throw new CliError(
      `Table ${table.name} is a Mode A (connector-backed) table: its rows are read from the warehouse and the service never writes them.`,
      {
        exitCode: ExitCode.Refused,
        code: 'read_only_table',
        suggestion:
          'Change the data in the warehouse object, or import into a Mode B table. Nothing was sent.',
        details: { tableId, mode: table.mode },
      },
    );
  }
  if (options.key !== undefined && !table.columns.some((c) => c.name === options.key)) {
    throw new CliError(`--key ${options.key} is not a column of ${table.name}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_key_column',
      suggestion: `Pick a column that identifies a row: ${table.columns.map((c) => c.name).join(', ')}.`,
    });
  }
  const inputIdentity =
    options.input === '-' ? { path: '-', size: 0, mtimeMs: 0 } : await identity(options.input);
  // stdin cannot be told apart by its identity: what is read of it is digested instead.
  const digest = options.input === '-' && statePath !== undefined ? new RowDigest() : undefined;
  // A fresh run starts from the digest of no rows: a state saved while its first batch is in flight has one,
  // so that --resume (which skips nothing then) is not refused for want of it.
  let digestAtFrom = earlier?.digest ?? digest?.hex();
  // Rows refused before the batch being sent: a resumed run reads that batch again and refuses them again.
  let refusedAtFrom = counts.refused;
  const stateOf = (done: number, pending: ImportState['pending'], rowsDigest?: string): ImportState => ({
    version: 1,
    tableId,
    key: options.key ?? null,
    input: inputIdentity,
    ...(rowsDigest === undefined ? {} : { digest: rowsDigest }),
    done,
    ...counts,
    ...(pending === null ? {} : { refused: refusedAtFrom }),
    pending,
  });
  const save = async (state: ImportState) => {
    if (statePath === undefined) return;
    await writeResumeState(statePath, state, 0o600);
  };
  const refuse = (row: number, line: number | undefined, error: RowError['error']) => {
    counts.refused += 1;
    options.onRowError?.({ row, ...(line === undefined ? {} : { line }), error });
  };

  const skip = earlier?.pending?.from ?? earlier?.done ?? 0;
  if (earlier !== null && digest !== undefined && (earlier.digest === undefined || earlier.done !== skip)) {
    throw new CliError('The state of the interrupted import from stdin has no digest of the rows it read.', {
      exitCode: ExitCode.Usage,
      code: 'resume_state_unknown',
      suggestion: 'Pass --force to send every row again.',
    });
  }
  if (earlier !== null && digest !== undefined && skip > 0) {
    options.onNotice?.(
      `Resuming from stdin: the first ${skip.toLocaleString('en')} rows must be the interrupted run's, in the same order; they are checked against its digest and skipped.`,
    );
  }
  /** A resumed stdin import: the rows read so far (1..skip) must be the interrupted run's. */
  const checkSkipped = (read: number) => {
    if (digest === undefined || earlier === null || skip === 0) return;
    if (read === skip && digest.hex() === earlier.digest) return;
    throw new CliError(
      read < skip
        ? `stdin ended after ${read.toLocaleString('en')} rows; the interrupted import had read ${skip.toLocaleString('en')}. Nothing was sent.`
        : `The first ${skip.toLocaleString('en')} rows on stdin are not the ones the interrupted import read. Nothing was sent.`,
      {
        exitCode: ExitCode.Usage,
        code: 'resume_input_differs',
        suggestion:
          'Pipe in the same rows in the same order (an export of an unchanged table gives them), or pass --force instead of --resume to send every row again.',
        details: { skip, read },
      },
    );
  };
  if (earlier?.pending?.creates === true && options.key === undefined) {
    throw new CliError(
      `The interrupted import was sending rows ${earlier.pending.from + 1}-${earlier.pending.to} when it stopped; they create records, and whether the service wrote them is unknown.`,
      {
        exitCode: ExitCode.Conflict,
        code: 'resume_in_doubt',
        suggestion:
          'Look at the table (gds records list) and either pass --force to send every row again, or import with --key <column> next time: an upsert on a key can be sent twice without doubling a row.',
        details: { pending: earlier.pending, done: earlier.done },
      },
    );
  }

  /**
   * The service refused the batch in flight with an answer (none of it was written): the state goes back to
   * before it, so that a run again is not told the batch is in doubt; with nothing done, there is no state.
   */
  const unsent = async () => {
    if (statePath === undefined) return;
    if (batchFrom === 0 && earlier === null) await removeResumeState(statePath);
    else await save({ ...stateOf(batchFrom, null, digestAtFrom), refused: refusedAtFrom });
  };

  let warnedForeignIds = false;
  const batch = new BatchBuffer(mode === 'upsert' ? '{"rows":[' : '{"records":[', batchSize);
  let batchFrom = skip;
  const flush = async (to: number) => {
    if (batch.length === 0) {
      digestAtFrom = digest?.hex();
      if (to > batchFrom) await save(stateOf(to, null, digestAtFrom));
      batchFrom = to;
      refusedAtFrom = counts.refused;
      return;
    }
    const creates = batch.creates;
    await save(stateOf(batchFrom, { from: batchFrom, to, creates }, digestAtFrom));
    while (batch.length > 0) {
      try {
        const items = batch.length;
        const result = await call((onHeaders) =>
          mode === 'upsert'
            ? client.records.import(tableId, batch.body(), options.key ?? '', { signal, onHeaders })
            : client.records
                .bulkUpdate(tableId, batch.body(), { signal, onHeaders })
                .then((r) => ({ inserted: r.created, updated: r.updated })),
        );
        counts.sent += items;
        counts.inserted += result.inserted;
        counts.updated += result.updated;
        break;
      } catch (error) {
        const refusedAt = refusedItem(error, batch);
        const item = refusedAt === undefined ? undefined : batch.place(refusedAt);
        if (refusedAt === undefined || item === undefined) {
          if (answeredUnwritten(error)) await unsent();
          throw error;
        }
        refuse(item.row, item.line, serviceError(error));
        if (item.id !== undefined && !warnedForeignIds && (error as ApiError).status === 404) {
          // The service names one such item per request: rows exported from another table would cost a
          // request each, every one refused. Said once, while there is time to stop.
          warnedForeignIds = true;
          options.onNotice?.(
            `Row ${item.row} updates record ${item.id}, which ${table.name} does not have; each such row costs a request of its own. ` +
              'If these rows come from another table, stop (Ctrl-C) and import with --ignore-ids to create them, or with --key <column> to upsert.',
          );
        }
        batch.remove(refusedAt);
      }
    }
    counts.batches += 1;
    digestAtFrom = digest?.hex();
    await save(stateOf(to, null, digestAtFrom));
    batch.clear();
    batchFrom = to;
    refusedAtFrom = counts.refused;
    progress();
  };

  const columns = new Map(table.columns.map((c) => [c.name, c]));
  for await (const input of readRows(options.input, format, stdin, table, options.key, {
    rawCells: options.rawCells === true,
  })) {
    // From here to the next row the digest covers rows 1..input.row - 1: a flush below is of those rows.
    digest?.next(input);
    if (input.row === skip + 1) checkSkipped(skip);
    counts.rows = input.row;
    if (input.row <= skip) continue;
    const problem = input.problem ?? (input.values === undefined ? undefined : check(input.values));
    if (problem !== undefined) {
      refuse(input.row, input.line, problem);
      continue;
    }
    const values = { ...(input.values ?? {}) };
    let id: string | undefined;
    if ('id' in values && !columns.has('id')) {
      if (mode === 'bulk' && options.ignoreIds !== true) id = String(values.id);
      delete values.id;
    }
    const json = JSON.stringify(
      mode === 'upsert' ? values : id === undefined ? { data: values } : { id, data: values },
    );
    const bytes = Buffer.byteLength(json);
    if (bytes + MAX_BODY_FRAME > REQUEST_BODY_LIMIT_BYTES) {
      // Alone in a request it would still be over the service's limit (413): no batch can carry it.
      refuse(input.row, input.line, {
        code: 'row_too_large',
        message: `The row is ${bytes.toLocaleString('en')} bytes as JSON; a request to the service carries at most ${REQUEST_BODY_LIMIT_BYTES.toLocaleString('en')}.`,
      });
      continue;
    }
    if (options.dryRun === true) continue;
    if (batch.length > 0 && (batch.full || batch.byteLength + bytes + 1 > MAX_BATCH_BYTES)) {
      await flush(input.row - 1);
    }
    batch.push(json, {
      row: input.row,
      ...(input.line === undefined ? {} : { line: input.line }),
      ...(id === undefined ? {} : { id }),
    });
  }
  digest?.end();
  if (counts.rows <= skip) checkSkipped(counts.rows);
  if (options.dryRun !== true) await flush(counts.rows);
  if (statePath !== undefined) await removeResumeState(statePath);
  progress();

  function check(values: Record<string, unknown>): RowError['error'] | undefined {
    const row = { ...values };
    if (!columns.has('id')) delete row.id;
    if (options.key !== undefined && (row[options.key] === undefined || row[options.key] === null)) {
      return { code: 'missing_key', message: `The row has no value for the key column ${options.key}.` };
    }
    // An upsert may update (only the given columns) or insert (every required one): the service says which.
    const creates = mode === 'bulk' && (options.ignoreIds === true || values.id === undefined);
    const problems = checkValues(table.columns, row, !creates);
    if (problems === null) return undefined;
    return {
      code: 'invalid_record',
      message: `The row does not fit table ${table.name}: ${describeProblems(problems, table.columns)}.`,
      details: problems,
    };
  }

  return {
    tableId,
    input: options.input === '-' ? '<stdin>' : options.input,
    format,
    mode,
    key: options.key ?? null,
    rows: counts.rows,
    sent: counts.sent,
    inserted: counts.inserted,
    updated: counts.updated,
    refused: counts.refused,
    batches: counts.batches,
    resumedFrom: earlier === null ? null : skip,
    dryRun: options.dryRun === true,
    requests,
    waitedMs: pacer.waitedMs,
  };
}

/** The item of a batch the service refused by itself, by the index or record id its 400/404 names. */
function refusedItem(error: unknown, batch: BatchBuffer): number | undefined {
  if (!(error instanceof ApiError) || (error.status !== 400 && error.status !== 404)) return undefined;
  const details = error.details as { index?: unknown; recordId?: unknown } | null | undefined;
  if (typeof details?.index === 'number' && details.index >= 0 && details.index < batch.length)
    return details.index;
  if (typeof details?.recordId === 'string') {
    const at = batch.indexOfId(details.recordId);
    if (at >= 0) return at;
  }
  return undefined;
}

/**
 * An error that is the service's answer refusing the request (a 4xx: 401, 403, 404, 413, 429, …): nothing of it
 * was written. A 5xx (a proxy's 502 may come after the work) or no answer at all leaves it unknown.
 */
function answeredUnwritten(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408;
}

function serviceError(error: unknown): RowError['error'] {
  const api = error as ApiError;
  return {
    code: api.code,
    message: api.message,
    ...(api.details === undefined ? {} : { details: api.details }),
  };
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
async function* readRows(
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

async function checkReadable(input: string): Promise<void> {
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

/**
 * sha256 over the rows read, each as its text (an NDJSON line) or its values or problem as JSON, one after the
 * other; a row is taken in when the next one comes (or at the end), so that in between the digest is of the
 * rows before the current one.
 */
class RowDigest {
  private readonly hash = createHash('sha256');
  private held: InputRow | undefined;

  next(row: InputRow): void {
    this.end();
    this.held = row;
  }

  end(): void {
    const row = this.held;
    if (row === undefined) return;
    this.held = undefined;
    this.hash.update(row.text ?? JSON.stringify(row.values ?? row.problem ?? null));
    this.hash.update('\n');
  }

  hex(): string {
    return this.hash.copy().digest('hex');
  }
}

async function identity(input: string): Promise<ImportState['input']> {
  const info = await stat(input);
  if (info.size > MAX_JSON_BYTES && formatOf(input) === 'json') {
    throw new CliError(`${input} is over 256 MiB, and a JSON array is read whole.`, {
      exitCode: ExitCode.Usage,
      code: 'input_too_large',
      suggestion: 'Give big inputs as NDJSON (one object per line) or CSV: those are read a row at a time.',
    });
  }
  return { path: await realpath(input), size: info.size, mtimeMs: Math.floor(info.mtimeMs) };
}

/**
 * The state file of importing this input into this table on this key. stdin has one per table and key (what
 * was read of it is digested in the state instead).
 */
async function stateFileFor(tableId: string, options: ImportOptions): Promise<string> {
  let named: unknown[];
  if (options.input === '-') {
    named = ['-', tableId, options.key ?? null];
  } else {
    await checkReadable(options.input);
    const input = await identity(options.input);
    named = [input.path, input.size, input.mtimeMs, tableId, options.key ?? null];
  }
  const hash = createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 32);
  const env = options.env ?? process.env;
  const dir = join(stateDir(env), 'imports');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${hash}.json`);
}

/**
 * Holds `<state>.lock` while an import runs, and gives back its release. Two imports of the same input (the
 * same file, or stdin) into one table on one key share a state file: the second would have taken the first's
 * place for an interrupted run's, and each would overwrite the other's. The lock names its process; one whose
 * process is gone (a kill, Ctrl-C) is taken over.
 */
async function holdState(
  path: string,
  tableId: string,
  options: ImportOptions,
): Promise<() => Promise<void>> {
  const lock = `${path}.lock`;
  // Written whole beside it, then linked into place (which fails when the lock exists): a lock is never seen
  // empty. Created with 'wx' and then written, another import starting at that moment read no pid, took the
  // lock for a dead one's, removed it and ran too.
  const mine = `${lock}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(mine, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; ; attempt += 1) {
      try {
        await link(mine, lock);
        // Ctrl-C ends gds with process.exit (130): the lock goes then too; only a kill leaves it (taken over).
        const onExit = () => rmSync(lock, { force: true });
        process.once('exit', onExit);
        return async () => {
          process.off('exit', onExit);
          await rm(lock, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const pid = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
      // A second EEXIST: another import took the lock between its removal and ours.
      if (attempt > 0 || (Number.isSafeInteger(pid) && pid > 0 && processRuns(pid))) {
        const what = options.input === '-' ? 'stdin' : options.input;
        throw new CliError(
          `Another gds import of ${what} into ${tableId}${options.key === undefined ? '' : ` on --key ${options.key}`} is running (process ${pid}).`,
          {
            exitCode: ExitCode.Conflict,
            code: 'import_running',
            suggestion:
              options.input === '-'
                ? `Wait for it to end: imports from stdin into one table on one key go one at a time (each keeps its place for --resume); to load several inputs at once, write each to a file and import the files. If no import runs, remove ${lock}.`
                : `Wait for it to end: the same file imported twice at once would send every row twice. If no import runs, remove ${lock}.`,
            details: { pid, lock },
          },
        );
      }
      await rm(lock, { force: true });
    }
  } finally {
    await rm(mine, { force: true });
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function startState(path: string, options: ImportOptions): Promise<ImportState | null> {
  let state: ImportState | null;
  try {
    state = JSON.parse(await readFile(path, 'utf8')) as ImportState;
  } catch {
    state = null;
  }
  if (state === null) return null;
  if (options.force === true) {
    await removeResumeState(path);
    return null;
  }
  if (options.resume !== true) {
    throw new CliError(
      `An interrupted import of ${options.input === '-' ? 'stdin' : options.input} into this table stopped after ${state.done} rows.`,
      {
        exitCode: ExitCode.Usage,
        code: 'import_interrupted',
        suggestion: 'Pass --resume to continue it where it stopped, or --force to send every row again.',
        details: { done: state.done, pending: state.pending },
      },
    );
  }
  return state;
}
