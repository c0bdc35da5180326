import { recordInputFlags, RecordsCommand, tableArg } from '../../cli/records-command.js';
import type { TableGrant } from '../../contract/types.js';
import { createRecord } from '../../services/records.js';

export default class RecordsCreate extends RecordsCommand<typeof RecordsCreate> {
  protected override readonly tablePermissions: TableGrant['permissions'] = ['read', 'write'];
  static override summary = 'Create a record in a table (data plane, DATA-API token with write).';
  static override description =
    'The record is one JSON object of column values, from --data, -f FILE (- for stdin) or piped stdin; it must ' +
    'hold every required column. A record the table refuses (a missing, unknown or mistyped column) is exit 7, ' +
    'naming the columns. Prints the new record’s id on stdout (and a ✓ line on stderr); under --json the record as created. Many rows: gds records import.';
  static override examples = [
    `<%= config.bin %> records create crm_contacts --data '{"email":"ada@example.com","full_name":"Ada Lovelace"}'`,
    '<%= config.bin %> records create crm_contacts -f contact.json --json',
    `echo '{"email":"alan@example.com","full_name":"Alan Turing"}' | <%= config.bin %> records create crm_contacts`,
  ];
  static override args = { table: tableArg };
  static override flags = { ...recordInputFlags };

  async run(): Promise<void> {
    const values = await this.recordInput(this.flags);
    const { record, tableId } = await this.withTable(this.args.table, async (client, tableId) => ({
      tableId,
      record: await createRecord(client, tableId, values),
    }));
    if (this.out.json) {
      this.out.record(record);
      return;
    }
    this.out.print(record.id);
    this.out.success(`Created record ${record.id} in ${this.tableLabel(this.args.table, tableId)}.`);
  }
}
