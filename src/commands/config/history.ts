import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import type { Column } from '../../cli/output-table.js';
import type { ConfigChange } from '../../client/areas/config.js';
import { limitFlag } from '../../cli/list-flags.js';
import { configHistory } from '../../services/workspace-config.js';

const columns: ReadonlyArray<Column<ConfigChange>> = [
  { header: 'Changed at', kind: 'time', value: (c) => c.changedAt },
  { header: 'By', kind: 'who', value: (c) => c.changedByEmail ?? c.changedBy },
  { header: 'Old', value: (c) => c.oldValue },
  { header: 'New', value: (c) => c.newValue },
];

export default class ConfigHistory extends ApiCommand<typeof ConfigHistory> {
  static override summary = 'Show every change of one configuration key, oldest first.';
  static override description =
    'Under --json one line per change {key,oldValue,newValue,changedBy,changedAt}.';
  static override examples = ['<%= config.bin %> config history gate_mode'];
  static override args = { key: Args.string({ description: 'The key, e.g. gate_mode.', required: true }) };

  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const changes = await this.withClient((client) => configHistory(client, this.args.key));
    await this.out.table(changes, columns, { limit: this.flags.limit, empty: 'No changes of this key.' });
  }
}
