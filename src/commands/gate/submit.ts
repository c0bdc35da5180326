import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { ExitCode } from '../../cli/errors.js';

export default class GateSubmit extends ApiCommand<typeof GateSubmit> {
  static override summary = 'Run Gate 1 on every row, keep the proof, and send the table to review.';
  static override description =
    'A full scan: the proof is persisted, the table moves to PENDING_REVIEW and the steward is notified. ' +
    'Exit 1 when a HARD_FAIL check failed (the proof is kept, but certification will refuse it). ' +
    'Under --json one line, the proof.';
  static override examples = [
    '<%= config.bin %> gate submit t_42',
    '<%= config.bin %> gate submit t_42 --json',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = { env: tableEnvFlag };

  async run(): Promise<void> {
    const { submitGate } = await import('../../services/gates.js');
    const proof = await this.withClient(async (client) =>
      submitGate(client, await this.tableIdOf(client, this.args.tableId)),
    );
    const { printProof } = await import('../../cli/gate-output.js');
    await printProof(this.out, proof);
    if (!proof.passed) process.exitCode = ExitCode.Failure;
  }
}
