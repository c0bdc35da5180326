import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { ExitCode } from '../../core/errors.js';
import { submitGate } from '../../services/gates.js';
import { printProof } from '../../cli/gate-output.js';

export default class GateSubmit extends ApiCommand<typeof GateSubmit> {
  static override summary = 'Run Gate 1 on every row, keep the proof, and send the table to review.';
  static override description =
    'A full scan: the proof is persisted, the table moves to PENDING_REVIEW and the steward is notified. ' +
    'Exit 1 when a HARD_FAIL check failed (the proof is kept, but certification will refuse it). ' +
    'Submitting a CERTIFIED table withdraws its certified view (certified_<env>.<table>) until the table is ' +
    'certified again: stderr says so, and the JSON line has viewWithdrawn: true and withdrawnView. ' +
    '--if-not-certified leaves a CERTIFIED table (and its view) as it is: nothing is submitted, stderr says ' +
    'so and the exit is 0 (under --json one line {skipped: true, tableId, state, certifiedView, reason}). ' +
    'Under --json one line, the proof.' +
    " gds waits up to 10 minutes for the answer: a scan under the service's own statement deadlines.";
  static override examples = [
    '<%= config.bin %> gate submit t_42',
    '<%= config.bin %> gate submit t_42 --json',
    '<%= config.bin %> gate submit t_42 --if-not-certified',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    'if-not-certified': Flags.boolean({
      description:
        'Skip (exit 0) a CERTIFIED table instead of withdrawing its certified view until it is certified again.',
    }),
  };

  async run(): Promise<void> {
    const ifNotCertified = this.flags['if-not-certified'];
    const outcome = await this.out.during(`Running Gate 1 over every row of ${this.args.tableId}…`, () =>
      this.withClient(async (client) =>
        submitGate(client, await this.tableIdOf(client, this.args.tableId), { ifNotCertified }),
      ),
    );
    if (outcome.kind === 'skipped') {
      const { kind: _kind, ...skipped } = outcome;
      if (this.out.json) this.out.record({ skipped: true, ...skipped });
      else this.out.info(`Skipped (--if-not-certified): ${outcome.reason}`);
      return;
    }
    const { proof } = outcome;
    await printProof(this.out, proof, this.tableLabel(this.args.tableId, proof.tableId));
    if (proof.viewWithdrawn === true && !this.out.json) {
      this.out.warn(
        `${proof.tableId} was CERTIFIED: its certified view ${proof.withdrawnView ?? ''} is withdrawn until the table is certified again (gds certify ${proof.tableId}). --if-not-certified skips a CERTIFIED table instead.`,
      );
    }
    if (!proof.passed) process.exitCode = ExitCode.Failure;
  }
}
