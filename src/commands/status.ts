import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { freeingExitOne } from '../cli/errors.js';
import type { CliError } from '../core/errors.js';
import { ExitCode } from '../core/errors.js';
import { openPage } from '../cli/browser.js';
import { intervalFlag, tableEnvFlag } from '../cli/governance-flags.js';
import { describeJobs, printStatus } from '../cli/governance-views.js';
import type { Spinner } from '../cli/output-spinner.js';
import type { TableStatus } from '../client/areas/tables.js';
import { tablePageUrl, tableStatus, watchTableStatus } from '../services/tables.js';

export default class Status extends ApiCommand<typeof Status> {
  static override summary = "Show a table's lifecycle state, certification, schema drift and active jobs.";
  static override description =
    "For a CERTIFIED table, its certified view's health: published (with the contract version it serves), " +
    'missing, or columns differ; a view a warehouse rebuild dropped (dbt renames the relation and drops the ' +
    'old one with cascade) is published again by this read when the relation still has the certified ' +
    'columns, and the line says so. ' +
    '--watch polls until no job of the table is active (after 0.25 s, then twice as long each time up to ' +
    '--interval seconds, default 3): the status first, then a line on stdout each time it changes while a job ' +
    'is active, and one final line on stderr when none is; a spinner on a terminal while jobs run. Under ' +
    '--json one line per status on stdout (the first, then each change; the last has no active job) and ' +
    'nothing on stderr. Ctrl-C stops with exit 130. ' +
    'A rebuild found by this read (the view missing, the relation with its columns) files a recertification ' +
    'request of cause rebuild, and the view line says since when the rows have not been gated; the workspace ' +
    'setting certified_view_after_rebuild (republish, the default, or withhold) decides whether the view is ' +
    'published again before the table is certified again. --exit-status exits 1 when the certified view is ' +
    'missing or a recertification request is open (as gh run view --exit-status), after printing; a failure then ' +
    'exits 2 or more. ' +
    "--web opens the table's dashboard page in the browser (https, or http on this machine) instead of " +
    'printing the status; without a display it prints the address, and under --json one line {tableId, url}.';
  static override examples = [
    '<%= config.bin %> status tbl_42',
    '<%= config.bin %> status tbl_42 --watch',
    '<%= config.bin %> status tbl_42 --web',
    "<%= config.bin %> status tbl_42 --watch --json | jq -c '{state, jobs: [.activeJobs[].status]}'",
    '<%= config.bin %> status tbl_42 --exit-status >/dev/null || echo "not gated since the last rebuild"',
  ];
  static override args = {
    tableId: Args.string({ description: 'The table id or name (gds list).', required: true }),
  };
  static override flags = {
    env: tableEnvFlag,
    watch: Flags.boolean({ description: 'Poll until no job is active.' }),
    interval: intervalFlag,
    'exit-status': Flags.boolean({
      description:
        'Exit 1 when the certified view is missing (not published again) or a recertification request is open; a failure exits 2 or more.',
      exclusive: ['watch', 'web'],
    }),
    web: Flags.boolean({
      description: "Open the table's dashboard page in the browser (or print its address).",
      exclusive: ['watch'],
    }),
  };

  async run(): Promise<void> {
    let tableId = this.args.tableId;
    if (this.flags.web) {
      // The status call first: an unknown table or a bad credential fails here, not in the browser.
      const url = await this.withClient(async (client, session) => {
        tableId = await this.tableIdOf(client, tableId);
        await tableStatus(client, tableId);
        return tablePageUrl(session.baseUrl, tableId);
      });
      if (this.out.json) this.out.record({ tableId, url });
      else if (openPage(url)) this.out.info(`Opened ${url} in your browser.`);
      else this.out.print(url);
      return;
    }
    if (!this.flags.watch) {
      const status = await this.withClient(async (client) =>
        tableStatus(client, await this.tableIdOf(client, tableId)),
      );
      if (this.out.json) this.out.record(status);
      else printStatus(this.out, status);
      // process.exitCode, not this.exit(1): a --jq filter failing on the status afterwards still ends with 2.
      if (this.flags['exit-status'] && !trusted(status)) process.exitCode = ExitCode.Failure;
      return;
    }
    let spinner: Spinner | undefined;
    let first = true;
    // stdout: the first status, then each change while a job is active. The end (no active job) is one
    // line on stderr, unless the first status already showed it.
    const show = async (status: TableStatus) => {
      spinner?.stop();
      const active = status.activeJobs.length;
      if (this.out.json) this.out.record(status);
      else if (first) printStatus(this.out, status);
      else if (active > 0)
        this.out.printField(
          `${new Date().toISOString()}  ${status.state}  jobs: ${describeJobs(status.activeJobs)}`,
        );
      else this.out.info(`${new Date().toISOString()}  ${status.state}  no active job.`);
      first = false;
      if (active > 0)
        spinner = await this.out.spinner(`Waiting for ${active} active job${active === 1 ? '' : 's'}…`);
    };
    await this.withClient(async (client) =>
      watchTableStatus(
        client,
        await this.tableIdOf(client, tableId),
        { intervalMs: this.flags.interval },
        show,
      ),
    );
    spinner?.stop();
  }

  /** Under --exit-status exit 1 means the view is missing or a request is open: a failure ends with 2. */
  protected override endingFailure(failure: CliError): CliError {
    return this.flagGiven('exit-status') ? freeingExitOne(failure) : failure;
  }
}

/** A status a CI gate can pass: the certified view (when the table has one) there, and no request open. */
function trusted(status: TableStatus): boolean {
  const view = status.certifiedView;
  const missing = view !== null && view !== undefined && view.health === 'missing' && !view.republished;
  return !missing && (status.openRecertificationRequests ?? 0) === 0;
}
