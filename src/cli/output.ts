// The one place a command writes to the terminal. Under --json stdout carries NDJSON only (one compact
// object per line) and everything human goes nowhere; otherwise text, tables and colour. Messages,
// warnings, spinners and errors go to stderr. Every string is stripped of terminal control characters
// before it is written; the colour codes this module adds itself are the only escapes that get out.
import { styleText } from 'node:util';
import { settingValue } from './settings.js';
import { CliError, ExitCode } from '../core/errors.js';
import { stripControlCharacters } from '../core/terminal-text.js';
import { ndjsonLine } from '../core/ndjson.js';
import { compileSimpleFilter, type SimpleFilter } from './jq-subset.js';
import { type Diagnostic, formatDiagnostic } from '../core/gate1/diagnostic.js';
import { jsonSegments } from './json-colour.js';
import type { Segment, Style } from './segment.js';
import { holdYoungGeneration } from '../io/young-generation.js';
import { relativeTime } from './relative-time.js';

export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

export type { Segment, Style } from './segment.js';

/**
 * What a column holds, which says how it shows on a terminal (the rules are docs/output.md's): free text
 * (`text`, the default: details, notes; `name`, what names the row; `who`, the person who did it; `what`,
 * what happened or why) is cut with … when the row does not fit; `id`, `version`, `time` and `state` are
 * never cut. A column that still cannot fit is dropped, the one of least value first: a column empty in
 * every row, then text, times, versions, states, `what`, `who`, `name`, and ids last. `time` reads `3m ago`
 * and `state` is coloured. Piped and under --json nothing changes: ISO times, nothing cut, no colour.
 */
export type ColumnKind = 'id' | 'name' | 'who' | 'what' | 'version' | 'time' | 'state' | 'text';

export interface Column<Row> {
  header: string;
  value: (row: Row) => unknown;
  kind?: ColumnKind;
  /** Which column goes first when a row cannot fit: the lowest (default by kind; ids highest). */
  rank?: number;
}

export interface TableOptions {
  /** Said on stderr (stdout stays empty) when there are no rows, e.g. "No tables." */
  empty?: string;
  /** `-L/--limit`: only the first this many rows (`Showing N of M` on a terminal when it cuts). */
  limit?: number;
  /** What the rows are, for `Showing 2 of 9 tables`. */
  noun?: string;
  /** How many rows the whole list holds, when the service paged it and said (else the rows given). */
  total?: number;
}

const kindValue: Record<ColumnKind, number> = {
  id: 100,
  name: 90,
  who: 85,
  what: 82,
  state: 80,
  version: 60,
  time: 40,
  text: 20,
};
const shrinkingKinds: ReadonlySet<ColumnKind> = new Set(['text', 'name', 'who', 'what']);

/** Green, red or yellow: how a lifecycle state, a job status or a check result reads at a glance. */
export function stateStyle(value: string): Style | undefined {
  const word = value.toUpperCase();
  if (/^(CERTIFIED|PASS|PASSED|SUCCEEDED|ACTIVE|OK|CONNECTED|YES)$/.test(word)) return 'green';
  if (/^(QUARANTINED|FAIL|FAILED|REJECTED|ERROR|CANCELLED|REVOKED|DEPRECATED)$/.test(word)) return 'red';
  if (/^(PENDING_REVIEW|WARN|QUEUED|RUNNING|PENDING|DRAFT|OPEN|SKIPPED)$/.test(word)) return 'yellow';
  return undefined;
}

export interface Spinner {
  update(text: string): void;
  /** Ends the spinner with a success line (printed as a plain line on stderr when no spinner is shown). */
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

export interface OutputOptions {
  json: boolean;
  /** `--json a,b`: each record keeps these fields only (an unknown one is a usage error). */
  fields?: readonly string[];
  /** The command's JSON FIELDS (json-fields.ts): a listed field a record lacks is null under `--json a,b`. */
  listedFields?: readonly string[];
  /** `--jq EXPR`: each record goes through this jq filter (jq compiled to WebAssembly, loaded only then). */
  jq?: string;
  /** `--template T`: each record is printed as this template makes it (template.ts), instead of as JSON. */
  template?: (record: object) => string;
  stdout?: OutputStream;
  stderr?: OutputStream;
  env?: NodeJS.ProcessEnv;
}

/**
 * `--json` before any `--`, GDS_CONTENT_TYPE=json, or GDS_JSON set to what oclif reads as true for a
 * boolean flag (1, true, y, yes). Read from raw argv so even a parse error is JSON.
 */
export function jsonRequested(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.GDS_CONTENT_TYPE?.toLowerCase() === 'json') return true;
  if (['1', 'true', 'y', 'yes'].includes(env.GDS_JSON?.toLowerCase() ?? '')) return true;
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** NO_COLOR always wins; then FORCE_COLOR (0/false off, anything else on), CLICOLOR_FORCE (not 0: on),
 *  CLICOLOR=0 (off, as gh reads it); then the `color` setting (never, always); else only on a TTY. */
export function colorEnabled(stream: OutputStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return !['0', 'false'].includes(env.FORCE_COLOR.toLowerCase());
  if (env.CLICOLOR_FORCE !== undefined && env.CLICOLOR_FORCE !== '' && env.CLICOLOR_FORCE !== '0')
    return true;
  if (env.CLICOLOR === '0') return false;
  const setting = settingValue('color', env);
  if (setting === 'never' || setting === 'always') return setting === 'always';
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/**
 * GDS_FORCE_TTY (gh's GH_FORCE_TTY): stdout printed as on a terminal even when piped (`watch gds list`,
 * `gds list | less -R`): aligned tables, relative times, colour (NO_COLOR still wins). A number of 20 or
 * more is the width in columns, `60%` that share of stderr's terminal; any other value (1, true) the width of
 * stderr's terminal, else 80. Unset, empty, 0 or false: off.
 */
export function forcedTerminal(stream: OutputStream, env: NodeJS.ProcessEnv): OutputStream {
  const value = env.GDS_FORCE_TTY?.trim() ?? '';
  if (['', '0', 'false'].includes(value.toLowerCase()) || stream.isTTY === true) return stream;
  const terminal = (process.stderr as { columns?: number }).columns || 80;
  const share = /^(\d{1,3})%$/.exec(value);
  const number = /^\d+$/.test(value) ? Number(value) : 0;
  const columns = share ? Math.round((terminal * Number(share[1])) / 100) : number >= 20 ? number : terminal;
  const forced: OutputStream & { columns: number; forced: true } = {
    isTTY: true,
    forced: true,
    columns: Math.max(columns, 20),
    write: (chunk: string) => stream.write(chunk),
  };
  return forced;
}

const showCursor = '\u001B[?25h';
/** The one mark of a confirmation or a finished step (settings, aliases, records, exports, spinners). */
export const successMark = '✓';

export class Output {
  readonly json: boolean;
  readonly fields: readonly string[] | undefined;
  private readonly listedFields: readonly string[];
  readonly jq: string | undefined;
  private readonly template: ((record: object) => string) | undefined;
  /** Where stdout goes: the process's (or GDS_FORCE_TTY's stand-in), or the pager once usePager() chose one. */
  private out: OutputStream;
  readonly stderr: OutputStream;
  /** The pager stdout goes through (pager.ts), when the command pages and stdout is a terminal. */
  private paged: { running: boolean; end(): Promise<void> } | undefined;
  private readonly env: NodeJS.ProcessEnv;
  /** Footnotes said while the pager shows stdout, written once it is quit. */
  private readonly footnotes: Segment[][] = [];
  private activeSpinner: { stop(): unknown; clear(): unknown; render(): unknown } | undefined;
  /** Records on their way through jq, written in order; `flush()` waits for them. */
  private jqQueue: Promise<void> = Promise.resolve();
  /** Records given to `record()` that no jq run has taken yet. */
  private readonly jqPending: string[] = [];
  private jqFailure: unknown;
  /** The --jq filter when gds evaluates it without jq (jq-subset.ts), else undefined. */
  private readonly simpleJq: SimpleFilter | undefined;
  /** jq runs queued and not yet ended: records meanwhile queue behind them, to stay in order. */
  private jqRuns = 0;

  constructor(options: OutputOptions) {
    this.fields = options.fields;
    this.listedFields = options.listedFields ?? [];
    this.jq = options.jq;
    this.template = options.template;
    this.simpleJq = options.jq === undefined ? undefined : compileSimpleFilter(options.jq);
    this.json =
      options.json ||
      options.fields !== undefined ||
      options.jq !== undefined ||
      options.template !== undefined;
    this.env = options.env ?? process.env;
    this.out = options.stdout ?? forcedTerminal(process.stdout, this.env);
    this.stderr = options.stderr ?? process.stderr;
  }

  get stdout(): OutputStream {
    return this.out;
  }

  /**
   * From now on stdout goes through a pager, as gh's lists, diffs and `api` do: GDS_PAGER, else `setting`
   * (the pager of `gds settings`, read from settings.json unless given), else PAGER (pager.ts: resolvePager).
   * Only when stdout is the process's and a terminal (never piped, never GDS_FORCE_TTY's stand-in); the pager
   * starts at the first write.
   */
  async usePager(setting: string | undefined = settingValue('pager', this.env)): Promise<void> {
    if (this.out !== process.stdout || process.stdout.isTTY !== true || this.paged !== undefined) return;
    const { pagedOutput, resolvePager } = await import('./pager.js');
    const command = resolvePager(this.env, setting);
    if (command === undefined) return;
    const paged = pagedOutput(command, this.env, process.stdout, (message) => this.warn(message), setting);
    this.paged = paged;
    this.out = paged;
  }

  /** Whether a pager is showing what this command printed (Ctrl-C then waits for it, see endPager). */
  get paging(): boolean {
    return this.paged?.running === true;
  }

  /** The output is complete: the pager gets the end of its input, and this waits until it is quit; then the
   *  footnotes said meanwhile. */
  async endPager(): Promise<void> {
    await this.paged?.end();
    for (const segments of this.footnotes.splice(0)) this.info(...segments);
  }

  /**
   * A line on stderr about what stdout showed (the next page's command, `Showing the newest 50`): while a
   * pager shows the list it would be written over the pager's prompt line, so it waits until the pager is quit.
   */
  footnote(...segments: Segment[]): void {
    if (this.paging) this.footnotes.push(segments);
    else this.info(...segments);
  }

  get colorOnStdout(): boolean {
    return colorEnabled(this.stdout, this.env);
  }

  get colorOnStderr(): boolean {
    return colorEnabled(this.stderr, this.env);
  }

  style(style: Style, text: string): Segment {
    return { text, style };
  }

  /** A time in a detail view or a reply: `12m ago`, `in 59m` on a terminal, as in tables; piped, the ISO time. */
  when(iso: string): string {
    return this.stdout.isTTY === true ? relativeTime(iso) : iso;
  }

  /** A lifecycle state, job status or check result, coloured as in tables (CERTIFIED green, …). */
  state(text: string): Segment {
    const style = stateStyle(text);
    return style === undefined ? text : { text, style };
  }

  /**
   * One NDJSON line on stdout, shaped by `--json a,b` and filtered by `--jq` (or formatted by `--template`).
   * On a terminal (not GDS_FORCE_TTY's stand-in), without --jq or --template, indented and coloured as
   * `gds api` and gh print JSON.
   */
  record(value: object): void {
    const shaped = this.fields === undefined ? value : pickFields(value, this.fields, this.listedFields);
    if (this.template !== undefined) {
      const text = stripControlCharacters(this.template(shaped)).replace(/\n?$/, '\n');
      if (text !== '\n') this.stdout.write(text);
      return;
    }
    const filter = this.jq;
    if (filter === undefined) {
      if (this.stdout.isTTY === true && (this.stdout as { forced?: boolean }).forced !== true) {
        this.stdout.write(`${this.render(jsonSegments(shaped), this.colorOnStdout)}\n`);
      } else this.stdout.write(`${ndjsonLine(shaped)}\n`);
      return;
    }
    const line = ndjsonLine(shaped);
    // A filter of the subset gds answers itself, when no jq run is still ahead of this record.
    if (this.simpleJq !== undefined && this.jqRuns === 0 && this.jqFailure === undefined) {
      const answer = this.simpleJq(line);
      if (answer !== undefined) {
        if (answer.length > 0) this.stdout.write(`${stripControlCharacters(answer.join('\n'))}\n`);
        return;
      }
    }
    // The records given meanwhile wait for the one jq run that takes them all (see runJqOver), in order.
    // The chain never rejects: the first failure is kept for flush(), and the records after it are dropped.
    this.jqPending.push(line);
    if (this.jqPending.length > 1) return;
    this.jqRuns += 1;
    this.jqQueue = this.jqQueue.then(async () => {
      try {
        const { runJqOver } = await import('./jq.js');
        const lines = this.jqPending.splice(0);
        if (this.jqFailure !== undefined) return;
        const { text, failure } = await runJqOver(lines, filter);
        if (text !== '') this.stdout.write(`${text}\n`);
        if (failure !== undefined) this.jqFailure = failure;
      } catch (error) {
        this.jqFailure = error;
      } finally {
        this.jqRuns -= 1;
      }
    });
  }

  /** Whether --jq's filter is one gds evaluates itself (jq-subset.ts): jq need not check it first. */
  get jqIsSimple(): boolean {
    return this.simpleJq !== undefined;
  }

  /** Waits until every record given to `record()` is written (only `--jq` writes later); throws jq's failure. */
  async flush(): Promise<void> {
    await this.jqQueue;
    if (this.jqFailure !== undefined) throw this.jqFailure;
  }

  /** One NDJSON line on stderr: an `{"error":{…}}` body under --json. */
  errorRecord(value: object): void {
    this.stderr.write(`${ndjsonLine(value)}\n`);
  }

  /** A human line on stdout; nothing under --json (stdout is NDJSON only there). */
  print(...segments: Segment[]): void {
    if (this.json) return;
    this.stdout.write(`${this.render(segments, this.colorOnStdout)}\n`);
  }

  /** Human lines on stdout in one write (a diff of 80,000 lines wrote them one by one for a second). */
  printLines(lines: Segment[][]): void {
    if (this.json || lines.length === 0) return;
    const color = this.colorOnStdout;
    this.stdout.write(lines.map((segments) => `${this.render(segments, color)}\n`).join(''));
  }

  /** A message for the person at the terminal, on stderr. */
  info(...segments: Segment[]): void {
    // A line said while a spinner turns goes above it, and the spinner carries on below.
    this.activeSpinner?.clear();
    this.stderr.write(`${this.render(segments, this.colorOnStderr)}\n`);
    this.activeSpinner?.render();
  }

  /**
   * A confirmation for the person, on stderr with the one mark every command uses: `✓ Created …`. Nothing
   * under --json (stdout carries the record instead, and every line of stderr stays JSON).
   */
  success(text: string): void {
    if (this.json) return;
    this.info(this.style('green', successMark), ` ${text}`);
  }

  /**
   * Runs `work` with a spinner saying `text` on a terminal's stderr (nothing piped or under --json), for a
   * wait that may pass a second: the spinner goes when the work ends, whether it succeeded or failed.
   */
  async during<R>(text: string, work: () => Promise<R>): Promise<R> {
    const spinner = await this.spinner(text);
    try {
      return await work();
    } finally {
      spinner.stop();
    }
  }

  /** A warning on stderr that stays machine-readable: under --json one `{"warning":{"message"}}` line, as
   *  an error is one `{"error":…}` line, so every line of stderr parses. */
  warn(message: string): void {
    if (this.json) this.errorRecord({ warning: { message: stripControlCharacters(message) } });
    else this.info(this.style('yellow', 'Warning:'), ` ${message}`);
  }

  /**
   * A list: under --json one NDJSON line per row (the row itself), else a table on stdout by gh's
   * rules (aligned on a terminal, tab-separated when piped; see table.ts, which loads only for a
   * terminal).
   */
  async table<Row extends object>(
    rows: readonly Row[],
    columns: ReadonlyArray<Column<Row>>,
    options: TableOptions = {},
  ): Promise<void> {
    const total = Math.max(options.total ?? 0, rows.length);
    if (options.limit !== undefined) rows = rows.slice(0, options.limit);
    if (this.json) {
      for (const row of rows) this.record(row);
      return;
    }
    if (rows.length === 0) {
      this.info(options.empty ?? 'Nothing to show.');
      return;
    }
    if (this.stdout.isTTY !== true) {
      this.pipedRows(rows, columns);
      return;
    }
    if (total > rows.length) this.showing(rows.length, total, options.noun);
    const table = await this.terminalTable(rows, columns);
    table.write(rows);
  }

  private showing(shown: number, total: number, noun: string | undefined): void {
    this.stdout.write(`Showing ${shown} of ${total}${noun === undefined ? '' : ` ${noun}`}\n\n`);
  }

  /**
   * A terminal table whose columns are fitted to `sample` (table.ts): writes its header at once, and then any
   * rows given to `write`, the sample's or later ones, in the same columns.
   */
  private async terminalTable<Row extends object>(
    sample: readonly Row[],
    columns: ReadonlyArray<Column<Row>>,
  ): Promise<{ write(rows: readonly Row[]): void }> {
    const { tableLayout } = await import('./table.js');
    const colour = this.colorOnStdout;
    const cells = (rows: readonly Row[]) =>
      rows.map((row) =>
        columns.map((c) => {
          const text = oneLine(cellText(c.value(row)));
          if (c.kind === 'time') return relativeTime(text);
          const style = c.kind === 'state' && colour ? stateStyle(text) : undefined;
          return style === undefined ? text : styleText(style, text, { validateStream: false });
        }),
      );
    const width = (this.stdout as { columns?: number }).columns || 80;
    const headers = columns.map((c) => stripControlCharacters(c.header).toUpperCase());
    const fits = columns.map((c) => ({
      shrinks: shrinkingKinds.has(c.kind ?? 'text'),
      value: c.rank ?? kindValue[c.kind ?? 'text'],
      cutLast: c.kind === 'name' || c.kind === 'who' || c.kind === 'what',
    }));
    const layout = tableLayout(headers, cells(sample), width, fits);
    this.stdout.write(`${this.render([this.style('bold', layout.header)], colour)}\n`);
    return {
      write: (rows) => {
        if (rows.length > 0)
          this.stdout.write(
            cells(rows)
              .map((row) => `${layout.render(row)}\n`)
              .join(''),
          );
      },
    };
  }

  /** Whether a list says `Showing N of M` when -L cuts it (a terminal, not --json): only then is a total asked for. */
  get showsTotal(): boolean {
    return !this.json && this.stdout.isTTY === true;
  }

  /**
   * A list that arrives page by page, each page written as it arrives, in constant memory: under --json and
   * piped its lines; on a terminal a table whose columns are fitted to the first page (a later cell wider
   * than its column is cut when it is free text, never an id), so the first screen shows at once. Answers how
   * many rows it wrote.
   */
  async tablePages<Row extends object>(
    pages: AsyncIterable<{ rows: readonly Row[]; total?: number }>,
    columns: ReadonlyArray<Column<Row>>,
    options: TableOptions = {},
  ): Promise<number> {
    const limit = options.limit ?? Infinity;
    let written = 0;
    let pagesRead = 0;
    let table: { write(rows: readonly Row[]): void } | undefined;
    for await (const page of pages) {
      const rows = page.rows.slice(0, Math.max(0, limit - written));
      if (this.json) for (const row of rows) this.record(row);
      else if (this.stdout.isTTY !== true) this.pipedRows(rows, columns);
      else if (rows.length > 0) {
        if (table === undefined) {
          if (page.total !== undefined && page.total > limit) this.showing(limit, page.total, options.noun);
          table = await this.terminalTable(rows, columns);
        }
        table.write(rows);
      }
      written += rows.length;
      pagesRead += 1;
      if (pagesRead === 1 && this.out === process.stdout) leanHeapForStreaming();
    }
    if (written === 0 && !this.json) this.info(options.empty ?? 'Nothing to show.');
    return written;
  }

  /** Piped: tab-separated fields, no header, nothing cut (gh's rules). */
  private pipedRows<Row extends object>(rows: readonly Row[], columns: ReadonlyArray<Column<Row>>): void {
    for (const row of rows)
      this.stdout.write(`${columns.map((c) => oneLine(cellText(c.value(row)))).join('\t')}\n`);
  }

  /** A spinner on stderr when it is a TTY and --json is off (ora loads only then). */
  async spinner(text: string): Promise<Spinner> {
    // A terminal that reports no width (a bare pty) makes ora redraw without end: plain lines instead.
    const width = (this.stderr as { columns?: number }).columns;
    if (this.json || this.stderr.isTTY !== true) return this.plainProgress();
    if (!width) {
      this.info(`${text}`);
      return this.plainProgress();
    }
    const { default: ora } = await import('ora');
    const spinner = ora({
      text: stripControlCharacters(text),
      stream: this.stderr as NodeJS.WritableStream,
      isEnabled: true,
      discardStdin: false,
      color: this.colorOnStderr ? 'cyan' : false,
    }).start();
    this.activeSpinner = spinner;
    const end = () => {
      this.activeSpinner = undefined;
    };
    return {
      update: (t) => {
        spinner.text = stripControlCharacters(t);
      },
      succeed: (t) => {
        const mark = this.colorOnStderr
          ? styleText('green', successMark, { validateStream: false })
          : successMark;
        spinner.stopAndPersist({
          symbol: mark,
          ...(t === undefined ? {} : { text: stripControlCharacters(t) }),
        });
        end();
      },
      fail: (t) => {
        spinner.fail(t === undefined ? undefined : stripControlCharacters(t));
        end();
      },
      stop: () => {
        spinner.stop();
        end();
      },
    };
  }

  /** Human: a red `Error:` line and the suggestion on stderr. --json: one `{"error":{…}}` line on stderr. */
  error(error: CliError): void {
    this.stopSpinner();
    if (this.json) {
      const body = {
        error: {
          code: error.code,
          message: error.message,
          suggestion: error.suggestion ?? null,
          details: error.details ?? null,
        },
      };
      this.errorRecord(body);
      return;
    }
    this.info(this.style(['bold', 'red'], 'Error:'), ` ${error.message}`);
    for (const line of diagnosticLines(error.details)) this.info(`  ${line}`);
    if (error.suggestion !== undefined) this.info(error.suggestion);
  }

  /** Ctrl-C: stop any spinner and give the terminal its cursor back before the process exits. */
  interrupted(): void {
    this.stopSpinner();
    if (this.stderr.isTTY === true) this.stderr.write(`${showCursor}\n`);
  }

  private stopSpinner(): void {
    this.activeSpinner?.stop();
    this.activeSpinner = undefined;
  }

  private plainProgress(): Spinner {
    const line = (text: string | undefined) => {
      if (!this.json && text !== undefined) this.info(text);
    };
    const success = (text: string | undefined) => {
      if (text !== undefined) this.success(text);
    };
    return { update: () => undefined, succeed: success, fail: line, stop: () => undefined };
  }

  private render(segments: readonly Segment[], color: boolean): string {
    return segments
      .map((s) => {
        if (typeof s === 'string') return stripControlCharacters(s);
        const text = stripControlCharacters(s.text);
        return color ? styleText(s.style, text, { validateStream: false }) : text;
      })
      .join('');
  }
}

/**
 * A list streamed page by page allocates much and keeps nothing: V8's young generation is then held at its
 * size (it grows with the survivors of each page otherwise) and no JavaScript is optimised further (the work
 * is JSON.parse and JSON.stringify, native already). 100,000 tables (dist/gds): peak 91 -> 73-76 MiB, the
 * same CPU time; a terminal's table, 20,000 and 100,000 tables (node bin/run.js): peak 95 and 106 -> 92 MiB
 * both, no slower. Set at run time, after the bundle's code cache is read (a flag on the command line would
 * invalidate it), once, from the second page on: a short list never sets it.
 */
function leanHeapForStreaming(): void {
  if (leanHeap) return;
  leanHeap = true;
  holdYoungGeneration();
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString('--no-opt');
  } catch {
    // a Node without the flag: the list streams as before
  }
}
let leanHeap = false;

/**
 * A record with only the named fields, in the order named. A field of the command's list this record lacks
 * (another kind of record of the same command) is null; any other field it does not have is a usage error.
 */
function pickFields(value: object, fields: readonly string[], listed: readonly string[]): object {
  const record = value as Record<string, unknown>;
  const unknown = fields.filter((f) => !Object.hasOwn(record, f) && !listed.includes(f));
  if (unknown.length > 0) {
    throw new CliError(`Unknown JSON field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, {
      exitCode: ExitCode.Usage,
      code: 'unknown_json_field',
      suggestion: `Available fields: ${Object.keys(record).join(', ')}.`,
      details: { unknown, available: Object.keys(record) },
    });
  }
  return Object.fromEntries(fields.map((f) => [f, Object.hasOwn(record, f) ? record[f] : null]));
}

/** A tab or line break inside a cell would split its row or column: it becomes a space. */
function oneLine(cell: string): string {
  return cell.replace(/[\t\r\n]+/g, ' ');
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return stripControlCharacters(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** The `file:line:col severity path: message (code)` lines of gate1.yml diagnostics an error carries (the
 *  service's, under `details.server.diagnostics`, or the local check's, under `details.diagnostics`). */
function diagnosticLines(details: unknown): string[] {
  const holder = details as { diagnostics?: unknown; server?: { diagnostics?: unknown } } | null | undefined;
  const list = holder?.diagnostics ?? holder?.server?.diagnostics;
  if (!Array.isArray(list)) return [];
  return list.filter(isDiagnostic).map(formatDiagnostic);
}

function isDiagnostic(value: unknown): value is Diagnostic {
  const d = value as Partial<Diagnostic> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    typeof d.file === 'string' &&
    typeof d.line === 'number' &&
    typeof d.column === 'number' &&
    typeof d.message === 'string' &&
    typeof d.code === 'string'
  );
}

/**
 * Ctrl-C: the cursor back, under --json one `Interrupted.` error line, and exit 130 (base-command.ts,
 * direct.ts).
 */
export function exitInterrupted(out: Output, details?: Record<string, unknown>): never {
  out.interrupted();
  if (out.json) {
    out.error(
      new CliError('Interrupted.', {
        exitCode: ExitCode.Interrupted,
        ...(details === undefined ? {} : { details }),
      }),
    );
  }
  process.exit(ExitCode.Interrupted);
}
