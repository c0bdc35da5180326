import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';

export default class ConfigSet extends ApiCommand<typeof ConfigSet> {
  static override summary = 'Set one workspace configuration key (ADMIN or OWNER).';
  static override description =
    'gds config list shows the keys and their allowed values; a value outside them is refused (exit 7). ' +
    'Every change is kept: gds config history <key>.';
  static override examples = [
    '<%= config.bin %> config set gate_mode ADVISORY',
    '<%= config.bin %> config set gate3_required true',
  ];
  static override args = {
    key: Args.string({ description: 'The key, e.g. gate_mode.', required: true }),
    value: Args.string({ description: 'The new value.', required: true }),
  };

  async run(): Promise<void> {
    const { setConfig } = await import('../../services/workspace-config.js');
    const entry = await this.withClient((client) => setConfig(client, this.args.key, this.args.value));
    if (this.out.json) this.out.record(entry);
    else this.out.print(`${entry.key} = ${entry.value}`);
  }
}
