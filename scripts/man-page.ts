// gds(1) and a page per command (gds-list(1), gds-gate-run(1), …, as gh ships gh-pr-create(1)): the manual
// pages the .deb and the archives install, written from the command classes themselves (their summaries,
// arguments, flags and examples, as `gds help` and the README's reference are), so they cannot drift from what
// gds does. `man gds` lists every command with its usage and summary; `man gds-list` is that command's page.
import type { Command } from '@oclif/core';

/** Text for roff: backslashes and leading dots or quotes escaped, one line. */
function roff(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

const examples = (command: Command.Class, bin: string): string[] =>
  [command.examples ?? []]
    .flat()
    .map((example) => (typeof example === 'string' ? example : example.command))
    .map((example) => example.replaceAll('<%= config.bin %>', bin));

type PageInfo = { name: string; version: string; description: string; date: string };

const visibleIds = (commands: Record<string, Command.Class>): string[] =>
  Object.keys(commands)
    .filter((id) => commands[id]?.hidden !== true)
    .sort();

/** The file name of a command's page: gds-gate-run.1 for `gds gate run`. */
export const commandPageName = (bin: string, id: string): string => `${bin}-${id.split(':').join('-')}.1`;

/** Every page: gds.1, then one per visible command, by file name. */
export function manPages(commands: Record<string, Command.Class>, info: PageInfo): Map<string, string> {
  const pages = new Map([[`${info.name}.1`, manPage(commands, info)]]);
  for (const id of visibleIds(commands))
    pages.set(commandPageName(info.name, id), commandPage(id, commands[id] as Command.Class, info));
  return pages;
}

const usageWords = (bin: string, id: string, command: Command.Class): string[] => [
  bin,
  ...id.split(':'),
  ...Object.entries(command.args ?? {})
    .filter(([, arg]) => arg.hidden !== true)
    .map(([key, arg]) => (arg.required === true ? key.toUpperCase() : `[${key.toUpperCase()}]`)),
];

/** One command's page: its usage, description, flags (with their short forms and values) and examples. */
export function commandPage(id: string, command: Command.Class, info: PageInfo): string {
  const title = commandPageName(info.name, id).slice(0, -2);
  const lines = [
    `.TH ${title.toUpperCase()} 1 "${info.date}" "${info.name} ${info.version}" "User Commands"`,
    // Left-aligned: a long list of flag values or a long example cannot be justified, and man warns of it.
    '.ad l',
    '.SH NAME',
    `${roff(title)} \\- ${roff(command.summary ?? command.description?.split('\n')[0] ?? '')}`,
    '.SH SYNOPSIS',
    `.B ${roff(usageWords(info.name, id, command).join(' '))}`,
    '[\\fIflags\\fR]',
  ];
  if (command.description) lines.push('.SH DESCRIPTION', roff(command.description));
  const flags = Object.entries(command.flags ?? {}).filter(([, flag]) => flag.hidden !== true);
  if (flags.length > 0) {
    lines.push('.SH OPTIONS');
    for (const [name, flag] of flags.sort(([a], [b]) => a.localeCompare(b))) {
      let value = '';
      if (flag.type === 'option') {
        // A break point after each `|`, so a long list of choices wraps instead of overflowing the line.
        const choices = (flag.options ?? []).map(roff).join('|\\:');
        const shown =
          flag.helpValue === undefined
            ? choices || roff(name.toUpperCase())
            : roff([flag.helpValue].flat().join(' '));
        value = ` \\fI${shown}\\fR`;
      }
      const short = flag.char === undefined ? '' : `\\fB\\-${flag.char}\\fR, `;
      lines.push('.TP', `${short}\\fB\\-\\-${roff(name)}\\fR${value}`);
      lines.push(roff(flag.summary ?? flag.description ?? ''));
    }
  }
  lines.push(
    '.SH GLOBAL FLAGS',
    roff(
      '--json, --jq, --token, --base, --profile and the rest every command takes: see gds(1) and "gds help global-flags".',
    ),
  );
  const all = examples(command, info.name);
  if (all.length > 0) {
    lines.push('.SH EXAMPLES');
    for (const example of all) lines.push('.PP', `\\fB${roff(example)}\\fR`);
  }
  lines.push('.SH SEE ALSO', `.BR ${info.name} (1)`, '');
  return lines.join('\n');
}

export function manPage(commands: Record<string, Command.Class>, info: PageInfo): string {
  const ids = visibleIds(commands);
  const lines = [
    `.TH ${info.name.toUpperCase()} 1 "${info.date}" "${info.name} ${info.version}" "User Commands"`,
    '.SH NAME',
    `${info.name} \\- ${roff(info.description)}`,
    '.SH SYNOPSIS',
    `.B ${info.name}`,
    '.I command',
    '[\\fIflags\\fR]',
    '.SH DESCRIPTION',
    roff(
      `${info.name} is the command-line client of the Governed Data Service: it registers governance artifacts, ` +
        'manages Gate 1 rules, runs gates, certifies tables, plans and applies dbt projects, reads and writes table ' +
        'rows, and reads the audit trail. Every command takes --json (NDJSON on standard output), --token, ' +
        '--base and --profile. Run "gds help COMMAND" for a command\'s whole page, "gds help reference" for every ' +
        'command\'s page at once, and "gds help environment", "gds help exit-codes", "gds help formatting" and ' +
        '"gds help global-flags" for the rest.',
    ),
    '.SH COMMANDS',
  ];
  for (const id of ids) {
    const command = commands[id] as Command.Class;
    lines.push('.TP', `.B ${roff(usageWords(info.name, id, command).join(' '))}`);
    lines.push(roff(command.summary ?? command.description?.split('\n')[0] ?? ''));
    const first = examples(command, info.name)[0];
    if (first !== undefined) lines.push('.br', `Example: \\fB${roff(first)}\\fR`);
  }
  lines.push(
    '.SH EXIT STATUS',
    roff(
      '0 success; 1 failure (gate diff: files differ); 2 usage or invalid local input; 3 not authenticated; ' +
        '4 forbidden; 5 not found; 6 conflict; 7 refused by the rules; 8 rate limited after retries; ' +
        '9 network or server error; 130 interrupted. "gds help exit-codes" says more.',
    ),
    '.SH ENVIRONMENT',
    roff(
      'SERVICE_TOKEN and SERVICE_API_URL give the token and the base address; "gds help environment" lists the rest.',
    ),
    '.SH FILES',
    roff(
      '$XDG_CONFIG_HOME/gds/config.json: profiles and settings (secrets in the OS keychain when one answers).',
    ),
    '.SH SEE ALSO',
    roff(
      'gds help COMMAND, gds help reference, and the README (the command reference is docs/commands.md of the source).',
    ),
    ...ids.map(
      (id, i) =>
        `.BR ${roff(commandPageName(info.name, id).slice(0, -2))} (1)${i < ids.length - 1 ? ',' : ''}`,
    ),
    '',
  );
  return lines.join('\n');
}
