import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { boundedText, tableEnvFlag } from '../cli/governance-flags.js';
import { MAX_NOTE_CHARS } from '../core/text-bounds.js';
import { rejectTable } from '../services/certification.js';

export default class Reject extends ApiCommand<typeof Reject> {
  static override summary = 'Send a PENDING_REVIEW table back to QUARANTINED, saying why.';
  static override description =
    'A STEWARD or above. The reason is kept in the audit trail; the author fixes the table and submits again ' +
    '(gds gate submit). Under --json one line {tableId,state}.';
  static override examples = ['<%= config.bin %> reject t_42 --reason "email null rate is 12%, limit is 5%"'];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    reason: Flags.string({
      parse: boundedText('reason', MAX_NOTE_CHARS),
      description: 'Why the table is rejected.',
      required: true,
    }),
  };

  async run(): Promise<void> {
    const change = await this.withClient(async (client) =>
      rejectTable(client, await this.tableIdOf(client, this.args.tableId), this.flags.reason),
    );
    if (this.out.json) this.out.record(change);
    else
      this.out.success(
        `Rejected ${this.tableLabel(this.args.tableId, change.tableId)}: now ${change.state}.`,
      );
  }
}
