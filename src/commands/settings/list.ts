import { BaseCommand } from '../../cli/base-command.js';
import { limitFlag } from '../../cli/list-flags.js';
import type { Column } from '../../cli/output-table.js';
import { readSettings, settingRecord, SETTINGS } from '../../cli/settings.js';
import type { SettingRecord } from '../../cli/settings.js';

const defaultLabel = (key: string) => SETTINGS.find((spec) => spec.key === key)?.defaultLabel ?? 'none';

const columns: ReadonlyArray<Column<SettingRecord>> = [
  { header: 'Key', kind: 'id', value: (s) => s.key },
  { header: 'Value', kind: 'version', value: (s) => s.value || `(${defaultLabel(s.key)})` },
  {
    header: 'From',
    value: (s) =>
      (s.source === 'settings' ? 'settings' : 'default') +
      (s.overriddenBy === null ? '' : ` (${s.overriddenBy} set: it wins)`),
  },
  { header: 'Allowed', value: (s) => s.allowedValues?.join(', ') ?? 'a program' },
];

export default class SettingsList extends BaseCommand<typeof SettingsList> {
  static override summary = "Show gds's own settings (prompt, browser, pager, color), defaults included.";
  static override description =
    'These are the settings of this gds on this computer, kept in settings.json in the config folder ' +
    '(GDS_CONFIG_DIR, default ~/.config/gds), as `gh config` keeps its own. The workspace configuration ' +
    'of the service is `gds config`. For each key, a flag wins over its environment variable, the variable ' +
    'over the setting, and the setting over the default (see `gds help environment`). Under --json one ' +
    'line per key {key,value,source,default,allowedValues,overriddenBy,description}.';
  static override examples = [
    '<%= config.bin %> settings list',
    '<%= config.bin %> settings list --json',
    '<%= config.bin %> settings list -L 2',
  ];
  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const file = readSettings();
    const rows = SETTINGS.map((spec) => settingRecord(spec, file));
    await this.out.table(rows, columns, { limit: this.flags.limit, noun: 'settings' });
  }
}
