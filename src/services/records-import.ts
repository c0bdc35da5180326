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
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { link, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { stateDir } from '../core/folders.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import { MAX_BULK_ITEMS, MAX_IMPORT_ROWS } from '../client/areas/records.js';
import { RatePacer } from '../client/rate-pacer.js';
import type { TableColumns } from '../contract/types.js';
import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { checkValues, describeProblems } from '../core/record-values.js';
import { BatchBuffer } from './records-batch.js';
import { removeResumeState, writeResumeState } from './resume-state.js';
import { checkReadable, formatOf, MAX_JSON_BYTES, readRows } from './records-input.js';
import type { ImportFormat, InputRow, RowError } from './records-input.js';

export type { ImportFormat, RowError } from './records-input.js';
export { formatOf, linesOf } from './records-input.js';

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

export type ImportClient = Pick<ApiClient, 'records'>;

/** The largest request body the service takes is 25 MB: a batch is closed well before that. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** The bytes of a request body around its one row: `{"records":[` and `]}`. */
const MAX_BODY_FRAME = '{"records":[]}'.length;

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
