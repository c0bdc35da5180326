import { ApiCommand } from '../../cli/api-command.js';
import type { Column } from '../../cli/output-table.js';
import type { ConfigEntry } from '../../client/areas/config.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listConfig } from '../../services/workspace-config.js';

const columns: ReadonlyArray<Column<ConfigEntry>> = [
  { header: 'Key', kind: 'id', value: (c) => c.key },
  { header: 'Value', kind: 'version', value: (c) => c.value },
  { header: 'Allowed', value: (c) => c.allowedValues.join(', ') },
  { header: 'Updated at', kind: 'time', value: (c) => c.updatedAt ?? '(default)' },
  { header: 'By', kind: 'who', value: (c) => c.updatedByEmail ?? c.updatedBy },
];

export default class ConfigList extends ApiCommand<typeof ConfigList> {
  static override summary = 'Show the workspace configuration, defaults included.';
  static override description =
    'Who changed a key last is shown by e-mail, as config history shows it. Under --json one line per key ' +
    '{key,value,allowedValues,updatedAt,updatedBy,updatedByEmail}.';
  static override examples = ['<%= config.bin %> config list', '<%= config.bin %> config list --json'];

  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const entries = await this.withClient((client) => listConfig(client));
    await this.out.table(entries, columns, { limit: this.flags.limit, empty: 'No configuration keys.' });
  }
}
