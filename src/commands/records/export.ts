import { Flags } from '@oclif/core';
import { CliError, ExitCode } from '../../core/errors.js';
import { RecordsCommand, tableArg } from '../../cli/records-command.js';
import { exportRecords, ReaderGone } from '../../services/records-export.js';

export default class RecordsExport extends RecordsCommand<typeof RecordsExport> {
  static override summary = 'Write every row of a table as NDJSON or CSV (data plane, DATA-API token).';
  static override description =
    'Reads the table page after page by cursor (100 rows a request), one page in memory at a time, paced by the ' +
    'service’s rate headers: while the minute’s window has requests left they go at once, and when it has none ' +
    'gds waits for it to reset, so a steady run never meets a 429 (one caused by another client is waited out). ' +
    'NDJSON (the default; CSV for an --output named .csv): one record per line as the service gives it. CSV: a header (id, then the table’s columns), ' +
    'RFC 4180 quoting; an empty field is null and "" an empty string; a text cell a spreadsheet would run as a formula ' +
    "(it starts with =, +, -, @, a tab or a carriage return) gets a leading ', which records import removes " +
    '(--raw-cells: as it is). --output writes FILE.part beside FILE with ' +
    'a state file FILE.gds-export, and renames it to FILE when every row is in, so FILE is whole or absent; after ' +
    'an interruption (Ctrl-C, a kill, a lost connection) --resume continues where the state says, with no row ' +
    'lost or written twice. On a terminal a progress line on stderr; piped, stderr carries errors only. Under ' +
    '--json with --output one summary line: tableId, format, rows, output, resumedFrom, requests, waitedMs.';
  static override examples = [
    '<%= config.bin %> records export crm_contacts --profile loader > contacts.ndjson',
    '<%= config.bin %> records export crm_contacts --format csv --output contacts.csv',
    '<%= config.bin %> records export crm_contacts --format csv --raw-cells > exact.csv   # formula-like cells as they are',
    '<%= config.bin %> records export crm_contacts --output contacts.ndjson --resume',
  ];
  static override args = { table: tableArg };
  static override flags = {
    format: Flags.option({
      description:
        'ndjson (one JSON record per line) or csv; default: csv for an --output named .csv, else ndjson.',
      options: ['ndjson', 'csv'] as const,
    })(),
    output: Flags.string({
      char: 'o',
      description: 'Write to this file (whole or not at all) instead of stdout (- is stdout).',
    }),
    resume: Flags.boolean({
      description: 'Continue an interrupted export into --output (starts one when there is none).',
      dependsOn: ['output'],
    }),
    force: Flags.boolean({
      description:
        'Replace an existing --output file (or a FILE.part no interrupted export counts), or start an interrupted export over.',
      dependsOn: ['output'],
      exclusive: ['resume'],
    }),
    search: Flags.string({ char: 's', description: 'Only records whose text columns contain this text.' }),
    'raw-cells': Flags.boolean({
      description:
        "CSV: write text cells as they are. By default a cell starting with =, +, -, @, a tab or a carriage return gets a leading ' so a spreadsheet shows it instead of running it as a formula; records import takes the ' off again.",
    }),
  };

  async run(): Promise<void> {
    const { resume, force, search } = this.flags;
    const rawCells = this.flags['raw-cells'];
    // `--output -` is stdout, as `-o -` is for gate get and quarantine open: never a file named "-".
    const output = this.flags.output === '-' ? undefined : this.flags.output;
    // A file named .csv gets CSV, as records import reads a .csv file as CSV: the two round-trip by name.
    const format = this.flags.format ?? (output?.toLowerCase().endsWith('.csv') === true ? 'csv' : 'ndjson');
    if (this.flags.output === '-' && (resume === true || force === true)) {
      throw new CliError(`--${resume === true ? 'resume' : 'force'} works on a file; --output - is stdout.`, {
        exitCode: ExitCode.Usage,
        code: 'output_not_file',
        suggestion:
          'Give --output a file path to resume or replace it, or leave the flag out to write to stdout.',
      });
    }
    if (
      output === undefined &&
      this.out.json &&
      (format === 'csv' || this.out.jq !== undefined || this.out.fields !== undefined)
    ) {
      throw new CliError(
        'Under --json (or --jq) stdout carries NDJSON records, and this export would write CSV or reshaped rows there.',
        {
          exitCode: ExitCode.Usage,
          code: 'stdout_taken',
          suggestion:
            'Drop --json to pipe the rows (filter them with jq afterwards), or give --output FILE to get a summary line.',
        },
      );
    }
    const progress = await this.progress();
    const abort = new AbortController();
    try {
      const result = await this.withTable(this.args.table, (client, tableId) =>
        exportRecords(client, tableId, {
          format,
          search,
          rawCells,
          output,
          resume,
          force,
          // As on a terminal when Output says so (GDS_FORCE_TTY's `| less -R` too), as gate get decides.
          terminal: this.out.stdout.isTTY === true,
          signal: abort.signal,
          onProgress: (p) => progress.update(tableId, p),
        }),
      );
      progress.done(
        `Exported ${result.rows.toLocaleString('en')} rows of ${this.tableLabel(this.args.table, result.tableId)}${result.output === null ? '' : ` to ${result.output}`}` +
          `${result.resumedFrom === null ? '' : ` (resumed after ${result.resumedFrom.toLocaleString('en')})`}` +
          ` in ${result.requests} requests${result.waitedMs > 0 ? `, ${Math.round(result.waitedMs / 1000)} s of them waiting for the rate limit` : ''}.`,
      );
      if (this.out.json && output !== undefined) this.out.record(result);
    } catch (error) {
      progress.stop();
      if (error instanceof ReaderGone) return;
      throw error;
    }
  }

  /** A progress line on a terminal's stderr (not under --json); nothing when stderr is piped. */
  private async progress() {
    const shown = !this.out.json && process.stderr.isTTY === true;
    const spinner = shown ? await this.out.spinner(`Exporting ${this.args.table}…`) : undefined;
    const started = Date.now();
    return {
      update: (tableId: string, p: { rows: number; total?: number; waitingMs?: number }) => {
        if (spinner === undefined) return;
        const of = p.total === undefined ? '' : ` of ${p.total.toLocaleString('en')}`;
        const share = p.total ? ` (${Math.floor((100 * p.rows) / p.total)} %)` : '';
        const rate = Math.round(p.rows / Math.max(1, (Date.now() - started) / 1000));
        const wait =
          p.waitingMs === undefined
            ? `, ${rate.toLocaleString('en')} rows/s`
            : `; waiting ${Math.ceil(p.waitingMs / 1000)} s for the rate limit`;
        spinner.update(
          `Exporting ${this.tableLabel(this.args.table, tableId)}: ${p.rows.toLocaleString('en')}${of} rows${share}${wait}`,
        );
      },
      done: (text: string) => spinner?.succeed(text),
      stop: () => spinner?.stop(),
    };
  }
}
