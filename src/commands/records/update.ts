import { recordIdArg, recordInputFlags, RecordsCommand, tableArg } from '../../cli/records-command.js';
import type { TableGrant } from '../../contract/types.js';
import { sentChanges, updateRecord } from '../../services/records.js';

export default class RecordsUpdate extends RecordsCommand<typeof RecordsUpdate> {
  protected override readonly tablePermissions: TableGrant['permissions'] = ['read', 'write'];
  static override summary = 'Change some columns of a record (data plane, DATA-API token with write).';
  static override description =
    'Only the columns given change (a JSON object from --data, -f FILE or piped stdin); null empties an optional ' +
    'column. A record the table does not have is exit 5; a value the table refuses is exit 7. Under --json the ' +
    'record as it is now.';
  static override examples = [
    `<%= config.bin %> records update crm_contacts rec_8f2k1 --data '{"score":95}'`,
    '<%= config.bin %> records update tbl_42 rec_8f2k1 -f changes.json --json',
  ];
  static override args = { table: tableArg, id: recordIdArg };
  static override flags = { ...recordInputFlags };

  async run(): Promise<void> {
    const changes = await this.recordInput(this.flags);
    const record = await this.withRecord(this.args.table, this.args.id, (client, tableId) =>
      updateRecord(client, tableId, this.args.id, changes),
    );
    if (this.out.json) {
      this.out.record(record);
      return;
    }
    this.out.success(
      `Updated record ${record.id}: ${Object.keys(sentChanges(this.args.id, changes)).join(', ')}.`,
    );
  }
}
