import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { COMMAND_IDS } from '../command-ids.js';
import { updateSettings } from '../../cli/settings.js';
import { readTextInput } from '../../io/input.js';
import { checkAlias } from '../../cli/aliases.js';

export default class AliasSet extends BaseCommand<typeof AliasSet> {
  static override summary = 'Create a shortcut for a gds command.';
  static override description =
    'The alias is a word that expands to a gds command line when it is the first word: `gds ls` runs ' +
    '`gds list --state CERTIFIED`. Placeholders $1, $2, … take the arguments given after the alias; the ' +
    'others are appended. An alias may not shadow a built-in command or topic. With --shell (or an ' +
    'expansion starting with !) the expansion is a shell command run by sh, the arguments being "$1", "$2", …; ' +
    'it may pipe and chain commands. "-" reads the expansion from stdin (no quoting trouble). Aliases are ' +
    'kept with the settings, in settings.json in the config folder. Under --json one line ' +
    '{name,expansion,shell,previous}.';
  static override examples = [
    "<%= config.bin %> alias set ls 'list --state CERTIFIED'",
    '<%= config.bin %> ls --json   # gds list --state CERTIFIED --json',
    "<%= config.bin %> alias set why 'status $1 --json'",
    '<%= config.bin %> why tbl_42   # gds status tbl_42 --json',
    '<%= config.bin %> alias set --shell certified \'gds list --state CERTIFIED --json | jq -r .name | grep "$1"\'',
    "echo 'gate jobs $1 --json' | <%= config.bin %> alias set jobs -",
  ];
  static override args = {
    name: Args.string({ description: 'The alias: one word that is not a gds command.', required: true }),
    expansion: Args.string({
      description: 'What it stands for, without "gds" ("-": read stdin).',
      required: true,
    }),
  };
  static override flags = {
    shell: Flags.boolean({ char: 's', description: 'The expansion is a shell command run by sh.' }),
    clobber: Flags.boolean({ description: 'Replace an alias of the same name.' }),
  };

  async run(): Promise<void> {
    const given =
      this.args.expansion === '-'
        ? (await readTextInput('-', { maxBytes: 64 * 1024, what: 'the expansion' })).text.trim()
        : this.args.expansion;
    const { name } = this.args;
    const expansion = checkAlias(name, given, this.flags.shell, COMMAND_IDS);
    const previous = await updateSettings((file) => {
      const before = file.aliases[name] ?? null;
      if (before !== null && before !== expansion && !this.flags.clobber) {
        throw new CliError(`The alias ${name} exists already: ${name} = ${before}`, {
          exitCode: ExitCode.Conflict,
          code: 'alias_exists',
          suggestion: `Replace it with --clobber, or delete it first: gds alias delete ${name}`,
        });
      }
      file.aliases[name] = expansion;
      return before;
    });
    const shell = expansion.startsWith('!');
    if (this.out.json) {
      this.out.record({ name, expansion, shell, previous });
      return;
    }
    const verb = previous === null ? 'Added' : 'Changed';
    this.out.success(
      `${verb} alias ${name}: gds ${name} runs ${shell ? expansion.slice(1) : `gds ${expansion}`}`,
    );
  }
}
