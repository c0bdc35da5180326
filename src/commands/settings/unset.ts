import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { checkSettingKey, settingsPath, updateSettings } from '../../cli/settings.js';

export default class SettingsUnset extends BaseCommand<typeof SettingsUnset> {
  static override summary = "Remove one of gds's own settings: its default applies again.";
  static override description =
    'Nothing to remove is not an error (exit 0). Under --json one line {key,value,previous,path}, value ' +
    'being the default that now applies.';
  static override examples = ['<%= config.bin %> settings unset pager'];
  static override args = {
    key: Args.string({ description: 'prompt, browser, pager or color.', required: true }),
  };

  async run(): Promise<void> {
    const spec = checkSettingKey(this.args.key);
    const previous = await updateSettings((file) => {
      const before = file.settings[spec.key] ?? null;
      delete file.settings[spec.key];
      return before;
    });
    const path = settingsPath();
    if (this.out.json) {
      this.out.record({ key: spec.key, value: spec.default, previous, path });
      return;
    }
    const now = spec.defaultLabel ?? spec.default;
    if (previous === null) this.out.info(`${spec.key} was not set; its default applies (${now}).`);
    else this.out.success(`Unset ${spec.key} (was ${previous}); now ${now}.`);
  }
}
