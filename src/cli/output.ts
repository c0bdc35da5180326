// The one place a command writes to the terminal. Under --json stdout carries NDJSON only (one compact
// object per line) and everything human goes nowhere; otherwise text, tables and colour. Messages,
// warnings, spinners and errors go to stderr. Every string is stripped of terminal control characters
// before it is written; the colour codes this module adds itself are the only escapes that get out.
// Commands import this module's Output; its parts are the table (output-table.ts), the NDJSON records
// (output-ndjson.ts), --jq (output-jq.ts), the pager (pager.ts) and the spinner (output-spinner.ts).
import { styleText } from 'node:util';
import { settingValue } from './settings.js';
import { CliError, ExitCode } from '../core/errors.js';
import { type Lines, onOneLine, stripControlCharacters } from '../core/terminal-text.js';
import { ndjsonLine } from '../core/ndjson.js';
import { type Diagnostic, formatDiagnostic } from '../core/gate1/diagnostic.js';
import { jsonSegments } from './json-colour.js';
import type { Segment, Style } from './segment.js';
import { leanHeapForStreaming } from '../io/young-generation.js';
import { relativeTime } from './relative-time.js';
import { JqFilter } from './output-jq.js';
import { pagedOutput, resolvePager } from './pager.js';
import { errorBody, pickFields } from './output-ndjson.js';
import { oraSpinner, type Spinner, type TurningSpinner } from './output-spinner.js';
import { pipedLine, stateStyle, terminalTable, type Column, type TableOptions } from './output-table.js';

export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  /** A stream's: false once its reader went away (`| head -1`: oclif swallows the EPIPE, Node ends it). */
  writable?: boolean;
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

/**
 * `--jq`/`-q` or `--template`/`-t` before any `--`: they imply --json, so an error found before the flags
 * are parsed (an unknown flag, a missing argument, a filter jq cannot compile) is a JSON line too. Read from
 * raw argv, where a word may still be another flag's value: once the flags are parsed they decide.
 */
export function shapingRequested(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) =>
    /^(?:--jq|--template)(?:=|$)|^-[qt]/.test(word),
  );
}

/** NO_COLOR always wins; then FORCE_COLOR (0/false off, anything else on), CLICOLOR_FORCE (not 0: on),
 *  CLICOLOR=0 (off, as gh reads it); then the `color` setting (never, always); else only on a TTY. */
export function colorEnabled(
  stream: Pick<OutputStream, 'isTTY'>,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
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
  /** stderr when one was given, else the process's, taken when something is written (secrets.ts). */
  private readonly givenStderr: OutputStream | undefined;
  /** The pager stdout goes through (pager.ts), when the command pages and stdout is a terminal. */
  private paged: { running: boolean; end(): Promise<void> } | undefined;
  private readonly env: NodeJS.ProcessEnv;
  /** Footnotes said while the pager shows stdout, written once it is quit. */
  private readonly footnotes: Segment[][] = [];
  private activeSpinner: TurningSpinner | undefined;
  /** --jq's filter over the records. */
  private readonly jqFilter: JqFilter | undefined;

  constructor(options: OutputOptions) {
    this.fields = options.fields;
    this.listedFields = options.listedFields ?? [];
    this.jq = options.jq;
    this.template = options.template;
    this.jqFilter =
      options.jq === undefined
        ? undefined
        : new JqFilter(options.jq, (text) => this.stdout.write(`${this.shown(text)}\n`));
    this.json =
      options.json ||
      options.fields !== undefined ||
      options.jq !== undefined ||
      options.template !== undefined;
    this.env = options.env ?? process.env;
    this.out = options.stdout ?? forcedTerminal(process.stdout, this.env);
    this.givenStderr = options.stderr;
  }

  get stdout(): OutputStream {
    return this.out;
  }

  get stderr(): OutputStream {
    return this.givenStderr ?? process.stderr;
  }

  /**
   * From now on stdout goes through a pager, as gh's lists, diffs and `api` do: GDS_PAGER, else `setting`
   * (the pager of `gds settings`, read from settings.json unless given), else PAGER (pager.ts: resolvePager).
   * Only when stdout is the process's and a terminal (never piped, never GDS_FORCE_TTY's stand-in); the pager
   * starts at the first write.
   */
  async usePager(setting: string | undefined = settingValue('pager', this.env)): Promise<void> {
    if (this.out !== process.stdout || process.stdout.isTTY !== true || this.paged !== undefined) return;
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
      const text = this.shown(this.template(shaped)).replace(/\n?$/, '\n');
      if (text !== '\n') this.stdout.write(text);
      return;
    }
    if (this.jqFilter === undefined) {
      if (this.stdout.isTTY === true && (this.stdout as { forced?: boolean }).forced !== true) {
        this.stdout.write(`${this.render(jsonSegments(shaped), this.colorOnStdout)}\n`);
      } else this.stdout.write(`${ndjsonLine(shaped)}\n`);
      return;
    }
    this.jqFilter?.take(ndjsonLine(shaped));
  }

  /**
   * What --jq or --template made of the records, as it reaches stdout: on a terminal (GDS_FORCE_TTY's
   * stand-in and the pager too) stripped of control characters as every string is; piped, the text as it
   * is, as `jq -r` prints it. JSON in it has nothing to strip (jq.ts escapes what a terminal acts on).
   */
  private shown(text: string): string {
    return this.stdout.isTTY === true ? stripControlCharacters(text) : text;
  }

  /** Whether --jq's filter is one gds evaluates itself (jq-subset.ts): jq need not check it first. */
  get jqIsSimple(): boolean {
    return this.jqFilter?.isSimple === true;
  }

  /**
   * Waits while stdout holds more than its buffer's worth not yet written (a pipe read slower than gds writes),
   * until it has room again or closes. A long output written in one loop is otherwise held whole in memory:
   * `gds plan --json` of 5,000 new tables piped, 23 MB of lines queued, the CLI's peak 186-252 -> 179-187 MiB
   * (docs/bench.md, "CLI memory at 5,000 models, twelfth pass").
   */
  async drained(): Promise<void> {
    const stream = this.out as OutputStream &
      Partial<Pick<NodeJS.WritableStream, 'once' | 'off'>> & { writableNeedDrain?: boolean };
    if (stream.writableNeedDrain !== true || stream.once === undefined || stream.off === undefined) return;
    const once = stream.once.bind(stream);
    const off = stream.off.bind(stream);
    await new Promise<void>((resolve) => {
      const done = () => {
        off('drain', done);
        off('close', done);
        resolve();
      };
      once('drain', done);
      once('close', done);
    });
  }

  /** Waits until every record given to `record()` is written (only `--jq` writes later); throws jq's failure. */
  async flush(): Promise<void> {
    await this.jqFilter?.flush();
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

  /**
   * One line of a label/value view (`State:  CERTIFIED`) or a one-line summary, on stdout; nothing under
   * --json. The line breaks of its segments (a service's string: a table name, an email, a message) read as
   * spaces, as in a table cell, so that no string forges a line under the view's own
   * (`orders\nState:  CERTIFIED`).
   */
  printField(...segments: Segment[]): void {
    this.print(...segments.map(oneLineSegment));
  }

  /** Human lines on stdout in one write (a diff of 80,000 lines wrote them one by one for a second). */
  printLines(lines: Segment[][]): void {
    if (this.json || lines.length === 0) return;
    const color = this.colorOnStdout;
    this.stdout.write(lines.map((segments) => `${this.render(segments, color)}\n`).join(''));
  }

  /**
   * A line for the person at the terminal, on stderr: one line, whatever its segments hold (each run of line
   * breaks reads as a space, as in `printField`), so that no service's string in it forges a line of gds's
   * (`Job j_1 ended FAILED\nForged: …`). gds's own lines are `infoLines`; a document, `infoDocument`.
   */
  info(...segments: Segment[]): void {
    this.writeStderr(`${this.render(segments.map(oneLineSegment), this.colorOnStderr)}\n`);
  }

  /** gds's own lines on stderr (`lines` in terminal-text.ts), each a line of its own. */
  infoLines(text: Lines): void {
    for (const line of text.lines) this.info(line);
  }

  /** A document on stderr, its lines as they are (the JSON body of a refused `gds api` call). */
  infoDocument(...segments: Segment[]): void {
    this.writeStderr(`${this.render(segments, this.colorOnStderr)}\n`);
  }

  private writeStderr(text: string): void {
    // A line said while a spinner turns goes above it, and the spinner carries on below.
    this.activeSpinner?.clear();
    this.stderr.write(text);
    this.activeSpinner?.render();
  }

  /**
   * A confirmation for the person, on stderr with the one mark every command uses: `✓ Created …`. Nothing
   * under --json (stdout carries the record instead, and every line of stderr stays JSON).
   */
  success(text: string): void {
    if (this.json) return;
    // One line (info's), as a detail view's: a service's string in it (`now REJECTED\n✓ Certified …`) forges no other.
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
   *  an error is one `{"error":…}` line, so every line of stderr parses (JSON keeps every character, escaping
   *  what a terminal acts on); else one `Warning:` line, as `info` makes it. */
  warn(message: string): void {
    if (this.json) this.errorRecord({ warning: { message } });
    else this.info(this.style('yellow', 'Warning:'), ` ${message}`);
  }

  /**
   * A list: under --json one NDJSON line per row (the row itself), else a table on stdout by gh's
   * rules (aligned on a terminal, tab-separated when piped; see table.ts, whose text-width libraries
   * load only for a terminal).
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
   * A terminal table whose columns are fitted to `sample` (output-table.ts): writes its header at once, and
   * then any rows given to `write`, the sample's or later ones, in the same columns.
   */
  private async terminalTable<Row extends object>(
    sample: readonly Row[],
    columns: ReadonlyArray<Column<Row>>,
  ): Promise<{ write(rows: readonly Row[]): void }> {
    const colour = this.colorOnStdout;
    const width = (this.stdout as { columns?: number }).columns || 80;
    const table = await terminalTable(sample, columns, width, colour);
    this.stdout.write(`${this.render([this.style('bold', table.header)], colour)}\n`);
    return {
      write: (rows) => {
        if (rows.length > 0) this.stdout.write(table.lines(rows));
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
      // From the second page on: a list of one page (most) never loads node:v8 to set V8's flags.
      if (pagesRead === 1 && this.out === process.stdout) leanHeapForStreaming();
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
      // No page more once stdout's reader went away or -L is reached: `gds list --json | head -1` of 100,000
      // tables read every page (101 requests, 15-25 s) to write nowhere.
      if (this.out.writable === false || written >= limit) break;
    }
    if (written === 0 && !this.json) this.info(options.empty ?? 'Nothing to show.');
    return written;
  }

  /** Piped: tab-separated fields, no header, nothing cut (gh's rules). */
  private pipedRows<Row extends object>(rows: readonly Row[], columns: ReadonlyArray<Column<Row>>): void {
    for (const row of rows) this.stdout.write(pipedLine(row, columns));
  }

  /** A spinner on stderr when it is a TTY and --json is off (ora loads only then). */
  async spinner(text: string): Promise<Spinner> {
    // A terminal that reports no width (a bare pty) makes ora redraw without end: plain lines instead.
    const width = (this.stderr as { columns?: number }).columns;
    if (this.json || this.stderr.isTTY !== true) return this.plainProgress();
    if (!width) {
      this.info(text);
      return this.plainProgress();
    }
    const { spinner, turning } = await oraSpinner(
      text,
      this.stderr as NodeJS.WritableStream,
      () => this.colorOnStderr,
      successMark,
      () => {
        this.activeSpinner = undefined;
      },
    );
    this.activeSpinner = turning;
    return spinner;
  }

  /** Human: a red `Error:` line and the suggestion on stderr. --json: one `{"error":{…}}` line on stderr. */
  error(error: CliError): void {
    this.stopSpinner();
    if (this.json) {
      this.errorRecord(errorBody(error));
      return;
    }
    // The message is one line, unless gds wrote its lines (a list of candidates): a service's never makes two.
    const [headline = '', ...more] = error.messageLines.lines;
    this.info(this.style(['bold', 'red'], 'Error:'), ` ${headline}`);
    for (const line of more) this.info(line);
    for (const line of diagnosticLines(error.details)) this.info(`  ${line}`);
    if (error.suggestionLines !== undefined) this.infoLines(error.suggestionLines);
  }

  /**
   * Ctrl-C: stop any spinner and give the terminal its cursor back before the process exits. Not under --json: no
   * spinner hid it, and stderr holds JSON lines only.
   */
  interrupted(): void {
    this.stopSpinner();
    if (this.stderr.isTTY === true && !this.json) this.stderr.write(`${showCursor}\n`);
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

/** A segment on one line: its line breaks read as spaces (`onOneLine`). */
function oneLineSegment(segment: Segment): Segment {
  return typeof segment === 'string' ? onOneLine(segment) : { ...segment, text: onOneLine(segment.text) };
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

/** The exit code of a run ended by SIGTERM, as a process killed by it shows (128 + 15). */
export const SIGTERM_EXIT_CODE = 143;

/**
 * Ctrl-C (SIGINT) or SIGTERM: the cursor back, under --json one `Interrupted.` error line, and exit 130, or
 * 143 for SIGTERM (base-command.ts). Work that must not outlive the process cleans up on its `exit` event.
 */
export function exitInterrupted(
  out: Output,
  details?: Record<string, unknown>,
  signal: 'SIGINT' | 'SIGTERM' = 'SIGINT',
  advice?: string,
): never {
  out.interrupted();
  if (out.json) {
    out.error(
      new CliError(signal === 'SIGINT' ? 'Interrupted.' : 'Interrupted (SIGTERM).', {
        exitCode: ExitCode.Interrupted,
        ...(details === undefined ? {} : { details }),
        ...(advice === undefined ? {} : { suggestion: advice }),
      }),
    );
  } else if (advice !== undefined) {
    out.info(advice);
  }
  process.exit(signal === 'SIGINT' ? ExitCode.Interrupted : SIGTERM_EXIT_CODE);
}
