import { ApiCommand } from '../../cli/api-command.js';
import { tableColumns } from '../../cli/governance-views.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listTablePages } from '../../services/tables.js';

export default class QuarantineList extends ApiCommand<typeof QuarantineList> {
  static override pager = true;
  static override summary = 'List the QUARANTINED tables of your workspace.';
  static override description =
    'Tables registered but not yet through Gate 1, or sent back by a steward: open one with ' +
    '`gds quarantine open <tableId>`. Under --json one line per table.';
  static override examples = [
    '<%= config.bin %> quarantine list',
    '<%= config.bin %> quarantine list --json | jq -r .id',
  ];

  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const { limit } = this.flags;
    await this.withClient((client) =>
      this.out.tablePages(
        listTablePages(client, {
          state: 'QUARANTINED',
          limit,
          withTotal: this.out.showsTotal && limit !== undefined,
        }),
        tableColumns,
        {
          limit,
          empty: 'No QUARANTINED tables.',
          noun: 'tables',
        },
      ),
    );
  }
}
