import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { echoed } from '../../core/echo.js';
import { checkSettingKey, checkSettingValue, settingsPath, updateSettings } from '../../cli/settings.js';

export default class SettingsSet extends BaseCommand<typeof SettingsSet> {
  static override summary = "Change one of gds's own settings, kept on this computer.";
  static override description =
    'prompt: enabled or disabled (disabled: gds asks nothing, as with GDS_PROMPT_DISABLED=1). browser: the ' +
    'program that opens web pages, or none. pager: the program long output goes through on a terminal ' +
    '(cat: none). color: auto, always or never. Written to settings.json in the config folder (mode 600, ' +
    'replaced atomically). A flag or environment variable still wins over a setting. Under --json one line ' +
    '{key,value,previous,path}.';
  static override examples = [
    '<%= config.bin %> settings set prompt disabled',
    '<%= config.bin %> settings set pager "less -R"',
    '<%= config.bin %> settings set browser firefox',
    '<%= config.bin %> settings set color never',
  ];
  static override args = {
    key: Args.string({ description: 'prompt, browser, pager or color.', required: true }),
    value: Args.string({ description: 'The new value.', required: true }),
  };

  async run(): Promise<void> {
    const spec = checkSettingKey(this.args.key);
    const value = checkSettingValue(spec, this.args.value);
    const previous = await updateSettings((file) => {
      const before = file.settings[spec.key] ?? null;
      file.settings[spec.key] = value;
      return before;
    });
    const path = settingsPath();
    if (this.out.json) this.out.record({ key: spec.key, value, previous, path });
    else this.out.success(`Set ${spec.key} to ${echoed(value)} (in ${path}).`);
  }
}
