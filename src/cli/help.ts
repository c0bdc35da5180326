// gds's help pages, on oclif's (package.json oclif.helpClass): gh's layout. A command's page lists its own
// flags, then one GLOBAL FLAGS line naming the flags every command takes (explained once, by
// `gds help global-flags`), usage as `gds <command> <ARGS> [flags]`, and JSON FIELDS where the command's
// records have a fixed list (json-fields.ts, the list `--json a,b` is checked against), or what they hold
// where their keys vary (a table's columns). The root page adds
// the help topics and examples.
import { CommandHelp, Help } from '@oclif/core';
import type { Command } from '@oclif/core';
import { closest } from '../core/did-you-mean.js';
import { CliError, ExitCode } from '../core/errors.js';
import { commandSuggestion, unknownCommandWords } from './errors.js';
import { HELP_TOPICS, wrap } from './help-topics.js';
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

/**
 * The root page's commands, grouped by purpose as gh's are, one line each at 80 columns (gate's two). A
 * topic's line names every one of its subcommands (test/cli/help-root.test.ts holds both).
 */
export const ROOT_GROUPS: ReadonlyArray<{
  title: string;
  entries: ReadonlyArray<readonly [string, string]>;
}> = [
  {
    title: 'CORE COMMANDS',
    entries: [
      ['auth', 'Sign in: login, set, switch, status, token, revoke, logout'],
      ['whoami', 'Who the credentials sign in as: user, role, scopes'],
      ['list', 'List the governed tables of your workspace'],
      ['status', "A table's state, certification, drift and active jobs"],
      ['push', 'Register a governance artifact for a warehouse object'],
      ['plan', 'Compare a dbt project with the service; sends nothing'],
      ['apply', 'Carry out what gds plan shows'],
      [
        'gate',
        'Gate 1 rules and gate jobs: get, validate, diff, suggest, apply, run, submit, jobs, status, result, cancel',
      ],
      ['review', "Walk the steward's queue of tables submitted for review"],
      ['certify', 'Certify a PENDING_REVIEW table'],
      ['reject', 'Send a PENDING_REVIEW table back to QUARANTINED'],
    ],
  },
  {
    title: 'TABLE COMMANDS',
    entries: [
      ['records', 'Rows: list, get, create, update, delete, export, import'],
      ['versions', 'Certification history: list, restore'],
      ['contract', "A table's semantic contract: set-intent"],
      ['quarantine', "QUARANTINED tables: list, open (a table's DDL)"],
      ['recertify', 'Tell the service which tables a pipeline run rebuilt'],
      ['recertification', 'Recertification requests: list, dismiss'],
      ['env', 'Environments: promote a table to another one'],
      ['delete', 'Soft-delete a governance artifact'],
      ['audit', 'The workspace audit log, newest first: list'],
    ],
  },
  {
    title: 'ADDITIONAL COMMANDS',
    entries: [
      ['tokens', 'Integration and CLI tokens: issue, list, refresh, revoke'],
      ['members', 'Members of your workspace: list'],
      ['connectors', 'Warehouse connectors of your workspace: list'],
      ['config', 'Workspace configuration: list, set, history'],
      ['definitions', 'Definitions from CI: push'],
      ['api', 'Make an authenticated call to any path of the service'],
      ['alias', 'Shortcuts for gds commands: set, list, delete, import'],
      ['settings', "gds's own settings on this computer: get, set, unset, list"],
      ['completion', 'Print the shell completion script: bash|zsh|fish|powershell'],
    ],
  },
];

/** `gds help reference`'s line in the root page's HELP TOPICS. */
export const REFERENCE_TOPIC = ['reference', "Every command's help in one page (docs/commands.md)"] as const;

const NAME_WIDTH = 17;

function entryLines(name: string, text: string): string[] {
  const [first = '', ...rest] = wrap(text, 78 - NAME_WIDTH);
  return [`${name.padEnd(NAME_WIDTH)}${first}`, ...rest.map((line) => `${' '.repeat(NAME_WIDTH)}${line}`)];
}

export default class GdsHelp extends Help {
  protected override CommandHelpClass = GdsCommandHelp;

  /**
   * `gds help reference` prints every command's page; a subject that names no command, topic or help topic
   * (`gds help records lst`) is gds's usage error with a did-you-mean, not oclif's `records:lst`.
   */
  override async showHelp(argv: string[]): Promise<void> {
    const words = argv.filter((word) => !word.startsWith('-'));
    if (words.length === 1 && words[0] === REFERENCE_TOPIC[0]) {
      this.showReference();
      return;
    }
    try {
      await super.showHelp(argv);
    } catch (error) {
      const unknown = /^Command (.+) not found\.$/.exec((error as Error).message);
      if (unknown === null) throw error;
      throw this.unknownSubject(unknown[1] ?? '');
    }
  }

  private unknownSubject(given: string): CliError {
    // oclif names the subject with the topic separator, a space; command ids join their words with `:`.
    const subject = given.trim().replaceAll(/\s+/g, ':');
    const bin = this.config.bin;
    const helpTopics = [...Object.keys(HELP_TOPICS), REFERENCE_TOPIC[0]];
    const topic = subject.includes(':') ? undefined : closest(subject, helpTopics);
    // oclif's help rewrites the id of each command it renders with that separator too.
    const commandIds = this.config.commandIDs.map((id) => id.replaceAll(' ', ':'));
    const ids = [...commandIds, ...this.config.topics.map((t) => t.name)];
    return new CliError(`Unknown command: ${unknownCommandWords(subject, commandIds)}.`, {
      exitCode: ExitCode.Usage,
      code: 'command_not_found',
      suggestion:
        topic === undefined
          ? commandSuggestion(subject, ids)
          : `Did you mean \`${bin} help ${topic}\`? Run \`${bin} --help\` for the list of commands.`,
    });
  }

  /** Every visible command's page, in the order of docs/commands.md, each under its usage line. */
  private showReference(): void {
    const bin = this.config.bin;
    this.log(
      `The ${bin} command reference: every command's help, as \`${bin} <command> --help\` prints it\n` +
        '(docs/commands.md holds the same pages).\n',
    );
    for (const command of this.sortedCommands) {
      const words = command.id.replaceAll(':', ' ');
      const args = Object.values(command.args ?? {})
        .filter((arg) => arg.hidden !== true)
        .map((arg) => (arg.required === true ? arg.name.toUpperCase() : `[${arg.name.toUpperCase()}]`));
      this.log(this.section(['#', bin, words, ...args].join(' '), ''));
      const summary = this.summary(command);
      if (summary !== undefined) this.log(`${summary}\n`);
      this.log(this.formatCommand(command));
      this.log('');
    }
  }

  protected override async showRootHelp(): Promise<void> {
    const bin = this.config.bin;
    const tagline = (this.config.pjson.description ?? '').split(':')[0];
    const topics = [
      ...Object.entries(HELP_TOPICS).map(([name, topic]) => [name, topic.summary] as const),
      REFERENCE_TOPIC,
    ];
    const sections: Array<[string, string[]]> = [
      ['USAGE', [`${bin} <command> <subcommand> [flags]`]],
      ...ROOT_GROUPS.map(
        ({ title, entries }) =>
          [title, entries.flatMap(([name, text]) => entryLines(name, text))] as [string, string[]],
      ),
      ['HELP TOPICS', topics.flatMap(([name, text]) => entryLines(name, text))],
      [
        'EXAMPLES',
        [
          `$ ${bin} auth login --base https://gds.example.com`,
          `$ ${bin} push models/orders.sql --wait`,
          `$ ${bin} gate suggest orders | ${bin} gate apply orders -f -`,
        ],
      ],
      [
        'LEARN MORE',
        [`\`${bin} <command> --help\` for a command, \`${bin} help <topic>\` for a topic above.`],
      ],
    ];
    this.log(
      [`${tagline}.`, ...sections.map(([header, lines]) => this.section(header, lines.join('\n')))].join(
        '\n\n',
      ),
    );
  }
}
