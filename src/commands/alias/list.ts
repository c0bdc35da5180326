import { BaseCommand } from '../../cli/base-command.js';
import { limitFlag } from '../../cli/list-flags.js';
import type { Column } from '../../cli/output-table.js';
import { readSettings } from '../../cli/settings.js';

interface AliasRow {
  name: string;
  expansion: string;
  shell: boolean;
}

const columns: ReadonlyArray<Column<AliasRow>> = [
  { header: 'Alias', kind: 'id', value: (a) => a.name },
  { header: 'Expansion', kind: 'version', value: (a) => a.expansion },
];

export default class AliasList extends BaseCommand<typeof AliasList> {
  static override summary = 'List your aliases.';
  static override description =
    'Each alias and what it expands to (a shell alias starts with !). Under --json one line per alias ' +
    '{name,expansion,shell}.';
  static override examples = [
    '<%= config.bin %> alias list',
    '<%= config.bin %> alias list --json',
    '<%= config.bin %> alias list -L 5',
  ];
  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const rows = Object.entries(readSettings().aliases)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, expansion]) => ({ name, expansion, shell: expansion.startsWith('!') }));
    await this.out.table(rows, columns, {
      limit: this.flags.limit,
      noun: 'aliases',
      empty: "No aliases. Add one: gds alias set ls 'list --state CERTIFIED'",
    });
  }
}
