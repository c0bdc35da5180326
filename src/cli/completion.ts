// Shell completion (`gds completion bash|zsh|fish|powershell`): the shell scripts are thin, and ask the hidden
// `gds __complete line -- <words…>` what may come next. This module decides it from the command tree oclif
// knows (commands, topics, flags and their enum values, arguments): what is static is answered here, what
// lives in the service (table names and ids, connector ids, job ids, requests) or the config (profiles) is
// named as a kind for completion-values.ts to fetch.
import { onOneLine, stripControlCharacters } from '../core/terminal-text.js';

/** A flag as the completion sees it (oclif's manifest entry, reduced). */
export interface CompletionFlag {
  name: string;
  char?: string | undefined;
  type: 'boolean' | 'option';
  options?: readonly string[] | undefined;
  hidden?: boolean | undefined;
  summary?: string | undefined;
  description?: string | undefined;
}

export interface CompletionCommand {
  id: string;
  summary?: string | undefined;
  hidden?: boolean | undefined;
  flags: Readonly<Record<string, CompletionFlag>>;
  args: readonly { name: string; options?: readonly string[] | undefined }[];
}

export interface CompletionTree {
  commands: readonly CompletionCommand[];
  topics: Readonly<Record<string, string | undefined>>;
}

export type DynamicKind = 'tables' | 'connectors' | 'jobs' | 'requests' | 'profiles' | 'environments';
export const DYNAMIC_KINDS: readonly DynamicKind[] = [
  'tables',
  'connectors',
  'jobs',
  'requests',
  'profiles',
  'environments',
];

export interface Candidate {
  value: string;
  description?: string | undefined;
}

export type CompletionAnswer =
  | { kind: 'values'; candidates: Candidate[] }
  | { kind: 'files' }
  | {
      kind: 'dynamic';
      source: DynamicKind;
      prefix: string;
      flagPrefix: string;
      credentials: string[];
      /**
       * Whether a value starting with '-' (a table named `--help`) is offered: only where gds reads it as an
       * argument, after `--`. Before it oclif reads such a word as a flag (`gds status --help` is help), and as a
       * flag's value it is help or refused when it names a flag (`--table --help`, `--table=--json`); there the
       * value's id (tbl_…) is offered instead.
       */
      dashed: boolean;
    };

/** Flags whose value is a file or folder. */
const FILE_FLAGS = new Set([
  'file',
  'output',
  'input',
  'evidence-file',
  'manifest',
  'run-results',
  'bundle-in',
  'bundle-out',
  'against',
  'dbt',
]);

/** Flags whose value the service or the config knows. */
const DYNAMIC_FLAGS: Readonly<Record<string, DynamicKind>> = {
  profile: 'profiles',
  'dest-profile': 'profiles',
  'save-profile': 'profiles',
  connector: 'connectors',
  table: 'tables',
  replace: 'tables',
  baseline: 'jobs',
  env: 'environments',
  'env:promote --to': 'environments',
};

/** Arguments by name. */
const DYNAMIC_ARGS: Readonly<Record<string, DynamicKind | 'files'>> = {
  tableId: 'tables',
  id: 'tables',
  jobId: 'jobs',
  requestId: 'requests',
  file: 'files',
};

/** The global flags that pick the credentials, passed on to the value lookup. */
const CREDENTIAL_FLAGS = new Set(['token', 'base', 'profile']);

/**
 * What may come at the last word of `words` (the words after `gds`, the last one being completed, possibly
 * empty).
 */
export function complete(tree: CompletionTree, words: readonly string[]): CompletionAnswer {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const visible = tree.commands.filter((command) => command.hidden !== true);
  const byId = new Map(visible.map((command) => [command.id, command]));
  const rootFlags = rootGlobalFlags(visible);

  let path: string[] = [];
  let command: CompletionCommand | undefined;
  let pendingFlag: CompletionFlag | undefined;
  let positional = 0;
  let afterDoubleDash = false;
  const credentials: string[] = [];
  for (const word of before) {
    const flags = command?.flags ?? rootFlags;
    if (pendingFlag !== undefined) {
      if (CREDENTIAL_FLAGS.has(pendingFlag.name)) credentials.push(`--${pendingFlag.name}`, word);
      pendingFlag = undefined;
      continue;
    }
    if (!afterDoubleDash && word === '--') {
      afterDoubleDash = true;
      continue;
    }
    if (!afterDoubleDash && word.startsWith('-') && word !== '-') {
      const [name, value] = splitFlag(word);
      const flag = findFlag(flags, name);
      if (flag?.type === 'option' && value === undefined) pendingFlag = flag;
      if (flag !== undefined && value !== undefined && CREDENTIAL_FLAGS.has(flag.name))
        credentials.push(`--${flag.name}`, value);
      continue;
    }
    if (command === undefined) {
      const next = [...path, word].join(':');
      if (byId.has(next)) {
        command = byId.get(next);
        path = [...path, word];
        continue;
      }
      if (isTopic(visible, next)) {
        path = [...path, word];
        continue;
      }
      return { kind: 'values', candidates: [] };
    }
    positional += 1;
  }

  const flags = command?.flags ?? rootFlags;
  const id = command?.id ?? '';
  if (pendingFlag !== undefined) return flagValues(id, pendingFlag, current, '', credentials);
  if (!afterDoubleDash && current.startsWith('-')) {
    const [name, value] = splitFlag(current);
    if (value !== undefined) {
      const flag = findFlag(flags, name);
      return flag?.type === 'option'
        ? flagValues(id, flag, value, current.slice(0, current.indexOf('=') + 1), credentials)
        : { kind: 'values', candidates: [] };
    }
    return { kind: 'values', candidates: flagNames(flags, current) };
  }
  if (command === undefined) return { kind: 'values', candidates: subcommands(visible, tree, path, current) };
  const arg = command.args[positional];
  if (arg === undefined) return { kind: 'values', candidates: [] };
  if (arg.options !== undefined && arg.options.length > 0) return values(arg.options, current);
  if (command.id === 'help') return { kind: 'values', candidates: subcommands(visible, tree, [], current) };
  const source = DYNAMIC_ARGS[arg.name];
  if (source === 'files') return { kind: 'files' };
  if (source === undefined) return { kind: 'values', candidates: [] };
  return { kind: 'dynamic', source, prefix: current, flagPrefix: '', credentials, dashed: afterDoubleDash };
}

/** The global flags every command has (those of the first command that has any): what may precede a command. */
function rootGlobalFlags(commands: readonly CompletionCommand[]): Record<string, CompletionFlag> {
  const global = ['token', 'base', 'profile', 'json', 'jq'];
  const first = commands.find((command) => global.every((name) => name in command.flags));
  if (first === undefined) return {};
  return Object.fromEntries(global.map((name) => [name, first.flags[name] as CompletionFlag]));
}

function splitFlag(word: string): [string, string | undefined] {
  const eq = word.indexOf('=');
  return eq === -1 ? [word, undefined] : [word.slice(0, eq), word.slice(eq + 1)];
}

function findFlag(flags: Readonly<Record<string, CompletionFlag>>, word: string): CompletionFlag | undefined {
  if (word.startsWith('--')) return flags[word.slice(2)];
  return Object.values(flags).find((flag) => flag.char !== undefined && `-${flag.char}` === word);
}

function isTopic(commands: readonly CompletionCommand[], id: string): boolean {
  return commands.some((command) => command.id.startsWith(`${id}:`));
}

function flagValues(
  commandId: string,
  flag: CompletionFlag,
  prefix: string,
  flagPrefix: string,
  credentials: string[],
): CompletionAnswer {
  if (flag.options !== undefined && flag.options.length > 0) {
    const answer = values(flag.options, prefix);
    return {
      kind: 'values',
      candidates: answer.candidates.map((c) => ({ ...c, value: flagPrefix + c.value })),
    };
  }
  if (FILE_FLAGS.has(flag.name)) return { kind: 'files' };
  const source = DYNAMIC_FLAGS[`${commandId} --${flag.name}`] ?? DYNAMIC_FLAGS[flag.name];
  if (source === undefined) return { kind: 'values', candidates: [] };
  return { kind: 'dynamic', source, prefix, flagPrefix, credentials, dashed: false };
}

function values(options: readonly string[], prefix: string): { kind: 'values'; candidates: Candidate[] } {
  return {
    kind: 'values',
    candidates: options.filter((o) => o.startsWith(prefix)).map((value) => ({ value })),
  };
}

function flagNames(flags: Readonly<Record<string, CompletionFlag>>, prefix: string): Candidate[] {
  return Object.values(flags)
    .filter((flag) => flag.hidden !== true)
    .map((flag) => ({ value: `--${flag.name}`, description: oneLine(flag.summary ?? flag.description) }))
    .filter((candidate) => candidate.value.startsWith(prefix))
    .sort((a, b) => a.value.localeCompare(b.value));
}

/** The commands and topics one level under `path` (the root's when empty). */
function subcommands(
  commands: readonly CompletionCommand[],
  tree: CompletionTree,
  path: readonly string[],
  prefix: string,
): Candidate[] {
  const depth = path.length;
  const found = new Map<string, string | undefined>();
  for (const command of commands) {
    const parts = command.id.split(':');
    if (parts.length <= depth || parts.slice(0, depth).join(':') !== path.join(':')) continue;
    const word = parts[depth] ?? '';
    if (!word.startsWith(prefix) || found.has(word)) continue;
    const id = parts.slice(0, depth + 1).join(':');
    found.set(word, parts.length === depth + 1 ? command.summary : tree.topics[id]);
  }
  return [...found]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([value, description]) => ({ value, description: oneLine(description) }));
}

function oneLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const first = text.split('\n')[0]?.trim() ?? '';
  const sentence = /^(.*?)\.(?:\s|$)/.exec(first)?.[1] ?? first;
  return sentence.replace(/[.:]$/, '').slice(0, 80) || undefined;
}

/**
 * The lines `gds __complete` prints: `value<TAB>description`, or `:files` alone for file names. Values and
 * descriptions come from the service too (table names, connector names): zsh and fish show them in their
 * menus, so a description is stripped of terminal control characters, and a value holding one (or a tab or
 * line break, which would split the line into another candidate) is left out, since the shell would insert
 * it into the command line as it is. Such a table is still offered by its id.
 */
export function renderAnswer(
  answer: { kind: 'files' } | { kind: 'values'; candidates: Candidate[] },
  shell?: 'powershell',
): string {
  if (answer.kind === 'files') return ':files\n';
  return answer.candidates
    .filter((c) => c.value !== '' && !/[\t\n]/.test(c.value) && stripControlCharacters(c.value) === c.value)
    .map((c) => {
      const description = onOneLine(c.description ?? '').replace(/\t+/g, ' ');
      if (shell === 'powershell') return `${powershellWord(c.value)}\t${c.value}\t${description}\n`;
      return `${description === '' ? c.value : `${c.value}\t${description}`}\n`;
    })
    .join('');
}

/**
 * `value` as one literal word of a PowerShell command line: as it is when PowerShell reads it so (a word of
 * letters, digits and `_ . : / = + -`; a number; a flag, `--state=CERTIFIED`, without the `.` or `:` PowerShell
 * would split it at), else single-quoted, each quote doubled (as
 * CodeGeneration.EscapeSingleQuotedStringContent does, with the typographic single quotes PowerShell also
 * reads as quotes): inside, `$`, backticks, `;`, spaces and double quotes are text.
 */
export function powershellWord(value: string): string {
  if (/^(?:\d+|\p{L}[\p{L}\p{N}_.:/=+-]*|--?\p{L}[\p{L}\p{N}_-]*(?:=[\p{L}\p{N}_-]*)?)$/u.test(value))
    return value;
  return `'${value.replace(/['\u2018\u2019\u201a\u201b]/g, '$&$&')}'`;
}
