// Command aliases (`gds alias set ls 'list --state CERTIFIED'`), as gh's: kept in settings.json with the
// settings (src/cli/settings.ts). main() loads this module only when the first word of a command line names
// no command, topic or help: the normal command path reads no extra file, and an alias never shadows a
// built-in command (alias set refuses such a name, and expansion is never tried for one).
//
// An expansion is split into words once, as a shell would split it (quotes, backslashes), and `$1`, `$2`, …
// in a word are replaced by the arguments given after the alias, as text (an argument is never split again
// nor read by a shell); the arguments after the highest placeholder are appended. An expansion starting
// with `!` (alias set --shell) is a shell command run by `sh -c`, the arguments given to it as "$1", "$2", …
// (positional parameters, never pasted into the script), as gh runs its shell aliases.
import { readSettings } from './settings.js';
import { ALIAS_NAME, flagAskedFor, RESERVED_WORDS, reservedWords } from './command-route.js';
import { CliError, ExitCode } from '../core/errors.js';
import { withExitCode } from './errors.js';
import { noteFailure } from './usage-ending.js';
import { quotedEcho } from '../core/echo.js';

/**
 * main(): what an alias given as the first word stands for: the command line (`argv`), or, for a shell
 * alias, the exit code of the shell that ran it; else the alias names, for the did-you-mean.
 */
export async function aliasCommandLine(
  argv: readonly string[],
): Promise<{ argv: string[] } | { exitCode: number } | { aliases: string[] }> {
  const { aliases } = aliasesToLookUp(argv[0] ?? '');
  const expansion = expandAlias(argv, aliases);
  if (expansion === undefined) return { aliases: Object.keys(aliases) };
  if (expansion.kind === 'command') return { argv: expansion.argv };
  return { exitCode: await runShellAlias(argv[0] ?? '', expansion.script, expansion.args) };
}

/**
 * The settings file's aliases; a file that cannot be read (damaged, or written by a newer gds) fails the
 * command line with its error, said as the answer to the word looked up: no command has that name, and
 * whether an alias has cannot be told until the file (named, with its fix) is repaired.
 */
function aliasesToLookUp(word: string): { aliases: Readonly<Record<string, string>> } {
  try {
    return readSettings();
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    const why = error.message.replace(/^The /, 'the ');
    throw new CliError(`Unknown command: ${word}, and the aliases cannot be read to look for it: ${why}`, {
      exitCode: error.exitCode,
      code: error.code,
      ...(error.suggestion === undefined ? {} : { suggestion: error.suggestion }),
    });
  }
}

export type Expansion =
  { kind: 'command'; argv: string[] } | { kind: 'shell'; script: string; args: string[] };

/**
 * The command line an alias stands for: undefined when the first word is no alias of `aliases`. Exit 2
 * when the alias needs more arguments than were given (1 for an alias of plan --detailed-exitcode).
 */
export function expandAlias(
  argv: readonly string[],
  aliases: Readonly<Record<string, string>>,
): Expansion | undefined {
  const [name, ...args] = argv;
  if (name === undefined || !Object.hasOwn(aliases, name)) return undefined;
  const expansion = aliases[name] ?? '';
  if (expansion.startsWith('!')) return { kind: 'shell', script: expansion.slice(1), args };
  let highest = 0;
  const words = splitWords(expansion).map((word) =>
    word.replace(/\$(\d+)/g, (_, digits: string) => {
      const index = Number(digits);
      highest = Math.max(highest, index);
      return args[index - 1] ?? '';
    }),
  );
  if (highest > args.length) {
    const placeholders = Array.from({ length: highest }, (_, i) => `<$${i + 1}>`).join(' ');
    const failure = noteFailure(
      new CliError(
        `The alias ${name} needs ${highest} argument${highest === 1 ? '' : 's'}, and got ${args.length}.`,
        {
          exitCode: ExitCode.Usage,
          code: 'alias_arguments_missing',
          suggestion: `Run: gds ${name} ${placeholders}  (it stands for: gds ${expansion})`,
        },
      ),
    );
    // plan --detailed-exitcode ends every failure with 1, a usage error included: its 2 means changes.
    throw runsDetailedPlan(words) ? withExitCode(failure, ExitCode.Failure) : failure;
  }
  return { kind: 'command', argv: [...words, ...args.slice(highest)] };
}

/** Whether an alias's words run plan with --detailed-exitcode. */
function runsDetailedPlan(words: readonly string[]): boolean {
  return words[0] === 'plan' && flagAskedFor(words, 'detailed-exitcode');
}

/**
 * Shell-like word splitting: blanks separate words; '…' keeps everything; "…" keeps everything but `\"`,
 * `\\` and `\$`; a backslash outside quotes keeps the next character. Exit 2 on an unclosed quote.
 */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  /** The word being read; undefined between words (a quoted empty word is '', and is kept). */
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i] ?? '';
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word = `${word ?? ''}${char}`;
    } else if (quote === '"') {
      const next = text[i + 1] ?? '';
      if (char === '"') quote = undefined;
      else if (char === '\\' && ['"', '\\', '$'].includes(next)) {
        word = `${word ?? ''}${next}`;
        i += 1;
      } else word = `${word ?? ''}${char}`;
    } else if (/\s/.test(char)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (char === '\\' && i + 1 < text.length) {
      word = `${word ?? ''}${text[i + 1] ?? ''}`;
      i += 1;
    } else {
      word = `${word ?? ''}${char}`;
    }
  }
  if (quote !== undefined) {
    throw new CliError(`The expansion ${JSON.stringify(text)} has an unclosed ${quote} quote.`, {
      exitCode: ExitCode.Usage,
      code: 'alias_expansion_invalid',
      suggestion: 'Close the quote, or pass the expansion on stdin: gds alias set NAME - <<< "…".',
    });
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** Runs a shell alias: `sh -c SCRIPT NAME ARGS…`, on this terminal; its exit code becomes gds's. */
export async function runShellAlias(name: string, script: string, args: readonly string[]): Promise<number> {
  const { spawn } = process.getBuiltinModule('node:child_process');
  const shell = 'sh';
  // Ctrl-C reaches the shell too (same process group): gds waits for it to decide.
  const ignore = () => undefined;
  process.on('SIGINT', ignore);
  try {
    return await new Promise<number>((resolve, reject) => {
      const child = spawn(shell, ['-c', script, name, ...args], { stdio: 'inherit' });
      child.on('error', (error: NodeJS.ErrnoException) =>
        reject(
          new CliError(`Cannot run the shell alias ${name}: ${error.message}.`, {
            exitCode: ExitCode.Failure,
            code: 'alias_shell_failed',
            suggestion:
              error.code === 'ENOENT'
                ? `Shell aliases run through ${shell}, which is not on PATH here. Define ${name} without --shell.`
                : `See: gds alias list.`,
          }),
        ),
      );
      child.on('close', (code, signal) => {
        const signalNumber =
          signal === null ? 0 : (process.getBuiltinModule('node:os').constants.signals[signal] ?? 0);
        resolve(code ?? 128 + signalNumber);
      });
    });
  } finally {
    process.off('SIGINT', ignore);
  }
}

/** What `gds alias set` stores, or exit 2 with the reason: the name free, the expansion a gds command line. */
export function checkAlias(
  name: string,
  expansion: string,
  shell: boolean,
  commandIds: readonly string[],
): string {
  if (!ALIAS_NAME.test(name)) {
    throw new CliError(`Invalid alias name: ${quotedEcho(name)}.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_alias_name',
      suggestion:
        'Use one word of up to 64 letters, digits, ".", "_" or "-", starting with a letter or digit.',
    });
  }
  if (reservedWords(commandIds).has(name)) {
    const what = commandIds.includes(name) ? 'a gds command' : `a gds command (gds ${name} …)`;
    throw new CliError(`${name} is ${what}: an alias may not shadow a built-in command.`, {
      exitCode: ExitCode.Usage,
      code: 'alias_shadows_command',
      suggestion:
        'gds runs its own command whatever the aliases say, so the alias would never run; pick another name.',
    });
  }
  const text = expansion.trim();
  if (text === '' || text === '!') {
    throw new CliError(`The alias ${name} needs an expansion.`, {
      exitCode: ExitCode.Usage,
      code: 'alias_expansion_invalid',
      suggestion: `For example: gds alias set ${name} 'list --state CERTIFIED'`,
    });
  }
  if (shell || text.startsWith('!')) return text.startsWith('!') ? text : `!${text}`;
  const first = splitWords(text)[0] ?? '';
  const known = reservedWords(commandIds);
  if (!known.has(first) || RESERVED_WORDS.includes(first)) {
    throw new CliError(`The expansion ${JSON.stringify(text)} does not start with a gds command.`, {
      exitCode: ExitCode.Usage,
      code: 'alias_expansion_invalid',
      suggestion:
        'Write it without "gds" (gds alias set ls \'list --state CERTIFIED\'), or make it a shell command ' +
        'with --shell.',
    });
  }
  return text;
}
