import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { freeingExitOne } from '../../cli/errors.js';
import type { CliError } from '../../core/errors.js';
import { ExitCode } from '../../core/errors.js';
import { gateFlag } from '../../cli/gate-flag.js';
import { parseSampleSpec, gateRunRequest, runGate } from '../../services/gates.js';
import { shellWord } from '../../core/shell-word.js';
import { printProof } from '../../cli/gate-output.js';

export default class GateRun extends ApiCommand<typeof GateRun> {
  static override summary = 'Dry-run Gate 1 and print its proof, or queue a Gate 2/3 job.';
  static override description =
    'Gate 1 (default) runs every baseline predicate and the declared checks on the warehouse and prints the ' +
    'proof, a table of checks with pass/fail; nothing is persisted. The exit code is 1 when a HARD_FAIL check ' +
    'fails, so a CI step stops on it (the proof is printed first); a failure exits 2 or more. --sample reads part of the rows: head:N, ' +
    'tail:N, random:N or chunks:K@N. --gate 2 (semantic/structural) and --gate 3 (statistical, needs ' +
    '--baseline <reportId>) queue an evidence-only job and print its id: follow it with gds gate status.' +
    " gds waits up to 10 minutes for the answer: a scan under the service's own statement deadlines.";
  static override examples = [
    '<%= config.bin %> gate run t_42',
    '<%= config.bin %> gate run t_42 --sample random:500 --json',
    '<%= config.bin %> gate run t_42 --gate 3 --baseline job_01H…',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    gate: gateFlag({ description: 'Which gate: 1 (dry run, default), 2 or 3 (a detached job).', default: 1 }),
    baseline: Flags.string({
      description: 'Gate 3 only: the baseline report (job) id.',
    }),
    sample: Flags.custom<string>({
      description:
        'Gate 1 only: head:N, tail:N, random:N or chunks:K@N (N up to 1,000,000 rows, K up to 1,000).',
      parse: async (input) => parseSampleSpec(input),
    })(),
  };

  async run(): Promise<void> {
    const request = gateRunRequest({
      gate: this.flags.gate,
      baseline: this.flags.baseline,
      sample: this.flags.sample,
    });
    const what =
      this.flags.gate === 1
        ? `Running Gate 1 on ${this.args.tableId} (up to 10 minutes)…`
        : `Queueing a Gate ${this.flags.gate} job for ${this.args.tableId}…`;
    const outcome = await this.out.during(what, () =>
      this.withClient(async (client) =>
        runGate(client, await this.tableIdOf(client, this.args.tableId), request),
      ),
    );
    if (outcome.kind === 'job') {
      const { job } = outcome;
      if (this.out.json) this.out.record(job);
      else {
        this.out.print(job.id);
        this.out.info(
          `Gate ${job.gate} job ${job.id} ${job.status}. Follow it: gds gate status ${shellWord(job.id)} --gate ${job.gate}`,
        );
      }
      return;
    }
    await printProof(this.out, outcome.proof, this.tableLabel(this.args.tableId, outcome.proof.tableId));
    if (!outcome.proof.passed) process.exitCode = ExitCode.Failure;
  }

  /** Exit 1 means a HARD_FAIL check failed: a failure (a status gds has no code for, a config file it cannot
   *  use, a --jq filter failing on the proof, a bug) ends with 2, as gate diff's. */
  protected override endingFailure(failure: CliError): CliError {
    return freeingExitOne(failure);
  }
}
