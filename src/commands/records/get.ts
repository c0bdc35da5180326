import { recordIdArg, RecordsCommand, tableArg } from '../../cli/records-command.js';
import { getRecord } from '../../services/records.js';
import { printRecord } from '../../cli/records-views.js';

export default class RecordsGet extends RecordsCommand<typeof RecordsGet> {
  static override summary = 'Show one record of a table (data plane, DATA-API token).';
  static override description =
    'The record with the id records list gives it: one column per line, or one JSON line under --json. ' +
    'A record the table does not have is exit 5.';
  static override examples = [
    '<%= config.bin %> records get crm_contacts rec_8f2k1',
    '<%= config.bin %> records get tbl_42 rec_8f2k1 --json | jq .email',
  ];
  static override args = { table: tableArg, id: recordIdArg };

  async run(): Promise<void> {
    const record = await this.withRecord(this.args.table, this.args.id, (client, tableId) =>
      getRecord(client, tableId, this.args.id),
    );
    printRecord(this.out, record);
  }
}
