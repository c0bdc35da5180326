import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { listConfig, nearConfig, setConfig } from '../../services/workspace-config.js';
import { shellWord } from '../../core/shell-word.js';

export default class ConfigSet extends ApiCommand<typeof ConfigSet> {
  static override summary = 'Set one workspace configuration key (ADMIN or OWNER).';
  static override description =
    'gds config list shows the keys and their allowed values; a value outside them is refused (exit 7). ' +
    'Every change is kept: gds config history <key>. The value the key already holds changes nothing: ' +
    '"No change" (exit 0), no history entry; under --json the entry with changed: false.';
  static override examples = [
    '<%= config.bin %> config set gate_mode ADVISORY',
    '<%= config.bin %> config set gate3_required true',
  ];
  static override args = {
    key: Args.string({ description: 'The key, e.g. gate_mode.', required: true }),
    value: Args.string({ description: 'The new value.', required: true }),
  };

  async run(): Promise<void> {
    const { key, value } = this.args;
    const entry = await this.withClient((client) => setConfig(client, key, value)).catch(
      async (error: unknown) => {
        // A refused key or value: the keys and allowed values say what was probably meant.
        const refused = error instanceof CliError ? error : undefined;
        const refusals: number[] = [ExitCode.Refused, ExitCode.NotFound, ExitCode.Usage];
        if (refused === undefined || !refusals.includes(refused.exitCode)) throw error;
        const entries = await this.withClient((client) => listConfig(client)).catch(() => []);
        const near = nearConfig(key, value, entries);
        if (near === undefined) throw error;
        throw new CliError(refused.given.message, {
          exitCode: refused.exitCode,
          code: refused.code,
          suggestion: `Did you mean \`gds config set ${shellWord(near.key)} ${shellWord(near.value)}\`? (gds config list shows the keys and values)`,
          details: refused.details,
        });
      },
    );
    if (this.out.json) this.out.record(entry);
    else if (entry.changed === false) this.out.success(`No change: ${entry.key} is already ${entry.value}.`);
    else this.out.success(`Set ${entry.key} to ${entry.value}.`);
  }
}
