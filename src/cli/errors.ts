// How errors that reach the top of a command become a CliError: oclif's usage errors in gds's voice, and
// "did you mean" for mistyped commands and flags.
import { closest } from '../core/did-you-mean.js';
import { echoed, echoedList } from '../core/echo.js';
import { CliError, ExitCode } from '../core/errors.js';
import { Lines } from '../core/terminal-text.js';
import type { ExitCodeValue } from '../core/errors.js';

/** The shape oclif gives its own errors: parse errors carry `parse`, every CLIError may carry `oclif.exit`. */
interface OclifErrorShape {
  oclif?: { exit?: number | false };
  parse?: unknown;
  code?: unknown;
}

const knownExitCodes = new Set<number>(Object.values(ExitCode));

/** What a usage error can be matched against: the command's flag names, for "did you mean"; its words. */
export interface UsageContext {
  flagNames?: readonly string[];
  /** The command line: a long or many-line word oclif quotes is said back cut, on one line. */
  argv?: readonly string[];
}

/** Any error that reached the top of a command, as the CliError it is rendered as. */
export function toCliError(error: unknown, usageHint: string, context: UsageContext = {}): CliError {
  if (error instanceof CliError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const shape = (typeof error === 'object' && error !== null ? error : {}) as OclifErrorShape;
  if (shape.parse !== undefined || shape.oclif?.exit === ExitCode.Usage) {
    const { reason, nearMiss } = usageInGdsVoice(message, context);
    return new CliError(reason, {
      exitCode: ExitCode.Usage,
      suggestion: nearMiss === undefined ? usageHint : `${nearMiss} ${usageHint}`,
    });
  }
  const exit = shape.oclif?.exit;
  if (typeof exit === 'number' && knownExitCodes.has(exit)) {
    return new CliError(message, { exitCode: exit as ExitCodeValue });
  }
  // Nothing gds knows to say: a bug, or an answer of another shape than the service's (a --base naming some
  // other server answers 200 with JSON gds cannot read, "Cannot read properties of undefined").
  return new CliError(message, {
    exitCode: ExitCode.Failure,
    code: 'internal',
    suggestion:
      'gds did not expect this. If the service address is not the gds service (gds auth status shows which ' +
      'one is used), fix --base or SERVICE_API_URL; otherwise run again with GDS_DEBUG=1 and report what it prints.',
  });
}

/**
 * A failure of a command whose exit 1 answers a question (gate diff: the two differ; plan --exit-code: a
 * table would change): ended with 2, as diff(1)'s "trouble", so that 1 says the answer and nothing else.
 * Every other exit code is kept: it says the cause already (5 not found, 9 the network).
 */
export function freeingExitOne(failure: CliError): CliError {
  return failure.exitCode === ExitCode.Failure ? withExitCode(failure, ExitCode.Usage) : failure;
}

/** `failure` ending with `exitCode`; its message, code, suggestion and details kept. */
export function withExitCode(failure: CliError, exitCode: ExitCodeValue): CliError {
  return new CliError(failure.given.message, {
    exitCode,
    code: failure.code,
    ...(failure.given.suggestion === undefined ? {} : { suggestion: failure.given.suggestion }),
    details: failure.details,
  });
}

/**
 * oclif's parse errors in gds's voice: no "The following error occurred:" heading, flags written as typed
 * (`--reason`), one sentence per problem; a mistyped flag or flag value gets the nearest allowed one.
 */
export function usageInGdsVoice(
  message: string,
  context: UsageContext = {},
): { reason: Lines; nearMiss?: string } {
  const text = withWordsEchoed(message, context.argv ?? [])
    .replace(/\n*See more help with --help\s*$/, '')
    .replace(/^The following errors? occurred:\s*/, '')
    // "Parsing --limit \n\tExpected an integer but received: abc" is one problem on two lines.
    .replace(
      /^Parsing (--[\w-]+)\s*\n\s*Expected (.+?) but received: (.*)$/m,
      (_, flag: string, what: string, given: string) => `${flag} expects ${what}, not "${echoed(given)}"`,
    );
  let nearMiss: string | undefined;
  const sentences = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      if (/^Missing \d+ required args?:$/.test(line)) return '';
      const argument = /^([A-Za-z][\w-]*) {2,}(.+)$/.exec(line);
      if (argument) return `Missing required argument <${argument[1]}>: ${argument[2]?.replace(/\.$/, '')}.`;
      const missing = /^Missing required flag:? ([\w-]+)$/.exec(line);
      if (missing) return `Missing required flag --${missing[1]}.`;
      const unknown = /^Nonexistent flags?: (.+)$/.exec(line);
      if (unknown) {
        const flags = (unknown[1] ?? '').split(/,\s*/);
        const first = (flags[0] ?? '').replace(/^-+/, '').replace(/=.*$/, '');
        const near = closest(first, context.flagNames ?? []);
        if (near !== undefined) nearMiss = `Did you mean --${near}?`;
        return `Unknown flag${flags.length > 1 ? 's' : ''}: ${echoedList(flags)}.`;
      }
      const notAllowed = /^Expected (--[\w-]+)=(.*) to be one of: (.+)$/.exec(line);
      if (notAllowed) {
        const [, flag = '', given = '', list = ''] = notAllowed;
        const allowed = list.split(/,\s*/);
        const near = closest(given, allowed);
        if (near !== undefined) nearMiss = `Did you mean ${flag} ${near}?`;
        return `${flag} takes one of ${allowed.join(', ')}; "${echoed(given)}" is not one of them.`;
      }
      const unexpected = /^(Unexpected arguments?: )(.+)$/.exec(line);
      if (unexpected) {
        const said = `${unexpected[1] ?? ''}${echoedList((unexpected[2] ?? '').split(/,\s*/))}`;
        return /[.!?:]$/.test(said) ? said : `${said}.`;
      }
      return /[.!?:]$/.test(line) ? line : `${line}.`;
    })
    .filter((line) => line !== '');
  return nearMiss === undefined
    ? { reason: new Lines(sentences) }
    : { reason: new Lines(sentences), nearMiss };
}

/**
 * oclif's message with each word of the command line it may quote (an argument, a flag's value, `--x=value`)
 * that is long or holds a line break said back as `echoed` says it, before the message is read line by line:
 * a pasted file given as an argument is one short line, not 3,000.
 */
function withWordsEchoed(message: string, argv: readonly string[]): string {
  const words = argv.flatMap((word) => {
    const value = /^--?[^=\s]+=(.*)$/s.exec(word)?.[1];
    return value === undefined ? [word] : [word, value];
  });
  let text = message;
  for (const word of [...new Set(words)].sort((a, b) => b.length - a.length)) {
    const said = echoed(word);
    if (said !== word && text.includes(word)) text = text.split(word).join(said);
  }
  return text;
}

function isTopic(words: string, commandIds: readonly string[]): boolean {
  return commandIds.some((id) => id.startsWith(`${words}:`));
}

/**
 * Under a known topic the last word alone is compared with the topic's commands (`gate frob` is not near
 * `gate jobs`, as the whole ids would be); elsewhere the whole id (`gat result` → `gate result`).
 */
function closestCommand(words: readonly string[], commandIds: readonly string[]): string | undefined {
  const topic = words.slice(0, -1).join(':');
  if (topic === '' || !isTopic(topic, commandIds)) return closest(words.join(':'), commandIds);
  const commandsOfTopic = commandIds
    .filter((id) => id.startsWith(`${topic}:`))
    .map((id) => id.slice(topic.length + 1));
  const near = closest(words.at(-1) ?? '', commandsOfTopic);
  return near === undefined ? undefined : `${topic}:${near}`;
}

/**
 * The words of an unknown command id that were the command: a known topic's words and the one after them
 * (`gate frob t_1` → `gate frob`), or the first word; the words after them were its arguments. Words after a
 * command are all kept: that command takes no such argument (`list extra`).
 */
export function unknownCommandWords(id: string, commandIds: readonly string[]): string {
  const parts = id.split(':');
  if (parts.some((_, n) => commandIds.includes(parts.slice(0, n + 1).join(':'))))
    return echoed(parts.join(' '));
  return echoed(parts.slice(0, knownTopicDepth(parts, commandIds) + 1).join(' '));
}

/** How many leading words name a known topic, short of the last word (`gate frob t_1` → 1). */
function knownTopicDepth(parts: readonly string[], commandIds: readonly string[]): number {
  let depth = 0;
  while (depth < parts.length - 1 && isTopic(parts.slice(0, depth + 1).join(':'), commandIds)) depth += 1;
  return depth;
}

/**
 * The command of a command line that put a flag first (`gds --detailed-exitcode plan`): oclif reads the first
 * word as the command. The command is the first word after the flags that starts a command id (topic words
 * included, `gate diff`); the line suggested holds the command, then the flags' names alone (a value, maybe a
 * token, is never echoed), then `…` for the rest. Undefined when the first word is no flag or no command follows.
 */
export function flagFirstSuggestion(
  argv: readonly string[],
  commandIds: readonly string[],
): string | undefined {
  if (!(argv[0] ?? '').startsWith('-')) return undefined;
  for (let start = 1; start < argv.length; start += 1) {
    let end = start;
    let id: string | undefined;
    while (end < argv.length && !(argv[end] ?? '').startsWith('-')) {
      const head = argv.slice(start, end + 1).join(':');
      if (commandIds.includes(head)) id = head;
      else if (!isTopic(head, commandIds)) break;
      end += 1;
    }
    if (id === undefined) continue;
    const flags = argv
      .slice(0, start)
      .filter((word) => /^--?[A-Za-z][\w-]*(=|$)/.test(word))
      .map((word) => word.split('=')[0] ?? word);
    const line = [...id.split(':'), ...flags].join(' ');
    return `gds reads the command first, then its flags: \`gds ${echoed(line)} …\` (the flags' values and arguments as you gave them).`;
  }
  return undefined;
}

/**
 * "Did you mean" for an unknown command id (`gate:resutl`), from the command ids by edit distance; when
 * the first words are a command (`list extra`), the rest were arguments it does not take.
 */
export function commandSuggestion(id: string, commandIds: readonly string[]): string {
  const words = (ids: string) => echoed(ids.replaceAll(':', ' '));
  const parts = id.split(':');
  // The longest leading words that name, or nearly name, a command; the words after them were arguments
  // (`gate sugest tbl_x` → `gds gate suggest tbl_x`). Said, never run.
  // Under a known topic (`gate`), the word after it is the command; the words after that were arguments.
  const depth = knownTopicDepth(parts, commandIds);
  for (let n = depth > 0 ? Math.min(parts.length, depth + 1) : parts.length; n > 0; n -= 1) {
    const head = parts.slice(0, n).join(':');
    const rest = echoed(parts.slice(n).join(' '));
    if (n < parts.length && isTopic(head, commandIds)) {
      return `\`gds ${words(head)}\` has no command ${echoed(parts[n] ?? '')}: see \`gds ${words(head)} --help\` for its commands.`;
    }
    if (n < parts.length && commandIds.includes(head)) {
      return `\`gds ${words(head)}\` takes no argument ${rest}: see \`gds ${words(head)} --help\`.`;
    }
    const near = closestCommand(parts.slice(0, n), commandIds);
    if (near !== undefined && near !== head) {
      const line = echoed(rest === '' ? words(near) : `${words(near)} ${rest}`);
      return `Did you mean \`gds ${line}\`? Run \`gds --help\` for the list of commands.`;
    }
  }
  return 'Run `gds --help` for the list of commands.';
}
