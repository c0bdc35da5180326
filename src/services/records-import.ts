// `gds records import`: rows from a CSV, NDJSON or JSON (array) file, or stdin, into a table in batches of at
// most the service's limit: with `key`, through `import?mode=upsert&key=` (10,000 rows a request; a row whose
// key matches updates, else it is inserted), else through bulk-update (1,000 items; a row with an `id` updates
// that record, one without is created). Each row is checked against the table's columns before it is sent;
// a row the check or the service refuses is reported (row number, line, reason) and left out, the others go.
// Requests are paced by the rate headers like export's. The parts: the input readers (records-input.ts),
// the row checks (records-import-item.ts), the resume state and its lock (records-import-state.ts,
// records-import-lock.ts) and the batch sender (records-import-send.ts); this module runs them in order.
import { CliError, ExitCode } from '../core/errors.js';
import { MAX_BULK_ITEMS, MAX_IMPORT_ROWS } from '../client/areas/records.js';
import { RatePacer } from '../client/rate-pacer.js';
import type { TableColumns } from '../contract/types.js';
import { BatchBuffer } from './records-batch.js';
import { checkReadable, formatOf, readRows } from './records-input.js';
import type { ImportFormat, InputRow, RowError } from './records-input-row.js';
import { itemOf } from './records-import-item.js';
import { holdState } from './records-import-lock.js';
import { answeredUnwritten, BatchSender, type ImportClient, type PacedCall } from './records-import-send.js';
import {
  checkSkipped,
  identity,
  ImportCheckpoints,
  resumeFrom,
  RowDigest,
  startState,
  stateFileFor,
  type ImportCounts,
  type ImportState,
} from './records-import-state.js';
import { echoed } from '../core/echo.js';
import { onOneLine } from '../core/terminal-text.js';

export type { ImportFormat, RowError } from './records-input-row.js';
export type { ImportClient } from './records-import-send.js';
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

export interface ImportResult extends ImportCounts {
  tableId: string;
  input: string;
  format: ImportFormat;
  mode: 'upsert' | 'bulk';
  key: string | null;
  resumedFrom: number | null;
  dryRun: boolean;
  requests: number;
  waitedMs: number;
}

/** The largest request body the service takes is 25 MB: a batch is closed well before that. */
const MAX_BATCH_BYTES = 16 * 1024 * 1024;

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

type Stdin = NodeJS.ReadableStream & { isTTY?: boolean };

async function importRows(
  client: ImportClient,
  tableId: string,
  options: ImportOptions & { format: ImportFormat },
  stdin: Stdin,
  statePath: string | undefined,
): Promise<ImportResult> {
  const pacer = options.pacer ?? new RatePacer();
  const earlier = statePath === undefined ? null : await startState(statePath, options);
  const counts = countsFrom(earlier);
  let requests = 0;
  const progress = progressOf(counts, options.onProgress);
  const call: PacedCall = async (request) => {
    await pacer.wait(options.signal, (ms) => progress(ms));
    requests += 1;
    return request((headers, sentAt) => pacer.observe(headers, sentAt));
  };

  const table: TableColumns = await call((onHeaders) =>
    client.records.columns(tableId, { signal: options.signal, onHeaders }),
  );
  checkTable(table, tableId, options.key);
  const input = options.input === '-' ? { path: '-', size: 0, mtimeMs: 0 } : await identity(options.input);
  // stdin cannot be told apart by its identity: what is read of it is digested instead.
  const digest = options.input === '-' && statePath !== undefined ? new RowDigest() : undefined;
  const skip = resumeFrom(earlier, digest !== undefined, options.key, options.onNotice);
  const run: Run = {
    options,
    table,
    counts,
    progress,
    checkpoints: new ImportCheckpoints(
      statePath,
      { tableId, key: options.key ?? null, input },
      counts,
      earlier,
      digest,
      skip,
    ),
    refuse: (row, line, error) => {
      counts.refused += 1;
      options.onRowError?.({ row, ...(line === undefined ? {} : { line }), error });
    },
  };
  const sender = new BatchSender({
    client,
    tableId,
    tableName: table.name,
    key: options.key,
    signal: options.signal,
    call,
    refuse: run.refuse,
    onNotice: options.onNotice,
  });
  await sendRows(
    run,
    readRows(options.input, options.format, stdin, table, options.key, {
      rawCells: options.rawCells === true,
    }),
    sender,
    { skip, digest, earlier },
  );
  await run.checkpoints.finish();
  progress();

  return {
    tableId,
    input: options.input === '-' ? '<stdin>' : options.input,
    format: options.format,
    mode: options.key === undefined ? 'bulk' : 'upsert',
    key: options.key ?? null,
    ...counts,
    resumedFrom: earlier === null ? null : skip,
    dryRun: options.dryRun === true,
    requests,
    waitedMs: pacer.waitedMs,
  };
}

/** What an interrupted run had done, which a resumed one counts on from. */
function countsFrom(earlier: ImportState | null): ImportCounts {
  return {
    rows: 0,
    sent: earlier?.sent ?? 0,
    inserted: earlier?.inserted ?? 0,
    updated: earlier?.updated ?? 0,
    refused: earlier?.refused ?? 0,
    batches: earlier?.batches ?? 0,
  };
}

function progressOf(counts: ImportCounts, onProgress: ImportOptions['onProgress']) {
  return (waitingMs?: number) =>
    onProgress?.({
      rows: counts.rows,
      sent: counts.sent,
      refused: counts.refused,
      batches: counts.batches,
      ...(waitingMs === undefined ? {} : { waitingMs }),
    });
}

/** What the steps of one run share. */
interface Run {
  options: ImportOptions;
  table: TableColumns;
  counts: ImportCounts;
  checkpoints: ImportCheckpoints;
  progress: () => void;
  refuse: (row: number, line: number | undefined, error: RowError['error']) => void;
}

/** The table takes writes, and has the key column. */
function checkTable(table: TableColumns, tableId: string, key: string | undefined): void {
  if (table.mode === 'MODE_A') {
    // The service refuses every write to it (400 read_only_table): said before a row is read, --dry-run too.
    throw new CliError(
      `Table ${onOneLine(table.name)} is a Mode A (connector-backed) table: its rows are read from the warehouse and the service never writes them.`,
      {
        exitCode: ExitCode.Refused,
        code: 'read_only_table',
        suggestion:
          'Change the data in the warehouse object, or import into a Mode B table. Nothing was sent.',
        details: { tableId, mode: table.mode },
      },
    );
  }
  if (key !== undefined && !table.columns.some((c) => c.name === key)) {
    throw new CliError(`--key ${echoed(key)} is not a column of ${onOneLine(table.name)}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_key_column',
      suggestion: onOneLine(
        `Pick a column that identifies a row: ${table.columns.map((c) => c.name).join(', ')}.`,
      ),
    });
  }
}

/** The rows read, checked and sent in batches, each batch a checkpoint of the state. */
async function sendRows(
  run: Run,
  rows: AsyncIterable<InputRow>,
  sender: BatchSender,
  resume: { skip: number; digest: RowDigest | undefined; earlier: ImportState | null },
): Promise<void> {
  const { options, counts } = run;
  const { skip, digest, earlier } = resume;
  const limit = options.key !== undefined ? MAX_IMPORT_ROWS : MAX_BULK_ITEMS;
  const batch = new BatchBuffer(
    options.key !== undefined ? '{"rows":[' : '{"records":[',
    Math.min(options.batchSize ?? limit, limit),
  );
  const rules = {
    table: run.table,
    hasId: run.table.columns.some((c) => c.name === 'id'),
    key: options.key,
    ignoreIds: options.ignoreIds === true,
  };
  for await (const input of rows) {
    // From here to the next row the digest covers rows 1..input.row - 1: a flush below is of those rows.
    digest?.next(input);
    if (input.row === skip + 1) checkSkipped(skip, skip, digest, earlier);
    counts.rows = input.row;
    if (input.row <= skip) continue;
    const item = itemOf(input, rules);
    if (item.problem !== undefined) {
      run.refuse(input.row, input.line, item.problem);
      continue;
    }
    if (options.dryRun === true) continue;
    if (batch.length > 0 && (batch.full || batch.byteLength + item.bytes + 1 > MAX_BATCH_BYTES)) {
      await flush(run, sender, batch, input.row - 1);
    }
    batch.push(item.json, {
      row: input.row,
      ...(input.line === undefined ? {} : { line: input.line }),
      ...(item.id === undefined ? {} : { id: item.id }),
    });
  }
  digest?.end();
  if (counts.rows <= skip) checkSkipped(counts.rows, skip, digest, earlier);
  if (options.dryRun !== true) await flush(run, sender, batch, counts.rows);
}

/** Sends the batch (when it has rows): the input rows before `to` are then handled. */
async function flush(run: Run, sender: BatchSender, batch: BatchBuffer, to: number): Promise<void> {
  if (batch.length === 0) {
    await run.checkpoints.handled(to);
    return;
  }
  await run.checkpoints.sending(to, batch.creates);
  try {
    const written = await sender.send(batch);
    run.counts.sent += written.sent;
    run.counts.inserted += written.inserted;
    run.counts.updated += written.updated;
  } catch (error) {
    if (answeredUnwritten(error)) await run.checkpoints.unsent();
    throw error;
  }
  run.counts.batches += 1;
  await run.checkpoints.handled(to);
  batch.clear();
  run.progress();
}
