import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { refuseBadId } from '../../cli/base-command.js';
import { boundedText, tableEnvFlag } from '../../cli/governance-flags.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import { dismissRecertificationRequests } from '../../services/recertification.js';

export default class RecertificationDismiss extends ApiCommand<typeof RecertificationDismiss> {
  static override summary = 'Acknowledge recertification requests without certifying or rejecting.';
  static override description =
    'The table owner or a steward and above. Name the requests (several ids at once), or --table to dismiss ' +
    'every open request of one table (its id or name). Each request leaves the open list; the table keeps ' +
    'its state. One that cannot be dismissed does not stop the others: the command then ends with the ' +
    'first failure, after the others. Under --json one line per dismissed request.';
  static override examples = [
    '<%= config.bin %> recertification dismiss rcr_42',
    '<%= config.bin %> recertification dismiss rcr_42 rcr_43 --reason "column rename only, semantics unchanged"',
    '<%= config.bin %> recertification dismiss --table orders --reason "backfill, same rows"',
  ];
  static override strict = false;
  static override args = {
    requestId: Args.string({
      description: 'A request id (gds recertification list); several may follow.',
      required: false,
    }),
  };
  static override flags = {
    reason: Flags.string({
      parse: boundedText('reason', MAX_NOTE_CHARS),
      description: 'Why it needs no recertification (kept in the audit log).',
    }),
    table: Flags.string({ description: 'Dismiss every open request of this table (its id or name).' }),
    env: tableEnvFlag,
  };

  async run(): Promise<void> {
    const { argv } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: this.ctor.baseFlags,
      args: this.ctor.args,
      strict: false,
    });
    const ids = argv.map(String);
    // Each id goes into a request's path: `rcr_1 ""` (an unset variable) or `..` is refused as the first one is.
    for (const id of ids) refuseBadId('requestId', id, 'recertification dismiss');
    const { table, reason } = this.flags;
    if (ids.length === 0 && table === undefined) {
      throw new CliError(
        'Name the requests to dismiss, or --table to dismiss every open request of a table.',
        {
          exitCode: ExitCode.Usage,
          code: 'nothing_to_dismiss',
          suggestion: 'gds recertification list shows the open requests and their ids.',
        },
      );
    }
    const outcome = await this.withClient(async (client) =>
      dismissRecertificationRequests(client, {
        ids,
        tableId: table === undefined ? undefined : await this.tableIdOf(client, table, '--table'),
        reason,
        onDismissed: (request) => {
          if (this.out.json) this.out.record(request);
          else
            this.out.success(
              `Dismissed ${request.id} (${request.cause}) on ${request.tableName} (${request.tableId}).`,
            );
        },
      }),
    );
    // Under --json no line says it: stdout holds no dismissed request.
    if (outcome.attempted === 0 && table !== undefined && !this.out.json) {
      this.out.info(`No open recertification requests on ${table}: nothing to dismiss.`);
    }
  }
}
