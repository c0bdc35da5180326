// gds(1): the manual page the .deb and the archives install, written from the command classes themselves
// (their summaries, arguments, flags and examples, as `gds help` and the README's reference are), so it cannot
// drift from what gds does. `man gds` lists every command with its usage and summary and says where each
// command's whole page is (`gds help <command>`).
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

export function manPage(
  commands: Record<string, Command.Class>,
  info: { name: string; version: string; description: string; date: string },
): string {
  const ids = Object.keys(commands)
    .filter((id) => commands[id]?.hidden !== true)
    .sort();
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
    const words = id.split(':').join(' ');
    const args = Object.entries(command.args ?? {})
      .filter(([, arg]) => arg.hidden !== true)
      .map(([key, arg]) => (arg.required === true ? key.toUpperCase() : `[${key.toUpperCase()}]`));
    lines.push('.TP', `.B ${roff([info.name, words, ...args].join(' '))}`);
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
    '',
  );
  return lines.join('\n');
}
