import { Flags } from '@oclif/core';
import type { TableGrant } from '../../contract/types.js';
import { recordIdArg, RecordsCommand, tableArg } from '../../cli/records-command.js';
import { confirm, requireConfirmable } from '../../cli/prompt.js';
import { echoed } from '../../core/echo.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { deleteRecord } from '../../services/records.js';

export default class RecordsDelete extends RecordsCommand<typeof RecordsDelete> {
  protected override readonly tablePermissions: TableGrant['permissions'] = ['read', 'write'];
  static override summary = 'Delete a record of a table (data plane, DATA-API token with write).';
  static override description =
    'Shows the record and asks for confirmation on a terminal; without a terminal it refuses (exit 2) unless ' +
    '--yes. A record the table does not have is exit 5. Under --json one line: tableId, id, deleted.';
  static override examples = [
    '<%= config.bin %> records delete crm_contacts rec_8f2k1',
    '<%= config.bin %> records delete tbl_42 rec_8f2k1 --yes --json',
  ];
  static override args = { table: tableArg, id: recordIdArg };
  static override flags = {
    yes: Flags.boolean({ char: 'y', description: 'Delete without asking.' }),
  };

  async run(): Promise<void> {
    const { yes } = this.flags;
    requireConfirmable('records delete', yes, `delete record ${this.args.id}`);
    const deleted = await this.withRecord(this.args.table, this.args.id, (client, tableId) =>
      deleteRecord(
        client,
        tableId,
        this.args.id,
        yes
          ? undefined
          : async (record) =>
              confirm(
                `Delete record ${record.id} of ${this.tableLabel(this.args.table, tableId)} (${summary(record)})?`,
              ),
      ),
    );
    if (deleted === null) {
      // A no is exit 1, as gds delete's: a script run on a terminal does not go on as if it were deleted.
      throw new CliError(
        `Not deleted: record ${echoed(this.args.id)} of ${echoed(this.args.table)} is unchanged.`,
        {
          exitCode: ExitCode.Failure,
          code: 'not_confirmed',
          suggestion: 'Answer y to delete, or pass --yes to skip the question.',
        },
      );
    }
    if (this.out.json) {
      this.out.record(deleted);
      return;
    }
    this.out.success(`Deleted record ${deleted.id} of ${this.tableLabel(this.args.table, deleted.tableId)}.`);
  }
}

/** The first few column values of a record, for the question. */
function summary(record: Record<string, unknown>): string {
  const shown = Object.entries(record)
    .filter(([name]) => name !== 'id')
    .slice(0, 3)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`);
  return shown.join(', ');
}
