import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { tableEnvFlag } from '../cli/governance-flags.js';
import { confirm, requireConfirmable } from '../cli/prompt.js';
import { deleteTable } from '../services/tables.js';

export default class Delete extends ApiCommand<typeof Delete> {
  static override summary = 'Soft-delete a governance artifact; the warehouse object is left as it is.';
  static override description =
    'Mode A only (a Mode B table is refused, exit 7); the table owner or a workspace admin (else exit 4). ' +
    'Asks for confirmation on a terminal; without a terminal it refuses (exit 2) unless --yes. Under --json ' +
    'one line: id, governanceId, state SOFT_DELETED, deletedAt.';
  static override examples = [
    '<%= config.bin %> delete tbl_42',
    '<%= config.bin %> delete tbl_42 --yes --json',
  ];
  static override args = {
    id: Args.string({ description: 'The table id, governance id or table name.', required: true }),
  };
  static override flags = {
    env: tableEnvFlag,
    yes: Flags.boolean({ char: 'y', description: 'Delete without asking.' }),
  };

  async run(): Promise<void> {
    const { yes } = this.flags;
    requireConfirmable('delete', yes, `delete ${this.args.id}`);
    const deleted = await this.withClient(async (client) =>
      deleteTable(
        client,
        await this.tableIdOf(client, this.args.id, '<id>'),
        async (t) =>
          yes ||
          confirm(
            `Delete ${t.name} (${t.id}, ${t.state})? Its governance record goes; the warehouse object ${t.source ?? ''} stays.`,
          ),
      ),
    );
    if (this.out.json) {
      this.out.record(deleted);
      return;
    }
    this.out.success(
      `Deleted ${this.tableLabel(this.args.id, deleted.id)} (governance id ${deleted.governanceId}).`,
    );
  }
}
