// `gds records export`: every row of a table, page after page by cursor (100 rows a request, the most the
// service serves), as NDJSON or CSV, to stdout or a file. One page is held at a time (constant memory); the
// pace follows the service's rate headers (client/rate-pacer.ts), so a steady run never meets a 429.
//
// A file is written as `<file>.part` beside it, with a state file `<file>.gds-export` holding the cursor of
// the next page and the rows and bytes written so far: after each page the data is flushed to disk, then the
// state replaced (temp file, rename). A run killed anywhere leaves at most some bytes past the state's count,
// which `--resume` cuts off before asking for the next page: nothing lost, nothing twice. At the end the part
// file takes the file's name (a reader never sees half a file) and the state goes.
import type { FileHandle } from 'node:fs/promises';
import { constants, rmSync } from 'node:fs';
import { link, lstat, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { refuseFolder } from '../io/output-file.js';
import { ndjsonLine } from '../core/ndjson.js';
import type { ApiClient } from '../client/index.js';
import type { ApiError } from '../client/errors.js';
import { MAX_RECORDS_PAGE } from '../client/areas/records.js';
import { RatePacer } from '../client/rate-pacer.js';
import type { TableColumns, TableRecord } from '../contract/types.js';
import { csvLine } from '../core/csv.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { echoedPath, withPathEchoed } from '../core/echo.js';
import { removeResumeState, writeResumeState } from './resume-state.js';

export type ExportFormat = 'ndjson' | 'csv';

export interface ExportProgress {
  rows: number;
  /** Rows the table holds, when the service said (on a listing's first page). */
  total?: number;
  /** Set while waiting for the rate window to reset: how long, in ms. */
  waitingMs?: number;
}

export interface ExportOptions {
  format: ExportFormat;
  search?: string | undefined;
  /** CSV: write text cells as they are, formula-like ones (=, +, -, @, tab, CR) included. */
  rawCells?: boolean;
  /** A file path; undefined writes to `stdout`. */
  output?: string | undefined;
  resume?: boolean;
  /** Replace an existing file, or drop an interrupted export's state and start over. */
  force?: boolean;
  /** Rows per request (default and at most 100). */
  pageSize?: number;
  stdout?: NodeJS.WritableStream;
  /** Whether stdout shows on a terminal (Output's view of it: GDS_FORCE_TTY too); default: `stdout.isTTY`. */
  terminal?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
  pacer?: RatePacer;
}

export interface ExportResult {
  tableId: string;
  format: ExportFormat;
  rows: number;
  output: string | null;
  /** Rows written by an earlier, interrupted run that this one continued. */
  resumedFrom: number | null;
  requests: number;
  waitedMs: number;
}

/** What `<file>.gds-export` holds between pages. */
interface ExportState {
  version: 1;
  tableId: string;
  format: ExportFormat;
  search: string | null;
  /** CSV cells written as they are (--raw-cells); absent: formula-like cells neutralised. */
  rawCells?: true;
  /** Started with --force: the export replaces FILE at its end, resumed or not (absent: FILE is not replaced). */
  replace?: true;
  /** The cursor of the next page; null when every page is written. */
  cursor: string | null;
  rows: number;
  /** Bytes of the part file that hold `rows` (and the CSV header). */
  bytes: number;
  total?: number;
  columns?: string[];
}

export type ExportClient = Pick<ApiClient, 'records'>;

export const partPath = (output: string) => join(dirname(output), `${basename(output)}.part`);
export const exportStatePath = (output: string) => join(dirname(output), `${basename(output)}.gds-export`);

/** The sink rows go to: a part file (with its state) or a stream. */
interface Sink {
  write(text: string): Promise<void>;
  /** Bytes written so far (the part file's length). */
  bytes(): number;
  /** After a page: the data on disk, then the state saying how far it goes. */
  checkpoint(state: ExportState): Promise<void>;
  finish(): Promise<void>;
  abandon(): Promise<void>;
}

export async function exportRecords(
  client: ExportClient,
  tableId: string,
  options: ExportOptions,
): Promise<ExportResult> {
  const pageSize = Math.min(options.pageSize ?? MAX_RECORDS_PAGE, MAX_RECORDS_PAGE);
  const pacer = options.pacer ?? new RatePacer();
  const signal = options.signal;
  let requests = 0;
  const call = async <T>(request: (onHeaders: RatePacer['observe']) => Promise<T>): Promise<T> => {
    await pacer.wait(signal, (ms) =>
      options.onProgress?.({ rows, ...(total === undefined ? {} : { total }), waitingMs: ms }),
    );
    requests += 1;
    return request((headers, sentAt) => pacer.observe(headers, sentAt));
  };

  const earlier = options.output === undefined ? null : await startFile(tableId, options.output, options);
  let state: ExportState = earlier ?? {
    version: 1,
    tableId,
    format: options.format,
    search: options.search ?? null,
    ...(options.format === 'csv' && options.rawCells === true ? { rawCells: true } : {}),
    ...(options.force === true ? { replace: true } : {}),
    cursor: null,
    rows: 0,
    bytes: 0,
  };
  let rows = state.rows;
  let total = state.total;
  const sink =
    options.output === undefined
      ? streamSink(options.stdout ?? process.stdout, options.terminal)
      : await fileSink(
          options.output,
          earlier === null ? 0 : earlier.bytes,
          options.force === true || earlier?.replace === true,
        );
  // The service said a row was written while the table was read (a warehouse table without a key): one may
  // be missing or twice. The rows read are kept, and the export fails so that no script takes them as exact.
  let changed = false;
  try {
    let columns = state.columns;
    const cells = { rawCells: state.rawCells === true };
    if (earlier === null && options.format === 'csv') {
      const described: TableColumns = await call((onHeaders) =>
        client.records.columns(tableId, { signal, onHeaders }),
      );
      columns = ['id', ...described.columns.map((c) => c.name).filter((name) => name !== 'id')];
      await sink.write(csvLine(columns, cells));
    }
    const line =
      options.format === 'csv'
        ? (record: TableRecord) =>
            csvLine(
              (columns ?? []).map((name) => record[name]),
              cells,
            )
        : (record: TableRecord) => `${ndjsonLine(record)}\n`;
    let cursor = state.cursor ?? undefined;
    const finished = earlier !== null && earlier.cursor === null;
    while (!finished) {
      const page = await call((onHeaders) =>
        client.records.list(
          tableId,
          {
            limit: pageSize,
            ...(options.search === undefined ? {} : { search: options.search }),
            ...(cursor === undefined ? {} : { cursor }),
          },
          { signal, onHeaders },
        ),
      ).catch((error: unknown) => {
        throw listingChanged(error, tableId, options.output, rows) ?? error;
      });
      if ((page as { nextCursor?: unknown }).nextCursor === undefined) {
        // A service with the spec's page/limit only: numbered pages read by offset, and a row deleted or
        // inserted meanwhile skips or repeats another, with nothing to tell. Nothing is written from it.
        throw new CliError(
          `The service gave no nextCursor for table ${tableId}: it pages by number only, and an export by page number skips or repeats a row whenever one is deleted or inserted meanwhile.`,
          {
            exitCode: ExitCode.Failure,
            code: 'no_cursor_paging',
            suggestion:
              'Export from a service that pages by cursor (the reference server does), or read the pages yourself with gds api while nothing writes to the table.',
            details: { tableId },
          },
        );
      }
      changed ||= page.changedWhileListed === true;
      total ??= page.total;
      const text = page.records.map(line).join('');
      await sink.write(text);
      rows += page.records.length;
      if (page.nextCursor === cursor && page.nextCursor !== null) {
        throw new Error(`The service returned cursor ${page.nextCursor} twice; stopping`);
      }
      state = {
        ...state,
        cursor: page.nextCursor,
        rows,
        bytes: sink.bytes(),
        ...(total === undefined ? {} : { total }),
        ...(columns === undefined ? {} : { columns }),
      };
      await sink.checkpoint(state);
      options.onProgress?.({ rows, ...(total === undefined ? {} : { total }) });
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    await sink.finish();
  } catch (error) {
    await sink.abandon();
    throw error;
  }
  if (changed) {
    throw new CliError(
      `Rows of table ${tableId} were written while it was exported: one written meanwhile may be missing or twice in ${options.output ?? 'the output'} (${rows} rows).`,
      {
        exitCode: ExitCode.Conflict,
        code: 'changed_while_exported',
        suggestion:
          'The table has no key to read it by (a unique, NOT NULL id): export it again when nothing writes to it, or give it such a key.',
        details: { tableId, rows, output: options.output ?? null },
      },
    );
  }
  return {
    tableId,
    format: options.format,
    rows,
    output: options.output ?? null,
    resumedFrom: earlier === null ? null : earlier.rows,
    requests,
    waitedMs: pacer.waitedMs,
  };
}

/** The 409 `listing_changed` of a cursor into a warehouse object rewritten since the export began, explained. */
function listingChanged(
  error: unknown,
  tableId: string,
  output: string | undefined,
  rows: number,
): CliError | undefined {
  // By name: an ApiError of another copy of the client module is one too.
  const answer = error as Partial<ApiError> | null;
  if (answer?.name !== 'ApiError' || answer.status !== 409 || answer.code !== 'listing_changed')
    return undefined;
  return new CliError(
    `Table ${tableId} was rewritten (truncated, rebuilt or vacuumed full) while it was exported, after ${rows} rows: the rest cannot follow them.`,
    {
      exitCode: ExitCode.Conflict,
      code: 'listing_changed',
      suggestion:
        output === undefined
          ? 'Export it again from the start.'
          : `Export it again from the start: the same command with --force instead of --resume.`,
      details: { tableId, rows, ...(output === undefined ? {} : { output }) },
    },
  );
}

/**
 * Before a file export: the state of an interrupted one to continue (with --resume), or null to start anew.
 * Refuses (exit 2, nothing written) an existing file or part file without --force, an interrupted export
 * without --resume or --force, and a --resume whose table, format or search differ from the interrupted run's.
 */
async function startFile(
  tableId: string,
  output: string,
  options: ExportOptions,
): Promise<ExportState | null> {
  await refuseFolder(output, '--output', `export.${options.format}`);
  const state = await readState(output);
  if (state !== null && options.resume === true) {
    const differs: string[] = [];
    if (state.tableId !== tableId) differs.push(`table ${state.tableId}`);
    if (state.format !== options.format) differs.push(`--format ${state.format}`);
    if (state.search !== (options.search ?? null))
      differs.push(state.search === null ? 'no --search' : `--search ${JSON.stringify(state.search)}`);
    if (state.format === 'csv' && (state.rawCells === true) !== (options.rawCells === true))
      differs.push(state.rawCells === true ? '--raw-cells' : 'no --raw-cells');
    if (differs.length > 0) {
      throw new CliError(
        `The interrupted export into ${echoedPath(output)} was of another listing (${differs.join(', ')}).`,
        {
          exitCode: ExitCode.Usage,
          code: 'resume_mismatch',
          suggestion: `Resume it with the same table and flags (${differs.join(', ')}), or pass --force instead of --resume to start over.`,
          details: {
            output,
            state: { tableId: state.tableId, format: state.format, search: state.search, rows: state.rows },
          },
        },
      );
    }
    // lstat: a symbolic link planted at the part file is not followed (fileSink refuses it too).
    const part = await lstat(partPath(output)).catch(() => undefined);
    if (part === undefined || !part.isFile() || part.size < state.bytes) {
      throw new CliError(
        `The interrupted export into ${echoedPath(output)} lost its data: ${echoedPath(partPath(output))} is ${part === undefined ? 'gone' : part.isFile() ? `shorter than the ${state.bytes} bytes written` : 'not a regular file'}.`,
        {
          exitCode: ExitCode.Usage,
          code: 'resume_broken',
          suggestion: 'Pass --force instead of --resume to start over.',
        },
      );
    }
    return state;
  }
  if (state !== null && options.force !== true) {
    throw new CliError(`An interrupted export into ${echoedPath(output)} stopped after ${state.rows} rows.`, {
      exitCode: ExitCode.Usage,
      code: 'export_interrupted',
      suggestion: 'Pass --resume to continue it where it stopped, or --force to start over.',
      details: { output, rows: state.rows },
    });
  }
  // lstat: a symbolic link at FILE (even one pointing nowhere) is a file that exists.
  if (options.force !== true && (await lstat(output).catch(() => undefined)) !== undefined) {
    throw new CliError(`${echoedPath(output)} already exists; it was left as it is.`, {
      exitCode: ExitCode.Usage,
      code: 'output_exists',
      suggestion: 'Pass --force to replace it, or give --output another path.',
    });
  }
  // The part file's name is gds's, but a file standing there without a state file is not known to be: a run
  // killed before its first page was counted, or someone else's. It is replaced only when told to.
  if (options.force !== true && (await lstat(partPath(output)).catch(() => undefined)) !== undefined) {
    throw new CliError(
      `${echoedPath(partPath(output))} already exists, and no interrupted export counts it; it was left as it is.`,
      {
        exitCode: ExitCode.Usage,
        code: 'part_file_exists',
        suggestion: 'Pass --force to replace it, or give --output another path.',
        details: { output, part: partPath(output) },
      },
    );
  }
  return null;
}

async function readState(output: string): Promise<ExportState | null> {
  let text: string;
  try {
    text = await readFile(exportStatePath(output), 'utf8');
  } catch {
    return null;
  }
  try {
    const state = JSON.parse(text) as ExportState;
    if (state.version === 1 && typeof state.tableId === 'string' && Number.isSafeInteger(state.bytes))
      return state;
  } catch {
    // answered below
  }
  throw new CliError(`${echoedPath(exportStatePath(output))} is not a state file gds wrote.`, {
    exitCode: ExitCode.Usage,
    code: 'resume_broken',
    suggestion: `Remove it, or pass --force to start the export over.`,
  });
}

/** `replace`: FILE is replaced at the end (--force, now or when the resumed export began); else never. */
async function fileSink(output: string, keepBytes: number, replace: boolean): Promise<Sink> {
  const part = partPath(output);
  const statePath = exportStatePath(output);
  let handle: FileHandle;
  try {
    // Only a regular file of gds's own is written: a fresh part file is created anew (whatever stood at its
    // name is removed first, a symbolic link itself, never what it points at), and a part file resumed is
    // opened without following a symbolic link. It holds table rows: the owner's alone (0600), as the FILE
    // it becomes, also when an older gds left it readable by others.
    if (keepBytes === 0) {
      await rm(part, { force: true });
      handle = await open(part, 'wx', 0o600);
    } else {
      handle = await open(part, constants.O_RDWR | (constants.O_NOFOLLOW ?? 0));
      await handle.chmod(0o600);
      await handle.truncate(keepBytes);
    }
  } catch (error) {
    // The part file is gds's own name: a folder that does not exist is said of the FILE the user named.
    const missing = keepBytes === 0 && (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new CliError(
      missing
        ? `Cannot write ${echoedPath(output)}: the folder ${echoedPath(dirname(output))} does not exist`
        : `Cannot write ${echoedPath(part)}: ${withPathEchoed((error as Error).message, part)}`,
      {
        exitCode: ExitCode.Usage,
        code: 'output_unwritable',
        suggestion: 'Check that the folder of --output exists and is writable.',
      },
    );
  }
  let position = keepBytes;
  // Whether the part file holds rows a state file counts: one that never did is removed when the export fails,
  // and when the process exits before it ends (Ctrl-C, SIGTERM: their handlers exit at once).
  let kept = keepBytes > 0;
  const dropUncounted = () => {
    if (!kept) rmSync(part, { force: true });
  };
  process.once('exit', dropUncounted);
  return {
    async write(text) {
      const bytes = Buffer.from(text, 'utf8');
      await handle.write(bytes, 0, bytes.length, position);
      position += bytes.length;
    },
    bytes: () => position,
    async checkpoint(state) {
      await handle.datasync();
      await writeResumeState(statePath, state, 0o600);
      kept = true;
    },
    async finish() {
      await handle.sync();
      process.off('exit', dropUncounted);
      await handle.close();
      if (replace) {
        await rename(part, output);
      } else {
        try {
          await link(part, output);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
            throw new CliError(
              `${echoedPath(output)} appeared while exporting; it was left as it is, the rows are in ${echoedPath(part)}.`,
              {
                exitCode: ExitCode.Usage,
                code: 'output_exists',
                suggestion: `Move ${echoedPath(part)} where you want it, or run again with --force.`,
              },
            );
          }
          throw error;
        }
        await rm(part, { force: true });
      }
      await removeResumeState(statePath);
    },
    async abandon() {
      // The part file and the state stay for --resume; a part file no state counts (the first request
      // failed) is nothing to resume, and would be left where the user never asked for a file.
      process.off('exit', dropUncounted);
      await handle.close().catch(() => undefined);
      dropUncounted();
    },
  };
}

/** Writes to a stream, waiting while it is full; a reader that went away (EPIPE) ends the export quietly. */
function streamSink(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  terminal = stream.isTTY === true,
): Sink {
  // On a terminal the rows are shown, not kept: a CSV value's control characters (NDJSON escapes its own)
  // are stripped as every server string is; piped, the bytes go on as the service gave them.
  const shown = terminal ? stripControlCharacters : (text: string) => text;
  let closed = false;
  let written = 0;
  let failure: Error | undefined;
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') closed = true;
    else failure = error;
  };
  stream.on('error', onError);
  return {
    async write(text) {
      if (failure) throw failure;
      if (closed) throw new ReaderGone();
      if (text === '') return;
      written += Buffer.byteLength(text);
      if (!stream.write(shown(text))) {
        await new Promise<void>((resolve) => {
          const done = () => {
            stream.off('drain', done);
            stream.off('close', done);
            resolve();
          };
          stream.on('drain', done);
          stream.on('close', done);
        });
      }
    },
    bytes: () => written,
    async checkpoint() {},
    async finish() {
      stream.off('error', onError);
    },
    async abandon() {
      stream.off('error', onError);
    },
  };
}

/** The reader of stdout went away (`| head`): the export stops, as any filter's producer does. */
export class ReaderGone extends Error {
  constructor() {
    super('stdout was closed by its reader');
    this.name = 'ReaderGone';
  }
}
