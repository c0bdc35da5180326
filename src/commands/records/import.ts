import { Flags } from '@oclif/core';
import type { TableGrant } from '../../contract/types.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { RecordsCommand, tableArg } from '../../cli/records-command.js';
import { importRecords } from '../../services/records-import.js';

export default class RecordsImport extends RecordsCommand<typeof RecordsImport> {
  protected override readonly tablePermissions: TableGrant['permissions'] = ['read', 'write'];
  static override summary =
    'Load rows from a CSV, NDJSON or JSON file into a table (data plane, DATA-API token).';
  static override description =
    'With --key <column> rows are upserted (a row whose key matches updates every such record, else it is ' +
    'inserted) in batches of up to 10,000; without it they go through bulk-update in batches of up to 1,000: a row ' +
    'with an id updates that record, one without is created (--ignore-ids creates every row). The format comes ' +
    'from the file name (.csv, .ndjson/.jsonl, .json) or --format; stdin (-f -) is NDJSON unless --format says. ' +
    'An empty CSV or JSON input (nothing but blank lines) is exit 2; a CSV header alone, a JSON [] or empty NDJSON is no rows. ' +
    'CSV: a header of column names; an empty field is null, "" an empty string; numbers and booleans are read by ' +
    "the column’s type; a leading ' before =, +, -, @, a tab or a carriage return (how records export keeps a " +
    'spreadsheet from running a cell) is taken off (--raw-cells: kept). Every row is checked against the table’s columns first: a row that does not fit (or that ' +
    'the service refuses) is reported and left out, the others go; then exit 7. --dry-run checks every row and ' +
    'sends none. Requests are paced by the rate headers like export’s. An import keeps its place in a state ' +
    'file under $XDG_STATE_HOME/gds/imports: after an interruption --resume skips the batches the service ' +
    'acknowledged (with --key the one in flight is sent again, which doubles nothing). From stdin, --resume needs ' +
    'the same rows piped in again in the same order: the rows it skips are checked against a digest of those the ' +
    'interrupted run read, and a different input is refused before anything is sent. Refused rows: one line each ' +
    'on stderr, or under --json one NDJSON line each on stdout (row, line, error); the summary goes to stderr.';
  static override examples = [
    '<%= config.bin %> records import crm_contacts -f contacts.csv --key email --profile loader',
    '<%= config.bin %> records import crm_contacts -f contacts.ndjson --key email --resume',
    '<%= config.bin %> records import crm_contacts -f contacts.json --dry-run',
    '<%= config.bin %> records export crm_contacts | <%= config.bin %> records import crm_copy -f - --key email',
    '<%= config.bin %> records export crm_contacts | <%= config.bin %> records import crm_copy -f - --key email --resume',
  ];
  static override args = { table: tableArg };
  static override flags = {
    file: Flags.string({ char: 'f', description: 'The rows: a file, or - for stdin.', required: true }),
    format: Flags.option({
      description: 'csv, ndjson or json (an array); default from the file name, ndjson for stdin.',
      options: ['csv', 'ndjson', 'json'] as const,
    })(),
    key: Flags.string({
      char: 'k',
      description: 'Upsert on this column (import?mode=upsert&key=); without it, bulk-update.',
    }),
    'batch-size': Flags.integer({
      description: 'Rows per request (default and most: 10,000 with --key, 1,000 without).',
      min: 1,
      max: 10_000,
    }),
    'ignore-ids': Flags.boolean({
      description: 'Without --key: create every row, dropping any id field (an export into another table).',
      exclusive: ['key'],
    }),
    'dry-run': Flags.boolean({ description: 'Check every row against the table; send none.' }),
    resume: Flags.boolean({
      description:
        'Continue an interrupted import of the same file, or of the same rows on stdin (starts one when there is none).',
    }),
    force: Flags.boolean({
      description: 'Start over, dropping the state of an interrupted import of the same file or stdin.',
      exclusive: ['resume'],
    }),
    'raw-cells': Flags.boolean({
      description:
        "CSV: keep every cell as it is; by default a leading ' before =, +, -, @, a tab or a carriage return (how records export neutralises a formula) is taken off.",
    }),
  };

  async run(): Promise<void> {
    const { file, format, key, resume, force } = this.flags;
    const shown = !this.out.json && process.stderr.isTTY === true;
    const spinner = shown ? await this.out.spinner(`Importing into ${this.args.table}…`) : undefined;
    const result = await this.withTable(this.args.table, (client, tableId) =>
      importRecords(client, tableId, {
        input: file,
        format,
        key,
        batchSize: this.flags['batch-size'],
        ignoreIds: this.flags['ignore-ids'],
        dryRun: this.flags['dry-run'],
        resume,
        force,
        rawCells: this.flags['raw-cells'],
        onNotice: (message) => {
          spinner?.stop();
          this.out.warn(message);
        },
        onRowError: (refused) => {
          if (this.out.json) {
            this.out.record(refused);
            return;
          }
          spinner?.stop();
          this.out.info(
            `row ${refused.row}${refused.line === undefined ? '' : ` (line ${refused.line})`}: ${refused.error.message}`,
          );
        },
        onProgress: (p) =>
          spinner?.update(
            `Importing into ${this.tableLabel(this.args.table, tableId)}: ${p.rows.toLocaleString('en')} rows read, ${p.sent.toLocaleString('en')} sent` +
              `${p.refused > 0 ? `, ${p.refused.toLocaleString('en')} refused` : ''}` +
              `${p.waitingMs === undefined ? '' : `; waiting ${Math.ceil(p.waitingMs / 1000)} s for the rate limit`}`,
          ),
      }),
    ).catch((error: unknown) => {
      spinner?.stop();
      throw error;
    });
    spinner?.stop();
    if (this.out.json) {
      this.out.errorRecord({ summary: result });
    } else {
      const verb = result.dryRun ? 'Checked' : 'Imported';
      this.out.success(
        `${verb} ${result.rows.toLocaleString('en')} rows of ${result.input} ${result.dryRun ? 'for' : 'into'} ${this.tableLabel(this.args.table, result.tableId)}: ` +
          (result.dryRun
            ? `${(result.rows - result.refused).toLocaleString('en')} fit, nothing sent`
            : `${result.inserted.toLocaleString('en')} inserted, ${result.updated.toLocaleString('en')} updated in ${result.batches} batches`) +
          `${result.refused > 0 ? `, ${result.refused.toLocaleString('en')} refused` : ''}` +
          `${result.resumedFrom === null ? '' : ` (resumed after row ${result.resumedFrom.toLocaleString('en')})`}.`,
      );
    }
    if (result.refused > 0) {
      throw new CliError(`${result.refused} of ${result.rows} rows were refused.`, {
        exitCode: ExitCode.Refused,
        code: 'rows_refused',
        suggestion: 'Each refused row is listed above with its reason; fix them and import those rows again.',
        details: { refused: result.refused, rows: result.rows },
      });
    }
  }
}
