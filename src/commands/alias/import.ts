import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { CliError, ExitCode } from '../../core/errors.js';
import { COMMAND_IDS } from '../command-ids.js';
import { updateSettings } from '../../cli/settings.js';
import { readTextInput } from '../../io/input.js';
import { checkAlias } from '../../cli/aliases.js';
import { loadYaml } from '../../core/libraries/yaml.js';

export default class AliasImport extends BaseCommand<typeof AliasImport> {
  static override summary = 'Add aliases from a YAML file (name: expansion), as gh alias import.';
  static override description =
    'Each alias is checked as by gds alias set (not a gds command, an expansion that starts with one, or ' +
    'a shell command starting with !); if any is refused, none is added. An alias of the same name is ' +
    'replaced only with --clobber. "-" reads stdin. Under --json one line per alias ' +
    '{name,expansion,shell,previous}.';
  static override examples = [
    '<%= config.bin %> alias import aliases.yml',
    "printf 'ls: list --state CERTIFIED\\nq: quarantine list\\n' | <%= config.bin %> alias import -",
  ];
  static override args = {
    file: Args.string({ description: 'A YAML file of name: expansion lines ("-": stdin).', required: true }),
  };
  static override flags = {
    clobber: Flags.boolean({ description: 'Replace aliases of the same name.' }),
  };

  async run(): Promise<void> {
    const { parse } = await loadYaml();
    const source = this.args.file;
    const { text } = await readTextInput(source, {
      flag: '<file>',
      maxBytes: 1024 * 1024,
      what: 'the alias file',
    });
    let parsed: unknown;
    try {
      parsed = parse(text);
    } catch (error) {
      throw notAliases(source, `it is not YAML (${(error as Error).message.split('\n')[0] ?? ''})`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw notAliases(source, 'it is not a mapping of name: expansion');
    const ids: readonly string[] = COMMAND_IDS;
    const wanted = Object.entries(parsed as Record<string, unknown>).map(([name, expansion]) => {
      if (typeof expansion !== 'string') throw notAliases(source, `the alias ${name} is not a string`);
      return [name, checkAlias(name, expansion, false, ids)] as const;
    });
    const results = await updateSettings((file) => {
      const taken = wanted.filter(
        ([name, expansion]) => file.aliases[name] !== undefined && file.aliases[name] !== expansion,
      );
      if (taken.length > 0 && !this.flags.clobber) {
        throw new CliError(`These aliases exist already: ${taken.map(([name]) => name).join(', ')}.`, {
          exitCode: ExitCode.Conflict,
          code: 'alias_exists',
          suggestion: 'Nothing was imported. Replace them with --clobber, or remove them from the file.',
        });
      }
      return wanted.map(([name, expansion]) => {
        const previous = file.aliases[name] ?? null;
        file.aliases[name] = expansion;
        return { name, expansion, shell: expansion.startsWith('!'), previous };
      });
    });
    if (this.out.json) {
      for (const result of results) this.out.record(result);
      return;
    }
    for (const { name, expansion, previous } of results)
      this.out.success(`${previous === null ? 'Added' : 'Changed'} alias ${name}: ${expansion}`);
  }
}

function notAliases(source: string, reason: string): CliError {
  return new CliError(`Cannot import aliases from ${source === '-' ? 'stdin' : source}: ${reason}.`, {
    exitCode: ExitCode.Usage,
    code: 'alias_file_invalid',
    suggestion: "Write one alias a line: ls: list --state CERTIFIED (quote an expansion holding ': ').",
  });
}
