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
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { extname, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { CliError, ExitCode } from '../cli/errors.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import { MAX_BULK_ITEMS, MAX_IMPORT_ROWS } from '../client/areas/records.js';
import { RatePacer } from '../client/rate-pacer.js';
import type { TableColumns } from '../contract/types.js';
import type { CsvColumnType } from '../core/csv.js';
import { csvValue } from '../core/csv.js';
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
/** A JSON array is parsed whole: NDJSON or CSV for anything bigger. */
const MAX_JSON_BYTES = 256 * 1024 * 1024;

export async function importRecords(
  client: ImportClient,
  tableId: string,
  options: ImportOptions,
): Promise<ImportResult> {
  const mode = options.key === undefined ? 'bulk' : 'upsert';
  const limit = mode === 'upsert' ? MAX_IMPORT_ROWS : MAX_BULK_ITEMS;
  const batchSize = Math.min(options.batchSize ?? limit, limit);
  const pacer = options.pacer ?? new RatePacer();
  const signal = options.signal;
  const stdin = options.stdin ?? process.stdin;
  const format = options.format ?? formatOf(options.input);
  if (options.input === '-' && stdin.isTTY === true) {
    throw new CliError('-f - reads the rows from stdin, which is a terminal.', {
      exitCode: ExitCode.Usage,
      code: 'stdin_is_terminal',
      suggestion: 'Pipe the rows in (gds records export … | gds records import … -f -), or give -f a file.',
    });
  }
  const statePath = options.dryRun === true ? undefined : await stateFileFor(tableId, options);
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
  let digestAtFrom = earlier?.digest;
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
        if (refusedAt === undefined) throw error;
        const item = batch.place(refusedAt);
        if (item === undefined) throw error;
        refuse(item.row, item.line, serviceError(error));
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
  for await (const input of readRows(options.input, format, stdin, table, options.key)) {
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
    if (options.dryRun === true) continue;
    const json = JSON.stringify(
      mode === 'upsert' ? values : id === undefined ? { data: values } : { id, data: values },
    );
    if (
      batch.length > 0 &&
      (batch.full || batch.byteLength + Buffer.byteLength(json) + 1 > MAX_BATCH_BYTES)
    ) {
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
): AsyncGenerator<InputRow, void, undefined> {
  const stream = (): NodeJS.ReadableStream => {
    if (input === '-') return stdin;
    return createReadStream(input).on('error', () => undefined);
  };
  await checkReadable(input);
  if (format === 'json') {
    yield* jsonRows(input === '-' ? await readAll(stdin) : await readFile(input, 'utf8'), input);
    return;
  }
  if (format === 'ndjson') {
    let row = 0;
    let line = 0;
    for await (const text of linesOf(stream())) {
      line += 1;
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
  yield* csvRows(stream() as Readable, table, key);
}

/**
 * The lines of a stream, read as they are needed: the stream's own iterator waits for each chunk to be taken
 * (readline's iterator buffers every line the file gives, however far ahead: a 1M-row file was held whole).
 */
export async function* linesOf(stream: NodeJS.ReadableStream): AsyncGenerator<string, void, undefined> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    let start = 0;
    for (let end = text.indexOf('\n'); end >= 0; end = text.indexOf('\n', start)) {
      yield text.slice(start, end > start && text[end - 1] === '\r' ? end - 1 : end);
      start = end + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest !== '') yield rest.endsWith('\r') ? rest.slice(0, -1) : rest;
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
): AsyncGenerator<InputRow, void, undefined> {
  const { parse } = await import('csv-parse');
  const types = new Map<string, CsvColumnType>(table.columns.map((c) => [c.name, c.type]));
  const parser = stream.pipe(
    parse({
      bom: true,
      relax_column_count: true,
      info: true,
      cast: (value, context) => ({ value, quoted: context.quoting }),
    }),
  );
  let header: string[] | undefined;
  let row = 0;
  for await (const parsed of parser as AsyncIterable<{
    record: Array<{ value: string; quoted: boolean }>;
    info: { lines: number };
  }>) {
    const cells = parsed.record;
    if (header === undefined) {
      header = cells.map((cell) => cell.value.trim());
      const unknown = header.filter((name) => name !== 'id' && !types.has(name));
      if (unknown.length > 0) {
        throw new CliError(
          `The CSV header names columns ${table.name} does not have: ${unknown.join(', ')}.`,
          {
            exitCode: ExitCode.Usage,
            code: 'unknown_columns',
            suggestion: `Its columns are ${table.columns.map((c) => c.name).join(', ')}; rename or drop the others. Nothing was sent.`,
            details: { unknown },
          },
        );
      }
      if (key !== undefined && !header.includes(key)) {
        throw new CliError(`The CSV has no column ${key} (--key).`, {
          exitCode: ExitCode.Usage,
          code: 'unknown_key_column',
          suggestion: `Its header is ${header.join(', ')}.`,
        });
      }
      continue;
    }
    row += 1;
    const line = parsed.info.lines;
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
      const value = csvValue(cell.value, cell.quoted, types.get(name));
      // An empty id field is no id (a row to create).
      if (name === 'id' && value === null) return;
      values[name] = value;
    });
    yield { row, line, values };
  }
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

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
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
  return Buffer.concat(chunks).toString('utf8');
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
  const base = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  const dir = join(base, 'gds', 'imports');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return join(dir, `${hash}.json`);
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
