import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { openPage } from '../cli/browser.js';
import {
  connectorFlag,
  dialectFlag,
  filenameFlag,
  intervalFlag,
  modelFlag,
  replaceFlag,
  tableEnvFlag,
  sourceFlag,
} from '../cli/governance-flags.js';
import { printPushPreview, printRegistration } from '../cli/governance-views.js';
import { dryRunFlag } from '../cli/write-preview.js';
import { tablePageUrl } from '../services/tables.js';
import { resolveConnectorId } from '../services/connector-ref.js';
import { freeingExitOne } from '../cli/errors.js';
import type { CliError } from '../core/errors.js';
import {
  inConnectorDialect,
  JOB_OUTCOME_CODES,
  jobOutcomeFailure,
  pushArtifact,
  readArtifactLocally,
  waitForBaselineJob,
} from '../services/artifacts.js';

export default class Push extends ApiCommand<typeof Push> {
  static override summary =
    'Register a governance artifact (.sql, .yml, .yaml, .json) for a warehouse object.';
  static override description =
    'Mode A only. The file is parsed here first: an unsupported type, a malformed file (file:line:col) or a ' +
    'missing source is refused with exit 2 and nothing is sent. A .sql view is read as PostgreSQL (by its own ' +
    'grammar) unless --dialect, a "-- dialect: <name>" line or the type of the --connector names another ' +
    'warehouse; of a dbt properties file, ' +
    'the model --model names is pushed. --source names the warehouse object unless the ' +
    'file declares it. With - the artifact is read from stdin, and --filename gives the name it goes by (its ' +
    'extension, the type). When the name is taken the service answers 409 (exit 6): pass --replace with the existing ' +
    "artifact's governance id. Prints the governance id, the tracking URL and the baseline job; --web also opens " +
    'the tracking URL (the dashboard page) in the browser where there is a display. --wait follows ' +
    'that job until it ends (a spinner on a terminal; polls after 0.25 s, then twice as long each time up to ' +
    '--interval), prints how it ended as one line on stderr, and exits 0 when it SUCCEEDED, 1 when it FAILED or was ' +
    'CANCELLED (a failure of gds then exits 2 or more). Under --json one line: the registration, its job as it ended with --wait. With --replace the file ' +
    'is compared with the definition the table holds first (table name, source, columns and types, declarations; ' +
    'not formatting): the same definition sends nothing and prints "No change" (exit 0). --dry-run writes nothing: ' +
    "the service checks the push as it would check it (a refusal is the push's, with its exit code) and the diff is " +
    'printed.';
  static override examples = [
    '<%= config.bin %> push models/orders.sql --connector con_dev',
    '<%= config.bin %> push models/orders.sql --connector warehouse-dev   # a connector by name',
    '<%= config.bin %> push orders.yml --connector con_dev --source analytics.orders --wait',
    '<%= config.bin %> push models/orders.sql --connector con_dev --replace tbl_42 --json',
    '<%= config.bin %> push models/orders.sql --connector con_dev --web',
    '<%= config.bin %> push target/run/orders.sql --dialect snowflake --connector con_sf',
    '<%= config.bin %> push models/staging/schema.yml --model stg_orders --source analytics.stg_orders',
    '<%= config.bin %> push models/orders.sql --replace tbl_42 --dry-run',
    'git show main:models/orders.sql | <%= config.bin %> push - --filename orders.sql --replace tbl_42 --dry-run',
  ];
  static override args = {
    file: Args.string({
      description: 'The artifact file, or - for stdin (with --filename naming it).',
      required: true,
    }),
  };
  static override flags = {
    connector: connectorFlag,
    source: sourceFlag,
    replace: replaceFlag,
    env: tableEnvFlag,
    dialect: dialectFlag,
    model: modelFlag,
    filename: filenameFlag,
    wait: Flags.boolean({
      description:
        'Wait for the auto-baseline job to end: exit 1 when it FAILED or was CANCELLED, 2 or more on a failure.',
    }),
    interval: intervalFlag,
    web: Flags.boolean({
      description: "Open the table's dashboard page (the tracking URL) in the browser.",
    }),
    'dry-run': dryRunFlag,
  };

  async run(): Promise<void> {
    const { connector, source, replace, wait, interval, dialect, model, web, filename } = this.flags;
    const dryRun = this.flags['dry-run'];
    const options = { source, dialect, model, connectorId: connector, filename };
    const read = await readArtifactLocally(this.args.file, options);
    // Under --json the record carries trackingUrl; without a display the Tracking line shows it.
    const openTracking = (url: string) => {
      if (web && !this.out.json && openPage(url)) this.out.info(`Opened ${url} in your browser.`);
    };
    await this.withClient(async (client, session) => {
      const resolving = connector === undefined ? undefined : resolveConnectorId(client, connector);
      const artifact = await inConnectorDialect(client, read, options, resolving);
      const connectorId = await resolving;
      const outcome = await pushArtifact(client, artifact, {
        connectorId,
        replaceId: replace === undefined ? undefined : await this.tableIdOf(client, replace, '--replace'),
        dryRun,
      });
      if (outcome.kind !== 'pushed') {
        const { held } = outcome.kind === 'unchanged' ? outcome : { held: undefined };
        const tracking =
          held === undefined
            ? undefined
            : 'trackingUrl' in held
              ? held.trackingUrl
              : tablePageUrl(session.baseUrl, held.tableId);
        const named =
          held === undefined || replace === undefined
            ? undefined
            : this.tableLabel(replace, held.governanceId);
        printPushPreview(this.out, outcome, dryRun, tracking, named);
        if (tracking !== undefined && !dryRun) openTracking(tracking);
        return;
      }
      const { result } = outcome;
      openTracking(result.trackingUrl);
      if (!wait) {
        if (this.out.json) this.out.record(result);
        else printRegistration(this.out, result, replace === undefined ? 'Registered' : 'Replaced');
        return;
      }
      if (!this.out.json)
        printRegistration(this.out, result, replace === undefined ? 'Registered' : 'Replaced');
      // Ctrl-C while waiting: the table is registered already; its ids go into the error's details.
      this.interruptDetails = {
        tableId: result.governanceId,
        jobId: result.job.id,
        trackingUrl: result.trackingUrl,
      };
      const spinner = await this.out.spinner(`Baseline job ${result.job.id} ${result.job.status}`);
      const job = await waitForBaselineJob(
        client,
        result.job.id,
        { intervalMs: interval, known: result.job.status },
        (j) => spinner.update(`Baseline job ${j.id} ${j.status}`),
      );
      const failure = jobOutcomeFailure(job);
      // One final line, on stderr: the job's end (or the error below); stdout keeps the registration.
      if (failure === undefined) spinner.succeed(`Baseline job ${job.id} SUCCEEDED`);
      else spinner.stop();
      if (this.out.json) this.out.record({ ...result, job });
      if (failure !== undefined) throw failure;
    });
  }

  /** Under --wait exit 1 says the baseline job FAILED or was CANCELLED: any other failure ends with 2. */
  protected override endingFailure(failure: CliError): CliError {
    if (!this.flagGiven('wait') || JOB_OUTCOME_CODES.includes(failure.code)) return failure;
    return freeingExitOne(failure);
  }
}
