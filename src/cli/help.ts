// gds's help pages, on oclif's (package.json oclif.helpClass): gh's layout. A command's page lists its own
// flags, then one GLOBAL FLAGS line naming the flags every command takes (explained once, by
// `gds help global-flags`), usage as `gds <command> <ARGS> [flags]`, and JSON FIELDS where the command's
// records have a fixed list (json-fields.ts, the list `--json a,b` is checked against), or what they hold
// where their keys vary (a table's columns). The root page adds
// the help topics and examples.
import { CommandHelp, Help } from '@oclif/core';
import type { Command } from '@oclif/core';
import { HELP_TOPICS } from './help-topics.js';
import { JSON_FIELDS, VARYING_JSON_FIELDS } from './json-fields.js';

const GLOBAL = 'GLOBAL';

type Section = ReturnType<CommandHelp['sections']>[number];

export class GdsCommandHelp extends CommandHelp {
  protected override defaultUsage(): string {
    const args = Object.values(this.command.args ?? {})
      .filter((arg) => arg.hidden !== true)
      .map((arg) => (arg.required === true ? arg.name.toUpperCase() : `[${arg.name.toUpperCase()}]`));
    return [this.command.id, ...args, '[flags]'].join(' ');
  }

  /**
   * The whole description: oclif's, with the summary hidden from it, keeps only the description's last
   * line, which dropped every paragraph before it (`gds completion --help` lost its setup lines). Without a
   * summary the first line is the summary (shown above), so it is left out here.
   */
  protected override description(): string | undefined {
    const { description, summary } = this.command;
    if (description === undefined || description === '') return undefined;
    const text = summary === undefined ? description.split(/\r?\n/).slice(1).join('\n').trim() : description;
    return text === '' ? undefined : this.wrap(text);
  }

  /**
   * A flag's allowed values with a space around each `|`, so that a line wraps between two values and never
   * inside one (`BASELINE_` / `VERIFIED` at 80 columns).
   */
  protected override flags(flags: Array<Command.Flag.Any>): Array<[string, string | undefined]> | undefined {
    return super
      .flags(flags)
      ?.map(([left, right]) => [
        left,
        right?.replace(
          /<options: ([^>]*)>/g,
          (_whole, values: string) => `<options: ${values.split('|').join(' | ')}>`,
        ),
      ]);
  }

  protected override sections(): Section[] {
    return super.sections().flatMap((section): Section[] => {
      if (section.header === 'FLAGS') {
        return [
          {
            header: 'FLAGS',
            generate: ({ flags }, header) => [
              { header, body: this.flags(flags.filter((flag) => flag.helpGroup !== GLOBAL)) },
            ],
          },
          {
            header: 'GLOBAL FLAGS',
            generate: ({ flags }) => globalFlagsLine(flags, this.config.bin),
          },
        ];
      }
      if (section.header === 'EXAMPLES') {
        return [
          section,
          { header: 'JSON FIELDS', generate: () => jsonFields(this.command.id.replaceAll(' ', ':')) },
        ];
      }
      return [section];
    });
  }
}

function globalFlagsLine(flags: Command.Flag.Any[], bin: string): string | undefined {
  const names = flags
    .filter((flag) => flag.helpGroup === GLOBAL)
    .map((flag) => (flag.char === undefined ? `--${flag.name}` : `-${flag.char}/--${flag.name}`));
  if (names.length === 0) return undefined;
  const byName = (name: string) => name.replace(/^-.\//, '');
  return `${names.sort((a, b) => byName(a).localeCompare(byName(b))).join(', ')}\n(see \`${bin} help global-flags\`)`;
}

function jsonFields(id: string): string | undefined {
  const fields = JSON_FIELDS[id];
  if (fields === undefined) return VARYING_JSON_FIELDS[id];
  const lines: string[] = [];
  let line = '';
  for (const field of fields) {
    const next = line === '' ? field : `${line}, ${field}`;
    if (next.length > 76 && line !== '') {
      lines.push(`${line},`);
      line = field;
    } else line = next;
  }
  lines.push(line);
  return lines.join('\n');
}

export default class GdsHelp extends Help {
  protected override CommandHelpClass = GdsCommandHelp;

  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    const bin = this.config.bin;
    const topics = Object.entries(HELP_TOPICS).map(([name, topic]) => [name, topic.summary] as const);
    const width = Math.max(...topics.map(([name]) => name.length)) + 2;
    this.log(
      [
        'HELP TOPICS',
        ...topics.map(([name, summary]) => `  ${name.padEnd(width)}${summary}`),
        `  (${bin} help <topic>)`,
        '',
        'GLOBAL FLAGS',
        '  --token, --base, --profile, --json, -q/--jq',
        `  (see \`${bin} help global-flags\`)`,
        '',
        'EXAMPLES',
        `  $ ${bin} auth login --base https://gds.example.com`,
        `  $ ${bin} list --state QUARANTINED`,
        `  $ ${bin} push models/orders.sql --wait`,
        `  $ ${bin} gate suggest orders | ${bin} gate apply orders -f -`,
        `  $ ${bin} status orders --json state,certification`,
        '',
        'LEARN MORE',
        `  Use \`${bin} <command> --help\` for more about a command.`,
        '',
      ].join('\n'),
    );
  }
}
