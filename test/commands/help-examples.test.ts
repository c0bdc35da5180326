// Every example in every command's help works as written (people copy them), and so does every `gds …` line
// of the code blocks of README.md and docs/*.md. Each line is read as a shell reads it (shell-line.ts): every
// `gds …` command in it, piped, chained, in `$(…)` or behind an alias an earlier example set, is routed as
// main.ts routes it and parsed by oclif's parser with that command's own flags, arguments and strictness:
// an unknown command or flag, a missing argument or required flag, exclusive flags, a bad option value fail;
// so do a --jq that does not compile and a field a `--jq`/`| jq` filter reads that the records lack (JSON_FIELDS).
// A usage line of the docs (`gds list [--state S]`, `<tableId>`) names commands and flags that exist.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Parser } from '@oclif/core';
import type { Command } from '@oclif/core';
import { describe, expect, it } from 'vitest';
import { commands as helpPlugin } from '@oclif/plugin-help';
import { parse as parseYaml } from 'yaml';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';
import { COMMAND_IDS } from '../../src/commands/command-ids.js';
import { checkAlias, expandAlias, splitWords } from '../../src/cli/aliases.js';
import { takeJsonFields } from '../../src/cli/base-command.js';
import { commandRoute, globalFlagsAfterCommand, mayBeAlias } from '../../src/cli/command-route.js';
import { REFERENCE_TOPIC } from '../../src/cli/help.js';
import { helpTopicPage } from '../../src/cli/help-topics.js';
import { checkJq } from '../../src/cli/jq.js';
import { JSON_FIELDS } from '../../src/cli/json-fields.js';
import { compileTemplate } from '../../src/cli/template.js';
import { repoRoot } from '../cli/helpers/cli-process.js';
import { shellCommands, type ShellCommand } from './helpers/shell-line.js';

const HELP_FLAGS = ['--help', '-h'];

/** Every command by id, and by each of its aliases (hidden ones too): what a first word may name. */
const COMMANDS: Record<string, Command.Class> = {};
for (const [id, load] of Object.entries(COMMAND_LOADERS)) {
  const command = (await load()).default;
  for (const name of [id, ...(command.aliases ?? []), ...(command.hiddenAliases ?? [])])
    COMMANDS[name] = command;
}
const ROUTABLE_IDS = Object.keys(COMMANDS);
// `gds help` is @oclif/plugin-help's: its usage line names its flags.
COMMANDS.help = helpPlugin.help;
const TOPICS = new Set(
  ROUTABLE_IDS.flatMap((id) =>
    id
      .split(':')
      .slice(0, -1)
      .map((_, i, p) => p.slice(0, i + 1).join(':')),
  ),
);

/** What the lines of one help or one document have set up so far: the aliases its `alias set` examples made. */
interface Session {
  aliases: Record<string, string>;
}

/** What is wrong with `line` (an example or a docs line), as messages; none when it works as written. */
async function lineProblems(line: string, session: Session): Promise<string[]> {
  const text = line.replaceAll(/<%=\s*config\.bin\s*%>/g, 'gds');
  if (text.includes('<%')) return ['an unrendered template tag'];
  let commands;
  try {
    commands = shellCommands(text);
  } catch (error) {
    return [`no shell would read it: ${(error as Error).message}`];
  }
  const problems: string[] = [];
  for (const command of commands) {
    if (command.words[0] === 'jq') problems.push(...jqFieldProblems(command));
    if (command.words[0] !== 'gds') continue;
    problems.push(...(await gdsProblems(command.words.slice(1), command.env, command.stdin, session)));
  }
  return problems;
}

/** Programs that pass a record on whole (`tail -n 1`, `head -1`, `grep x` keep whole lines). */
const LINE_FILTERS = new Set(['head', 'tail', 'grep', 'tee', 'less', 'cat']);

/**
 * `gds X --json | jq FILTER`: the fields FILTER reads of each record are fields X's records have (JSON_FIELDS,
 * when X's records have fixed keys).
 */
function jqFieldProblems(jq: ShellCommand): string[] {
  let source = jq.pipedFrom;
  while (source !== undefined && LINE_FILTERS.has(source.words[0] ?? '')) source = source.pipedFrom;
  if (source?.words[0] !== 'gds') return [];
  const filter = jq.words.slice(1).find((word) => !word.startsWith('-'));
  const route = commandRoute(globalFlagsAfterCommand(source.words.slice(1)), COMMANDS, HELP_FLAGS);
  return route === undefined || filter === undefined ? [] : recordFieldProblems(route.id, filter);
}

/** The fields a jq filter reads of the record it is given that `id`'s records lack. */
function recordFieldProblems(id: string, filter: string): string[] {
  const known = JSON_FIELDS[id];
  if (known === undefined) return [];
  const missing = recordFields(filter).filter((field) => !known.includes(field));
  return missing.length === 0
    ? []
    : [`jq ${filter}: gds ${id.replaceAll(':', ' ')}'s records have no ${missing.join(', ')}`];
}

/**
 * The fields of its input a jq filter reads: `.a`, `.a.b` and `.a[]` (a), and `{a, b}` (a and b), in the first
 * stage of its pipe and in the stages after it that pass the record on (`select(…)`).
 */
function recordFields(filter: string): string[] {
  const fields = new Set<string>();
  for (const stage of topLevelStages(filter.replaceAll(/"(?:[^"\\]|\\.)*"/g, '""'))) {
    for (const match of stage.matchAll(/(?<![\w\])}.?$])\.([A-Za-z_]\w*)/g)) fields.add(match[1] ?? '');
    for (const object of stage.matchAll(/\{([^{}]*)\}/g))
      for (const entry of (object[1] ?? '').split(','))
        if (/^\s*[A-Za-z_]\w*\s*$/.test(entry)) fields.add(entry.trim());
    if (!/^\s*select\(/.test(stage)) break;
  }
  return [...fields];
}

/** A jq filter's stages: split at each `|` outside parentheses, brackets and braces. */
function topLevelStages(filter: string): string[] {
  const stages: string[] = [];
  let depth = 0;
  let start = 0;
  [...filter].forEach((char, i) => {
    if ('([{'.includes(char)) depth += 1;
    else if (')]}'.includes(char)) depth -= 1;
    else if (char === '|' && depth === 0) {
      stages.push(filter.slice(start, i));
      start = i + 1;
    }
  });
  return [...stages, filter.slice(start)];
}

/** What is wrong with `gds ARGV` run with `env` set before it and `stdin` (when known) piped to it. */
async function gdsProblems(
  given: readonly string[],
  env: Readonly<Record<string, string>>,
  stdin: string | undefined,
  session: Session,
): Promise<string[]> {
  const argv = globalFlagsAfterCommand(given);
  const shown = `gds ${given.join(' ')}`;
  if (argv.length === 0 || (argv.length === 1 && ['--version', ...HELP_FLAGS].includes(argv[0] ?? '')))
    return [];
  if (argv[0] === 'help' || argv.some((word) => HELP_FLAGS.includes(word))) return helpProblems(argv, shown);
  const route = commandRoute(argv, COMMANDS, HELP_FLAGS);
  if (route === undefined) {
    const name = argv[0];
    if (!mayBeAlias(name, ROUTABLE_IDS) || !Object.hasOwn(session.aliases, name))
      return [`${shown}: no such gds command`];
    let expansion;
    try {
      expansion = expandAlias(argv, session.aliases);
    } catch (error) {
      return [`${shown}: ${(error as Error).message}`];
    }
    if (expansion === undefined || expansion.kind === 'shell') return [];
    return gdsProblems(expansion.argv, env, stdin, { aliases: {} });
  }
  const command = COMMANDS[route.id];
  if (command === undefined) return [`${shown}: no such gds command`];
  const { argv: rest, fields } = takeJsonFields(route.argv, command);
  const known = JSON_FIELDS[route.id];
  const unknownFields = known === undefined ? [] : (fields ?? []).filter((field) => !known.includes(field));
  if (unknownFields.length > 0) return [`${shown}: no JSON field ${unknownFields.join(', ')}`];
  let parsed;
  try {
    parsed = await withEnvironment(command, env, () =>
      Parser.parse(rest, {
        flags: { ...command.baseFlags, ...command.flags },
        // As BaseCommand parses them: an argument is never read from stdin.
        args: Object.fromEntries(
          Object.entries(command.args ?? {}).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]),
        ),
        strict: command.strict,
      }),
    );
  } catch (error) {
    return [`${shown}: ${parserMessage(error)}`];
  }
  const flags = parsed.flags as Record<string, unknown>;
  if (typeof flags.jq === 'string') {
    const missing = recordFieldProblems(route.id, flags.jq);
    if (missing.length > 0) return missing.map((problem) => `${shown}: ${problem}`);
  }
  try {
    if (typeof flags.jq === 'string') await checkJq(flags.jq);
    if (typeof flags.template === 'string') await compileTemplate(flags.template);
  } catch (error) {
    return [`${shown}: ${(error as Error).message}`];
  }
  const args = parsed.args as Record<string, string | undefined>;
  if (route.id === 'alias:set') {
    const expansion = args.expansion === '-' ? stdin?.trim() : args.expansion;
    return expansion === undefined
      ? []
      : aliasProblems(args.name ?? '', expansion, flags.shell === true, session);
  }
  if (route.id === 'alias:import' && args.file === '-' && stdin !== undefined) {
    const problems: string[] = [];
    for (const [name, expansion] of Object.entries(parseYaml(stdin) as Record<string, string>))
      problems.push(...(await aliasProblems(name, expansion, false, session)));
    return problems;
  }
  return [];
}

/** What oclif's parser says, without its preamble and its "See more help" line. */
function parserMessage(error: unknown): string {
  return String((error as Error).message)
    .split('\n')
    .filter(
      (line) => line.trim() !== '' && !/^The following errors? occurred:|^See more help/.test(line.trim()),
    )
    .map((line) => line.trim())
    .join(' ');
}

/** An alias as `alias set` takes it, and what its expansion runs (checked now, with its placeholders as given). */
async function aliasProblems(
  name: string,
  expansion: string,
  shell: boolean,
  session: Session,
): Promise<string[]> {
  let kept;
  try {
    kept = checkAlias(name, expansion, shell, COMMAND_IDS);
  } catch (error) {
    return [`alias ${name}: ${(error as Error).message}`];
  }
  session.aliases[name] = kept;
  if (kept.startsWith('!')) return lineProblems(kept.slice(1), { aliases: {} });
  const highest = Math.max(0, ...[...kept.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
  const placeholders = Array.from({ length: highest }, (_, i) => `$${i + 1}`);
  return gdsProblems([name, ...placeholders], {}, undefined, {
    aliases: { [name]: kept },
  });
}

/** `gds help X` and `gds X --help`: X is a help topic, a command or a topic of commands. */
function helpProblems(argv: readonly string[], shown: string): string[] {
  if (helpTopicPage(argv) !== undefined || argv.join(' ') === `help ${REFERENCE_TOPIC[0]}`) return [];
  const words = argv.filter((word) => word !== 'help' && !HELP_FLAGS.includes(word));
  const id = words.join(':');
  return id === '' || Object.hasOwn(COMMANDS, id) || TOPICS.has(id) ? [] : [`${shown}: no help for ${id}`];
}

/** Runs `parse` with the example's variables set and the command's flags' own variables unset, as written. */
async function withEnvironment<T>(
  command: Command.Class,
  env: Readonly<Record<string, string>>,
  parse: () => Promise<T>,
): Promise<T> {
  const names = Object.values({ ...command.baseFlags, ...command.flags }).flatMap((flag) =>
    typeof flag.env === 'string' ? [flag.env] : [],
  );
  const saved = Object.fromEntries([...names, ...Object.keys(env)].map((name) => [name, process.env[name]]));
  for (const name of names) delete process.env[name];
  Object.assign(process.env, env);
  try {
    return await parse();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * A usage line (`gds list [--state S]`, `gds quarantine list | open <tableId> [-o file]`, `gds gate
 * get|apply|diff …`): each command it names exists, and has each flag it names.
 */
function usageProblems(line: string): string[] {
  const text = line
    .replace(/(?:^|\s)#\s.*$/, '')
    .replaceAll(/<[^>]*>/g, 'X')
    .replaceAll(/[[\]()]/g, ' ')
    .replaceAll(/ (?:…|\.\.\.)|(?:…|\.\.\.)(?= |$)/g, ' ');
  const [first = '', ...others] = text.split(' | ');
  const words = splitWords(first);
  if (words[0] !== 'gds') return [`${line}: not a gds command`];
  const problems: string[] = [];
  const routes = routesOf(globalFlagsAfterCommand(words.slice(1)));
  let ids = routes.ids;
  problems.push(...routes.missing.map((missing) => `${line}: no such gds command: gds ${missing}`));
  problems.push(...flagProblems(ids, words, line));
  for (const other of others) {
    const otherWords = splitWords(other);
    if (!(otherWords[0] ?? '').startsWith('-')) {
      const topic = (ids[0] ?? '').split(':').slice(0, -1);
      const named = routesOf([...topic, ...otherWords]);
      ids = named.ids;
      problems.push(...named.missing.map((missing) => `${line}: no such gds command: gds ${missing}`));
    }
    problems.push(...flagProblems(ids, otherWords, line));
  }
  return problems;
}

/**
 * The commands `words` name (the longest run of leading words that is a command id), one for each alternative of
 * a `get|apply|diff` word; `missing`: the alternatives that name none.
 */
function routesOf(words: readonly string[]): { ids: string[]; missing: string[] } {
  const at = words.findIndex((word) => word.includes('|') && !word.startsWith('-'));
  if (at !== -1) {
    const routes = (words[at] ?? '')
      .split('|')
      .map((alternative) => routesOf([...words.slice(0, at), alternative, ...words.slice(at + 1)]));
    return { ids: routes.flatMap((r) => r.ids), missing: routes.flatMap((r) => r.missing) };
  }
  for (let count = words.length; count > 0; count -= 1) {
    const id = words.slice(0, count).join(':');
    if (Object.hasOwn(COMMANDS, id)) return { ids: [id], missing: [] };
  }
  return { ids: [], missing: [words.join(' ')] };
}

/** The flags `words` name that one of the commands `ids` lacks. */
function flagProblems(ids: readonly string[], words: readonly string[], line: string): string[] {
  const named = words.flatMap((word) => word.split(/[/|=]/)).filter((word) => /^--?[A-Za-z]/.test(word));
  return ids.flatMap((id) => {
    const command = COMMANDS[id];
    const flags = Object.entries({ ...command?.baseFlags, ...command?.flags });
    const has = (word: string) =>
      flags.some(([name, flag]) =>
        word.startsWith('--')
          ? [name, ...(flag.aliases ?? [])].includes(word.slice(2)) ||
            (flag.type === 'boolean' && flag.allowNo === true && word === `--no-${name}`)
          : word === `-${flag.char}`,
      );
    return named
      .filter((word) => !has(word))
      .map((word) => `${line}: gds ${id.replaceAll(':', ' ')} has no ${word}`);
  });
}

/** Whether a docs line is a usage line rather than a command to run: placeholders, optional parts. */
function isUsage(line: string): boolean {
  return /<[A-Za-z][^>]*>|\[[-<A-Za-z]|\s(?:…|\.\.\.)(?:\s|$)|\w\|\w/.test(line.replace(/'[^']*'/g, "''"));
}

/**
 * The `gds …` lines of a Markdown file's code blocks (after a YAML `- ` or `run: `), with their line numbers; in a
 * block with `$ ` prompts (a help page of docs/commands.md: its description is prose), only the prompted lines.
 */
function gdsLinesOf(markdown: string): { line: string; number: number }[] {
  const found: { line: string; number: number }[] = [];
  const lines = markdown.split('\n');
  let block: { text: string; number: number }[] | undefined;
  lines.forEach((raw, index) => {
    if (!/^\s*```/.test(raw)) {
      block?.push({ text: raw.trim(), number: index + 1 });
      return;
    }
    if (block === undefined) {
      block = [];
      return;
    }
    const prompted = block.some(({ text }) => text.startsWith('$ '));
    for (const { text, number } of block) {
      if (prompted && !text.startsWith('$ ')) continue;
      const line = text.replace(/^(?:\$ |- |run: )/, '');
      if (/^gds(?: |$)/.test(line)) found.push({ line, number });
    }
    block = undefined;
  });
  return found;
}

const examples = Object.keys(COMMAND_LOADERS).map((id) => {
  const command = COMMANDS[id];
  const lines = (command?.examples ?? []).map((example) =>
    typeof example === 'string' ? example : example.command,
  );
  return { id, lines };
});

describe('help examples', () => {
  it.each(examples)('gds $id: every example works as written', async ({ id, lines }) => {
    const session: Session = { aliases: {} };
    const problems: string[] = [];
    for (const line of lines)
      for (const problem of await lineProblems(line, session)) problems.push(`${line}\n    ${problem}`);
    expect(problems, `gds ${id.replaceAll(':', ' ')}'s examples`).toEqual([]);
  });

  it('every command has an example that runs it', () => {
    const without = examples.filter(({ lines }) => !lines.some((line) => /config\.bin|gds /.test(line)));
    expect(without.map(({ id }) => id)).toEqual([]);
  });
});

const documents = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('gds lines of the docs', () => {
  it.each(documents)('%s: every gds line in a code block works as written', async (document) => {
    const session: Session = { aliases: {} };
    const problems: string[] = [];
    for (const { line, number } of gdsLinesOf(readFileSync(join(repoRoot, document), 'utf8'))) {
      const found = isUsage(line) ? usageProblems(line) : await lineProblems(line, session);
      for (const problem of found) problems.push(`${document}:${number}: ${line}\n    ${problem}`);
    }
    expect(problems).toEqual([]);
  });
});

describe('the check itself', () => {
  it.each([
    ['gds list --stat CERTIFIED', /Nonexistent flag/],
    ['gds lsit', /no such gds command/],
    ['gds gate apply -f gate1.yml', /Missing 1 required arg/],
    ['gds reject t_42', /Missing required flag reason/],
    ['gds list --state CERTIFED', /Expected --state=CERTIFED to be one of/],
    ['gds list --jq .id --template "{{id}}"', /cannot also be provided/],
    ['gds list --json nosuchfield,id', /no JSON field nosuchfield/],
    ['gds list --jq "select(.id"', /jq/i],
    ['gds gate suggest t_42 | gds gate apply t_42 -f - --dryrun', /Nonexistent flag: --dryrun/],
    ['curl -H "Authorization: Bearer $(gds auth tokn)" https://x', /no such gds command/],
    ['X=$(SERVICE_TOKEN=t gds members lst) && echo "$X"', /no such gds command/],
    ["gds alias set ls 'lst --state CERTIFIED'", /does not start with a gds command/],
    ["gds alias set ls 'list --stat CERTIFIED'", /Nonexistent flag/],
    ["echo 'gate jobs $1 --jsn' | gds alias set jobs -", /Nonexistent flag: --jsn/],
    ["gds alias set --shell c 'gds lst | jq .'", /no such gds command/],
    ["printf 'q: quarantine lst\\n' | gds alias import -", /no such gds command/],
    ['gds why t_42', /no such gds command/],
    ['gds help nosuchtopic', /no help for nosuchtopic/],
    ['gds help reference', /^$/],
    [
      'gds members list --json | jq -r \'select(.role == "OWNER") | .mail\'',
      /members list's records have no mail/,
    ],
    ["gds plan --dbt . --json | tail -n 1 | jq '.sumary'", /plan's records have no sumary/],
    ["gds gate status j_1 --gate 1 --json | jq -c '{status, endedAt}'", /have no endedAt/],
    ['gds list --jq \'select(.stat == "QUARANTINED") | .id\'', /list's records have no stat/],
    ["gds status t_1 --json | jq -c '{state, jobs: [.activeJobs[].status]}'", /^$/],
    ['gds autocomplete bash', /^$/],
    ['gds --profile prod env promote t_42 --to production --bundle-in t_42.bundle.json', /^$/],
    ['gds list --help | less', /^$/],
  ])('finds what is wrong with %s', async (line, problem) => {
    const problems = await lineProblems(line, { aliases: {} });
    if (problem.source === '^$') expect(problems).toEqual([]);
    else expect(problems.join('\n')).toMatch(problem);
  });

  it('an alias set by one example runs in the next', async () => {
    const session: Session = { aliases: {} };
    expect(await lineProblems("gds alias set why 'status $1 --json'", session)).toEqual([]);
    expect(await lineProblems('gds why tbl_42', session)).toEqual([]);
    expect((await lineProblems('gds why', session)).join('\n')).toMatch(/needs 1 argument/);
  });

  it.each([
    ['gds list [--state S]', []],
    ['gds --profile prod env promote <tableId> --to <env> …', []],
    ['gds quarantine list | open <tableId> [-o file] [--force]', []],
    ['gds gate get|apply|dif …', [/no such gds command/]],
    [
      'gds versions list <tableId> | restore <tableId> --too <version>',
      [/gds versions restore has no --too/],
    ],
    ['gds tokens issue --name <n> (--table <id>:read … | --scop x …)', [/has no --scop/]],
  ] as const)('usage line %s', (line, expected) => {
    expect(isUsage(line)).toBe(true);
    const problems = usageProblems(line);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((pattern, i) => expect(problems[i]).toMatch(pattern));
  });

  it('takes the gds lines of code blocks: prompted ones where a block has prompts, YAML steps', () => {
    const markdown = [
      'gds lsit  (prose, not in a block)',
      '```',
      'USAGE',
      '  $ gds list [flags]',
      'DESCRIPTION',
      '  gds list shows the tables (prose in a help page)',
      '```',
      '```yaml',
      '    - gds plan --dbt .',
      '      run: gds apply --dbt . --yes',
      '```',
      '```sh',
      'gds whoami   # a comment',
      'echo not gds',
      '```',
    ].join('\n');
    expect(gdsLinesOf(markdown)).toEqual([
      { line: 'gds list [flags]', number: 4 },
      { line: 'gds plan --dbt .', number: 9 },
      { line: 'gds apply --dbt . --yes', number: 10 },
      { line: 'gds whoami   # a comment', number: 13 },
    ]);
  });
});
