// Which command a command line names, decided from the command manifest alone: the same words oclif's
// `normalizeArgv` takes as the command id with the topic separator ' ' (@oclif/core help/util.js,
// collateSpacedCmdIDFromArgs), so that main() can run that command without oclif's `run` (issue 24: the
// fast dispatcher). test/cli/command-route.test.ts holds it to oclif's own answer.

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
