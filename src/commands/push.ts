import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { connectorFlag, intervalFlag, replaceFlag, sourceFlag } from '../cli/governance-flags.js';
import { printRegistration } from '../cli/governance-views.js';

export default class Push extends ApiCommand<typeof Push> {
  static override summary =
    'Register a governance artifact (.sql, .yml, .yaml, .json) for a warehouse object.';
  static override description =
    'Mode A only. The file is parsed here first: an unsupported type, a malformed file (file:line:col) or a ' +
    'missing source is refused with exit 2 and nothing is sent. --source names the warehouse object unless the ' +
    'file declares it. When the name is taken the service answers 409 (exit 6): pass --replace with the existing ' +
    "artifact's governance id. Prints the governance id, the tracking URL and the baseline job. --wait follows " +
    'that job until it ends (a spinner on a terminal) and exits 0 when it SUCCEEDED, 1 when it FAILED or was ' +
    'CANCELLED. Under --json one line: the registration, its job as it ended with --wait.';
  static override examples = [
    '<%= config.bin %> push models/orders.sql --connector con_dev',
    '<%= config.bin %> push orders.yml --connector con_dev --source analytics.orders --wait',
    '<%= config.bin %> push models/orders.sql --connector con_dev --replace tbl_42 --json',
  ];
  static override args = {
    file: Args.string({ description: 'The artifact file.', required: true }),
  };
  static override flags = {
    connector: connectorFlag,
    source: sourceFlag,
    replace: replaceFlag,
    wait: Flags.boolean({ description: 'Wait for the auto-baseline job to end.', env: 'GDS_WAIT' }),
    interval: intervalFlag,
  };

  async run(): Promise<void> {
    const { jobOutcomeFailure, pushArtifact, readArtifact, waitForBaselineJob } =
      await import('../services/artifacts.js');
    const { connector, source, replace, wait, interval } = this.flags;
    const artifact = await readArtifact(this.args.file, { source });
    await this.withClient(async (client) => {
      const result = await pushArtifact(client, artifact, { connectorId: connector, replaceId: replace });
      if (!wait) {
        if (this.out.json) this.out.record(result);
        else printRegistration(this.out, result, replace === undefined ? 'Registered' : 'Replaced');
        return;
      }
      if (!this.out.json)
        printRegistration(this.out, result, replace === undefined ? 'Registered' : 'Replaced');
      const spinner = await this.out.spinner(`Baseline job ${result.job.id} ${result.job.status}`);
      const job = await waitForBaselineJob(client, result.job.id, { intervalMs: interval }, (j) =>
        spinner.update(`Baseline job ${j.id} ${j.status}`),
      );
      const failure = jobOutcomeFailure(job);
      if (failure === undefined) spinner.succeed(`Baseline job ${job.id} SUCCEEDED`);
      else spinner.fail(failure.message);
      if (this.out.json) this.out.record({ ...result, job });
      // stdout ends with where the job ended, not with the QUEUED it started in.
      else this.out.print(`Status:   baseline job ${job.id} ${job.status}`);
      if (failure !== undefined) throw failure;
    });
  }
}
