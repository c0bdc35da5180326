import { Flags } from '@oclif/core';
import { RecordsCommand, tableArg } from '../../cli/records-command.js';
import { listRecordsPage } from '../../services/records.js';
import { recordColumns } from '../../cli/records-views.js';
import { shellWord } from '../../core/shell-word.js';

export default class RecordsList extends RecordsCommand<typeof RecordsList> {
  static override pager = true;
  static override summary = 'List one page of a table’s records (data plane, DATA-API token).';
  static override description =
    'One page, oldest first: --limit rows (1-100, default 50), --search keeps records whose text columns contain ' +
    'the text (case-insensitive), --cursor continues after an earlier page (the next page’s command is printed ' +
    'on stderr). Every row, paged and paced for you: gds records export. Needs a DATA-API token with read on the ' +
    'table (gds tokens issue --table <table>:read --save-profile <name>, then --profile <name>). Under --json one ' +
    'line per record, and when more follow a {"next":{"cursor":…,"command":…}} line on stderr.';
  static override examples = [
    '<%= config.bin %> records list crm_contacts --profile loader',
    "<%= config.bin %> records list crm_contacts --search ada --limit 10 --json | jq -r '.email'",
    '<%= config.bin %> records list crm_contacts --json > page.json 2> more.json; jq -r .next.cursor more.json',
    '<%= config.bin %> records list tbl_42 --cursor eyJhZnRlciI6IjEwMCJ9',
  ];
  static override args = { table: tableArg };
  static override flags = {
    limit: Flags.integer({
      char: 'L',
      description: 'Rows in the page (1-100; default 50).',
      min: 1,
      max: 100,
    }),
    search: Flags.string({ char: 's', description: 'Only records whose text columns contain this text.' }),
    cursor: Flags.string({ description: 'Continue after an earlier page: the cursor it printed.' }),
  };

  async run(): Promise<void> {
    const { limit, search, cursor } = this.flags;
    const { page, tableId } = await this.withTable(this.args.table, async (client, tableId) => ({
      tableId,
      page: await listRecordsPage(client, tableId, { limit, search, cursor }),
    }));
    await this.out.table(page.records, recordColumns(page.records), {
      empty: 'No records.',
      noun: 'records',
      ...(page.total === undefined ? {} : { total: page.total }),
    });
    if (page.nextCursor !== null) {
      // A line to paste: the cursor comes from the service, the table and search from the person's shell
      // (where they were quoted); each is one word again, whatever it holds.
      const more = this.pasteCommand([
        `records list ${shellWord(this.args.table)}`,
        ...(limit === undefined ? [] : [`--limit ${limit}`]),
        ...(search === undefined ? [] : [`--search ${shellWord(search)}`]),
        `--cursor ${shellWord(page.nextCursor)}`,
      ]);
      // Under --json a script reads the cursor from a line of its own on stderr (stdout holds records only).
      if (this.out.json) this.out.errorRecord({ next: { cursor: page.nextCursor, command: more } });
      else this.out.footnote(`More records of ${this.tableLabel(this.args.table, tableId)}: ${more}`);
    }
  }
}
