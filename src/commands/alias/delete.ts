import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { updateSettings } from '../../cli/settings.js';
import { closest } from '../../core/did-you-mean.js';
import { echoed, echoedList } from '../../core/echo.js';

export default class AliasDelete extends BaseCommand<typeof AliasDelete> {
  static override summary = 'Delete an alias.';
  static override description =
    'An alias that does not exist is exit 5, with the one meant. Under --json one line ' +
    '{name,expansion,shell} (what was deleted).';
  static override examples = ['<%= config.bin %> alias delete ls'];
  static override args = {
    name: Args.string({ description: 'The alias.', required: true }),
  };

  async run(): Promise<void> {
    const { name } = this.args;
    const expansion = await updateSettings((file) => {
      const known = file.aliases[name];
      if (known === undefined) {
        const names = Object.keys(file.aliases).sort();
        const near = closest(name, names);
        throw new CliError(`No alias named ${echoed(name)}.`, {
          exitCode: ExitCode.NotFound,
          code: 'alias_not_found',
          suggestion:
            near !== undefined
              ? `Did you mean \`gds alias delete ${near}\`?`
              : names.length === 0
                ? 'There are no aliases.'
                : `The aliases: ${echoedList(names)}.`,
        });
      }
      delete file.aliases[name];
      return known;
    });
    const shell = expansion.startsWith('!');
    if (this.out.json) this.out.record({ name, expansion, shell });
    else this.out.success(`Deleted alias ${name} (${expansion}).`);
  }
}
