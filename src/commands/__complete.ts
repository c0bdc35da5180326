import { Command } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import type { CompletionCommand, CompletionFlag, CompletionTree, DynamicKind } from '../cli/completion.js';
import { complete, DYNAMIC_KINDS, renderAnswer } from '../cli/completion.js';
import { completionWaitMs, dynamicValues } from '../cli/completion-values.js';
import { readSettings } from '../cli/settings.js';
import { splitWords } from '../cli/aliases.js';

/**
 * What the completion scripts ask (`gds completion`): `gds __complete line -- <words…>` prints what may come at
 * the last word (`gds __complete powershell …` the same, as `word<TAB>value<TAB>description` lines, the word
 * quoted for PowerShell), `gds __complete <kind> <prefix>` the values of one kind (tables, connectors, jobs, requests,
 * profiles, environments). Never asks anything, never writes to stderr, and exits 0 whatever happens, within
 * about 3 seconds (a second more than GDS_COMPLETION_TIMEOUT_MS).
 */
export default class Complete extends Command {
  static override hidden = true;
  static override strict = false;
  static override summary = 'What the shell completion scripts ask gds (see gds completion).';
  static override examples = [
    '<%= config.bin %> __complete line -- gate ap',
    '<%= config.bin %> __complete tables ord',
  ];

  async run(): Promise<void> {
    process.stderr.write = (() => true) as typeof process.stderr.write;
    // The service's wait and a second more (3 s by default).
    const deadline = setTimeout(() => process.exit(0), completionWaitMs() + 1_000);
    deadline.unref();
    try {
      process.stdout.write(await this.answer(this.argv));
    } catch {
      // silent: a completion that fails offers nothing
    } finally {
      // answered: nothing is left to cut short (run in a test's process, the timer would end that process)
      clearTimeout(deadline);
    }
    process.exitCode = 0;
  }

  override async catch(): Promise<void> {
    process.exitCode = 0;
  }

  private async answer(argv: readonly string[]): Promise<string> {
    const [mode, ...rest] = argv;
    if (mode === 'line' || mode === 'powershell') {
      // PowerShell's script inserts the first field as it is: the name quoted as a PowerShell word
      const shell = mode === 'powershell' ? mode : undefined;
      const answer = complete(await completionTree(this.config), lineWords(rest));
      if (answer.kind !== 'dynamic') return renderAnswer(answer, shell);
      const candidates = await this.values(answer.source, answer.prefix, credentialFlags(answer.credentials));
      return renderAnswer(
        {
          kind: 'values',
          candidates: candidates
            .filter((c) => answer.dashed || !c.value.startsWith('-'))
            .map((c) => ({ ...c, value: answer.flagPrefix + c.value })),
        },
        shell,
      );
    }
    const kind = DYNAMIC_KINDS.find((k) => k === mode);
    if (kind === undefined) return '';
    return renderAnswer({ kind: 'values', candidates: await this.values(kind, rest[0] ?? '', {}) });
  }

  private async values(kind: DynamicKind, prefix: string, flags: Record<string, string>) {
    return dynamicValues(kind, prefix, { flags, version: this.config.version });
  }
}

/** The words of `line [--current=WORD] [--] words…`: the last one is completed. */
function lineWords(rest: readonly string[]): string[] {
  let words = [...rest];
  let current: string | undefined;
  if (words[0]?.startsWith('--current=') === true) {
    current = words[0].slice('--current='.length);
    words = words.slice(1);
  }
  if (words[0] === '--') words = words.slice(1);
  return current === undefined ? (words.length === 0 ? [''] : words) : [...words, current];
}

function credentialFlags(pairs: readonly string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (let i = 0; i + 1 < pairs.length; i += 2)
    flags[(pairs[i] ?? '').replace(/^--/, '')] = pairs[i + 1] ?? '';
  return flags;
}

async function completionTree(config: Interfaces.Config): Promise<CompletionTree> {
  // oclif's own commands (help) write the program's name as a template in their summaries.
  const named = (text: string | undefined) => text?.replaceAll('<%= config.bin %>', config.bin);
  const commands = config.commands.map((command): CompletionCommand => ({
    id: command.id,
    summary: named(command.summary ?? command.description),
    hidden: command.hidden,
    flags: Object.fromEntries(
      Object.entries(command.flags ?? {}).map(([name, flag]) => [
        name,
        {
          name,
          char: flag.char,
          type: flag.type === 'boolean' ? 'boolean' : 'option',
          options: flag.type === 'option' ? flag.options : undefined,
          hidden: flag.hidden,
          summary: named(flag.summary),
          description: named(flag.description),
        } satisfies CompletionFlag,
      ]),
    ),
    args: Object.entries(command.args ?? {}).map(([name, arg]) => ({ name, options: arg.options })),
  }));
  return {
    commands: [...commands, ...(await aliasCommands(commands))],
    topics: Object.fromEntries(config.topics.map((topic) => [topic.name, topic.description])),
  };
}

/** The aliases (`gds alias set`), offered beside the commands, with the flags of the command they run. */
async function aliasCommands(commands: readonly CompletionCommand[]): Promise<CompletionCommand[]> {
  let aliases: Record<string, string>;
  try {
    aliases = readSettings().aliases;
  } catch {
    return [];
  }
  const byId = new Map(commands.map((command) => [command.id, command]));
  return Object.entries(aliases).map(([name, expansion]) => {
    let target: CompletionCommand | undefined;
    if (!expansion.startsWith('!')) {
      const words = splitWords(expansion);
      for (let n = words.length; n > 0 && target === undefined; n -= 1)
        target = byId.get(words.slice(0, n).join(':'));
    }
    return { id: name, summary: `alias: ${expansion}`, flags: target?.flags ?? {}, args: [] };
  });
}
