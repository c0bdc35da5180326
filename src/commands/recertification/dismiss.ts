import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';

export default class RecertificationDismiss extends ApiCommand<typeof RecertificationDismiss> {
  static override summary = 'Acknowledge a recertification request without certifying or rejecting.';
  static override description =
    'The table owner or a steward and above. The request leaves the open list; the table keeps its state. ' +
    'Under --json one line: the dismissed request.';
  static override examples = [
    '<%= config.bin %> recertification dismiss rcr_42',
    '<%= config.bin %> recertification dismiss rcr_42 --reason "column rename only, semantics unchanged"',
  ];
  static override args = {
    requestId: Args.string({ description: 'The request id (gds recertification list).', required: true }),
  };
  static override flags = {
    reason: Flags.string({
      description: 'Why it needs no recertification (kept in the audit log).',
    }),
  };

  async run(): Promise<void> {
    const { dismissRecertificationRequest } = await import('../../services/recertification.js');
    const request = await this.withClient((client) =>
      dismissRecertificationRequest(client, this.args.requestId, this.flags.reason),
    );
    if (this.out.json) {
      this.out.record(request);
      return;
    }
    this.out.print(
      `Dismissed ${request.id} (${request.cause}) on ${request.tableName} (${request.tableId}).`,
    );
  }
}
