// The resume state of `gds records import`. A file import keeps a state file (under
// $XDG_STATE_HOME/gds/imports, named by a hash of the input's path, size and modification time, the table and
// the key): before a batch is sent it names the batch's rows as pending, after the service acknowledges it the
// rows count as done. `--resume` skips the rows done and sends the pending batch again: an upsert on a key is
// the same the second time, so nothing is doubled. Creations without a key are not: a pending batch of them
// is refused on resume (it may or may not have been written).
// An import from stdin keeps a state too (named by the table and the key), with a digest of the rows read up
// to each checkpoint: `--resume` reads the first rows of the new stdin, skips them only when their digest is
// the interrupted run's (the same rows in the same order), and refuses before sending anything when not.
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode } from '../core/errors.js';
import { stateDir } from '../core/folders.js';
import { removeResumeState, writeResumeState } from './resume-state.js';
import { checkReadable, formatOf, MAX_JSON_BYTES } from './records-input.js';
import type { InputRow } from './records-input-row.js';
import { echoedPath } from '../core/echo.js';

export interface ImportState {
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

/** What an import has done so far (with the runs it resumed), as its state and its result count it. */
export interface ImportCounts {
  /** Input rows read (those a resumed run skipped included). */
  rows: number;
  /** Rows the service acknowledged, by this run and any it resumed. */
  sent: number;
  inserted: number;
  updated: number;
  refused: number;
  batches: number;
}

interface StateOptions {
  input: string;
  key?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  resume?: boolean | undefined;
  force?: boolean | undefined;
}

/**
 * The state file of importing this input into this table on this key. stdin has one per table and key (what
 * was read of it is digested in the state instead).
 */
export async function stateFileFor(tableId: string, options: StateOptions): Promise<string> {
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

export async function identity(input: string): Promise<ImportState['input']> {
  const info = await stat(input);
  if (info.size > MAX_JSON_BYTES && formatOf(input) === 'json') {
    throw new CliError(`${echoedPath(input)} is over 256 MiB, and a JSON array is read whole.`, {
      exitCode: ExitCode.Usage,
      code: 'input_too_large',
      suggestion: 'Give big inputs as NDJSON (one object per line) or CSV: those are read a row at a time.',
    });
  }
  return { path: await realpath(input), size: info.size, mtimeMs: Math.floor(info.mtimeMs) };
}

/** The state of an interrupted run, when --resume takes it up; --force drops it; without either it refuses. */
export async function startState(path: string, options: StateOptions): Promise<ImportState | null> {
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

/**
 * The input rows a resumed run skips (0 for a fresh one), once the interrupted run's state allows resuming:
 * a stdin state has the digest to check the skipped rows by, and a pending batch is not one of creations.
 */
export function resumeFrom(
  earlier: ImportState | null,
  stdin: boolean,
  key: string | undefined,
  onNotice: ((message: string) => void) | undefined,
): number {
  const skip = earlier?.pending?.from ?? earlier?.done ?? 0;
  if (earlier === null) return skip;
  if (stdin && (earlier.digest === undefined || earlier.done !== skip)) {
    throw new CliError('The state of the interrupted import from stdin has no digest of the rows it read.', {
      exitCode: ExitCode.Usage,
      code: 'resume_state_unknown',
      suggestion: 'Pass --force to send every row again.',
    });
  }
  if (stdin && skip > 0) {
    onNotice?.(
      `Resuming from stdin: the first ${skip.toLocaleString('en')} rows must be the interrupted run's, in the same order; they are checked against its digest and skipped.`,
    );
  }
  if (earlier.pending?.creates === true && key === undefined) {
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
  return skip;
}

/** A resumed stdin import: the rows read so far (1..skip) must be the interrupted run's. */
export function checkSkipped(
  read: number,
  skip: number,
  digest: RowDigest | undefined,
  earlier: ImportState | null,
): void {
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
}

/**
 * sha256 over the rows read, each as its text (an NDJSON line) or its values or problem as JSON, one after the
 * other; a row is taken in when the next one comes (or at the end), so that in between the digest is of the
 * rows before the current one.
 */
export class RowDigest {
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

/**
 * The checkpoints of a run, written to its state file (none without one: --dry-run): rows before `from` are
 * handled; the batch from there on is filled, then sent, then acknowledged.
 */
export class ImportCheckpoints {
  /** The first input row of the batch being filled or sent (0-based: the rows handled before it). */
  private from: number;
  /** The digest of the rows before `from` (stdin). */
  private digestAtFrom: string | undefined;
  /** Rows refused before `from`: a resumed run reads the batch again and refuses its rows again. */
  private refusedAtFrom: number;

  constructor(
    private readonly path: string | undefined,
    private readonly head: Pick<ImportState, 'tableId' | 'key' | 'input'>,
    private readonly counts: ImportCounts,
    private readonly earlier: ImportState | null,
    private readonly digest: RowDigest | undefined,
    skip: number,
  ) {
    this.from = skip;
    // A fresh run starts from the digest of no rows: a state saved while its first batch is in flight has
    // one, so that --resume (which skips nothing then) is not refused for want of it.
    this.digestAtFrom = earlier?.digest ?? digest?.hex();
    this.refusedAtFrom = counts.refused;
  }

  /** The batch of rows [from, to) is about to be sent. */
  async sending(to: number, creates: boolean): Promise<void> {
    await this.save(this.state(this.from, { from: this.from, to, creates }));
  }

  /** The rows before `to` are handled (acknowledged or refused). */
  async handled(to: number): Promise<void> {
    this.digestAtFrom = this.digest?.hex();
    if (to > this.from) await this.save(this.state(to, null));
    this.from = to;
    this.refusedAtFrom = this.counts.refused;
  }

  /**
   * The service refused the batch in flight with an answer (none of it was written): the state goes back to
   * before it, so that a run again is not told the batch is in doubt; with nothing done, there is no state.
   */
  async unsent(): Promise<void> {
    if (this.path === undefined) return;
    if (this.from === 0 && this.earlier === null) await removeResumeState(this.path);
    else await this.save({ ...this.state(this.from, null), refused: this.refusedAtFrom });
  }

  /** The run is over: nothing to resume. */
  async finish(): Promise<void> {
    if (this.path !== undefined) await removeResumeState(this.path);
  }

  private state(done: number, pending: ImportState['pending']): ImportState {
    return {
      version: 1,
      tableId: this.head.tableId,
      key: this.head.key,
      input: this.head.input,
      ...(this.digestAtFrom === undefined ? {} : { digest: this.digestAtFrom }),
      done,
      ...this.counts,
      ...(pending === null ? {} : { refused: this.refusedAtFrom }),
      pending,
    };
  }

  private async save(state: ImportState): Promise<void> {
    if (this.path === undefined) return;
    await writeResumeState(this.path, state, 0o600);
  }
}
