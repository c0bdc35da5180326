import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { checkSettingKey, readSettings, settingRecord } from '../../cli/settings.js';

export default class SettingsGet extends BaseCommand<typeof SettingsGet> {
  static override summary = "Print one of gds's own settings (its default when not set).";
  static override description =
    'Prints the value alone, for scripts (an empty line for a program that is not named). The keys: prompt, ' +
    'browser, pager, color (`gds settings list` describes them). An environment variable beats the setting: ' +
    'under --json, overriddenBy names the one set here.';
  static override examples = [
    '<%= config.bin %> settings get prompt',
    '<%= config.bin %> settings get pager --json',
  ];
  static override args = {
    key: Args.string({ description: 'prompt, browser, pager or color.', required: true }),
  };

  async run(): Promise<void> {
    const spec = checkSettingKey(this.args.key);
    const record = settingRecord(spec, readSettings());
    if (this.out.json) this.out.record(record);
    else this.out.print(record.value);
  }
}
