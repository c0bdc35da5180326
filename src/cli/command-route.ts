// Which command a command line names, decided from the command manifest alone: the same words oclif's
// `normalizeArgv` takes as the command id with the topic separator ' ' (@oclif/core help/util.js,
// collateSpacedCmdIDFromArgs), so that the entries (bin/run.js, the executable's boot script) can pick the
// command's own bundle before oclif loads. test/cli/command-route.test.ts holds it to oclif's own answer.

import { closest } from '../core/did-you-mean.js';

/** What the route needs of a manifest command: whether it takes positional arguments. */
export interface RoutedCommand {
  strict?: boolean;
  args?: Readonly<Record<string, unknown>>;
}

export interface CommandRoute {
  id: string;
  /** The arguments after the command's words, as oclif hands them to the command. */
  argv: string[];
}

const isFlag = (word: string) => word.startsWith('-');
const isArgWithValue = (word: string) => word.includes('=');

/**
 * The command id and its arguments, or undefined when oclif would not run a command of `commands` for
 * these words (no words, a help or version request, a topic, an unknown or aliased command): oclif decides
 * those itself.
 */
export function commandRoute(
  argv: readonly string[],
  commands: Readonly<Record<string, RoutedCommand>>,
  helpFlags: readonly string[],
): CommandRoute | undefined {
  const first = argv[0];
  if (first === undefined || first === '--version') return undefined;
  for (const word of argv) {
    if (word === '--') break;
    if (helpFlags.includes(word)) return undefined;
  }
  const words = first.includes(':') || argv.length === 1 ? [first] : spacedId(argv, commands);
  const id = words.join(':');
  if (!Object.hasOwn(commands, id)) return undefined;
  return { id, argv: argv.slice(words.length) };
}

/** oclif's collateSpacedCmdIDFromArgs: the leading words that name a command or topic. */
function spacedId(argv: readonly string[], commands: Readonly<Record<string, RoutedCommand>>): string[] {
  const usable = new Set(
    Object.keys(commands).flatMap((id) =>
      id.split(':').map((_, i, parts) => parts.slice(0, i + 1).join(':')),
    ),
  );
  const final: string[] = [];
  const takesArgs = () => {
    const command = final.length === 0 ? undefined : commands[final.join(':')];
    return command !== undefined && (command.strict === false || Object.keys(command.args ?? {}).length > 0);
  };
  for (const word of argv) {
    if (usable.has([...final, word].filter(Boolean).join(':'))) final.push(word);
    else if (isArgWithValue(word) || isFlag(word) || takesArgs()) break;
    else final.push(word);
  }
  const id = final.filter(Boolean);
  return id.length === 0 ? [argv[0] ?? ''] : id;
}

/**
 * The commands with a bundle of their own: one table, made by the build (scripts/bundle/training.ts
 * commandBundleTable); the executable's boot script has it built in.
 */
export interface CommandBundles {
  /** Every command of the manifest, with what routing reads of it. */
  routes: Record<string, RoutedCommand>;
  /** The commands with a bundle of their own. */
  own: string[];
  /** oclif's help flags (package.json): a help request is never routed to a command bundle. */
  helpFlags: string[];
  /** The executable's: of `own`, those with a second code cache, trained on `--jq` runs. */
  jq?: string[];
}

/** The command these arguments run when it has a bundle of its own; else undefined (no bundle). */
export function commandBundleRoute(
  argv: readonly string[],
  bundles: CommandBundles,
): CommandRoute | undefined {
  const route = commandRoute(globalFlagsAfterCommand(argv), bundles.routes, bundles.helpFlags);
  return route !== undefined && bundles.own.includes(route.id) ? route : undefined;
}

const globalFlagWithValue = /^--(?:token|base|profile|jq|template)(=.*)?$/;

/**
 * `gds --profile prod env promote …`: oclif reads a command's flags only after its words, so global flags
 * given before the command move behind it (before any `--`). `--json id,name` moves with its field list.
 */
export function globalFlagsAfterCommand(argv: readonly string[]): string[] {
  const leading: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const token = argv[i] ?? '';
    const withValue = globalFlagWithValue.exec(token);
    const takesNext =
      (withValue !== null && withValue[1] === undefined) ||
      (token === '--json' && (argv[i + 1] ?? '').includes(','));
    if (withValue === null && token !== '--json' && !token.startsWith('--json=')) break;
    const width = takesNext && i + 1 < argv.length ? 2 : 1;
    leading.push(...argv.slice(i, i + width));
    i += width;
  }
  if (leading.length === 0) return [...argv];
  const rest = argv.slice(i);
  const end = rest.indexOf('--');
  return end === -1 ? [...rest, ...leading] : [...rest.slice(0, end), ...leading, ...rest.slice(end)];
}

/**
 * Whether `argv` asks for the boolean flag `--name`: a word before any `--` (after it, a word is an argument),
 * written as gds does or as terraform does (`-name`, `-name=true`, which oclif refuses as usage errors). For a
 * command line not parsed (yet): the flag decides how its failure ends (plan --detailed-exitcode: with 1).
 */
export function flagAskedFor(argv: readonly string[], name: string): boolean {
  const end = argv.indexOf('--');
  const asked = new RegExp(`^--?${name}(?:=|$)`);
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => asked.test(word));
}

/**
 * Whether `argv` asks for the boolean flag `--name` (flagAskedFor), or nearly: a flag word naming none of
 * `flagNames` whose nearest of them is `name`, the flag a usage error's "Did you mean" names
 * (`--detailed-exitcod`, `--Detailed-exitcode`). For a usage error met before the flags are parsed: it ends
 * as the flag that was meant would make it end.
 */
export function flagMeant(
  argv: readonly string[],
  name: string,
  flagNames: readonly string[] = [name],
): boolean {
  if (flagAskedFor(argv, name)) return true;
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => {
    if (!word.startsWith('-')) return false;
    const given = word.replace(/^-+/, '').replace(/=.*$/s, '');
    return !flagNames.includes(given) && closest(given, flagNames) === name;
  });
}

/** Words that are never an alias (`gds alias set`), besides the first word of every command and topic. */
export const RESERVED_WORDS: readonly string[] = ['help', 'version'];
/** An alias is one word: up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit. */
export const ALIAS_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The words an alias may not take: every command's and topic's first word, help and version. */
export function reservedWords(commandIds: readonly string[]): Set<string> {
  return new Set([...commandIds.map((id) => id.split(':')[0] ?? id), ...RESERVED_WORDS]);
}

/**
 * Whether the first word of a command line may be an alias: a word (not a flag) that names no command or
 * topic. Only then does main() load the aliases, so the normal command path reads no extra file.
 */
export function mayBeAlias(word: string | undefined, commandIds: readonly string[]): word is string {
  return word !== undefined && ALIAS_NAME.test(word) && !reservedWords(commandIds).has(word);
}
