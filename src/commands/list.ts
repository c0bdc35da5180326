import { Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { tableColumns } from '../cli/governance-views.js';
import { LIFECYCLE_STATES } from '../core/lifecycle/types.js';
import { limitFlag } from '../cli/list-flags.js';
import { listTablePages } from '../services/tables.js';

export default class List extends ApiCommand<typeof List> {
  static override pager = true;
  static override summary = 'List the governed tables of your workspace.';
  static override description =
    'Every active table, oldest first: id, name, custody mode (MODE_A warehouse-connected, MODE_B managed), ' +
    'lifecycle state, gate mode and environment. --state keeps one lifecycle state. Under --json one line per table.';
  static override examples = [
    '<%= config.bin %> list',
    '<%= config.bin %> list --state CERTIFIED --json | jq -r .id',
  ];
  static override flags = {
    limit: limitFlag,
    state: Flags.option({
      description: 'Only tables in this lifecycle state.',
      options: LIFECYCLE_STATES,
    })(),
  };

  async run(): Promise<void> {
    await this.withClient((client) =>
      this.out.tablePages(
        // Only `Showing N of M` (-L on a terminal) needs the total: else the service skips counting the workspace.
        listTablePages(client, {
          state: this.flags.state,
          limit: this.flags.limit,
          withTotal: this.out.showsTotal && this.flags.limit !== undefined,
        }),
        tableColumns,
        {
          limit: this.flags.limit,
          empty: 'No tables.',
          noun: 'tables',
        },
      ),
    );
  }
}
