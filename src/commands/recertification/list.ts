import { Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { requestColumns } from '../../cli/governance-views.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listRecertificationRequestPages } from '../../services/recertification.js';

export default class RecertificationList extends ApiCommand<typeof RecertificationList> {
  static override pager = true;
  static override summary = 'List the open recertification requests of your workspace.';
  static override description =
    'Requests filed by drift, a schema change, an ingest or by hand, oldest first: one per table and cause, ' +
    "a repeated signal counts into it (Signals, Last seen, Latest: the latest signal's details; --json has " +
    'every signal as signals[]). Certifying the table resolves them; or ' +
    'acknowledge them with `gds recertification dismiss <requestId>...` (or --table). --all lists dismissed ' +
    'and resolved ones too (RESOLVED with the contract version that resolved them). Under --json one line ' +
    'per request.';
  static override examples = [
    '<%= config.bin %> recertification list',
    '<%= config.bin %> recertification list --table tbl_42 --json',
    '<%= config.bin %> recertification list --all --table orders',
  ];
  static override flags = {
    limit: limitFlag,
    env: tableEnvFlag,
    table: Flags.string({ description: "Only this table's requests (its id or name)." }),
    all: Flags.boolean({ description: 'Dismissed and resolved requests too, not only the open ones.' }),
  };

  async run(): Promise<void> {
    const { table, all, limit } = this.flags;
    await this.withClient(async (client) =>
      this.out.tablePages(
        listRecertificationRequestPages(client, {
          tableId: table === undefined ? undefined : await this.tableIdOf(client, table, '--table'),
          all,
          limit,
          // Only --json prints a request's earlier signals: a table of 2,000 requests is one request a page.
          everySignal: this.out.json,
        }),
        requestColumns,
        {
          limit,
          empty: all ? 'No recertification requests.' : 'No open recertification requests.',
          noun: 'requests',
        },
      ),
    );
  }
}
