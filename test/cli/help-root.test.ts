// gds's root help grouped by purpose as gh's is (at most 55 lines at 80 columns, every command and topic
// once, a topic's line naming each of its subcommands), `gds help reference` (every command's page), and a
// help subject that names nothing: gds's own did-you-mean, exit 2, never oclif's `records:lst`.
import { format } from 'node:util';
import { Config } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import GdsHelp, { ROOT_GROUPS } from '../../src/cli/help.js';
import { CliError } from '../../src/core/errors.js';
import { ensureBuilt, repoRoot, runCli } from './helpers/cli-process.js';

let config: Interfaces.Config;
/** The visible commands' ids as loaded: oclif's help rewrites the id of each command it renders ("a:b" → "a b"). */
let visibleIds: string[];

beforeAll(async () => {
  await ensureBuilt();
  config = await Config.load(repoRoot);
  visibleIds = config.commands.filter((command) => command.hidden !== true).map((command) => command.id);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** What GdsHelp prints for `gds help …argv`, in this process, as piped (80 columns, no colour). */
async function help(argv: string[]): Promise<string> {
  let printed = '';
  // oclif's help writes through console.log
  vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    printed += `${format(...args)}\n`;
  });
  await new GdsHelp(config, { stripAnsi: true, maxWidth: 80 }).showHelp(argv);
  vi.restoreAllMocks();
  return printed;
}

describe('gds --help', () => {
  it('is at most 55 lines, none wider than 80 columns, grouped by purpose', async () => {
    const page = await help([]);
    const lines = page.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(55);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).toBe('Work with the Governed Data Service from the command line.');
    for (const header of [
      'CORE COMMANDS',
      'TABLE COMMANDS',
      'ADDITIONAL COMMANDS',
      'HELP TOPICS',
      'EXAMPLES',
    ])
      expect(lines).toContain(header);
  });

  it('lists every command and topic of the first level once (help aside)', async () => {
    const page = await help([]);
    const firstWords = new Set(visibleIds.map((id) => id.split(':')[0] ?? ''));
    firstWords.delete('help');
    const listed = ROOT_GROUPS.flatMap(({ entries }) => entries.map(([name]) => name));
    expect([...listed].sort()).toEqual([...firstWords].sort());
    for (const name of listed)
      expect(page.match(new RegExp(`^ {2}${name} +\\S`, 'gm'))?.length, name).toBe(1);
  });

  it("names each of a topic's subcommands on its line", () => {
    for (const { entries } of ROOT_GROUPS) {
      for (const [name, text] of entries) {
        const subcommands = visibleIds
          .map((id) => id.split(':'))
          .filter((words) => words[0] === name && words.length > 1)
          .map((words) => words[1] ?? '');
        for (const word of subcommands) expect(text, `${name} ${word}`).toMatch(new RegExp(`\\b${word}\\b`));
      }
    }
  });

  it('lists the help topics, reference among them, and examples', async () => {
    const page = await help([]);
    const topics = /\nHELP TOPICS\n((?: {2}.*\n)+)/.exec(page)?.[1] ?? '';
    for (const topic of ['environment', 'exit-codes', 'formatting', 'global-flags', 'reference'])
      expect(topics).toMatch(new RegExp(`^ {2}${topic} +\\S`, 'm'));
    const examples = /\nEXAMPLES\n((?: {2}.*\n)+)/.exec(page)?.[1] ?? '';
    expect(examples.split('\n').filter((line) => line.startsWith('  $ gds ')).length).toBe(3);
  });
});

describe('gds help reference', () => {
  it("prints every visible command's page under its usage line", async () => {
    const page = await help(['reference']);
    const headings = [...page.matchAll(/^# gds ([a-z -]+?)(?: [A-Z[].*)?$/gm)].map((m) => m[1] ?? '');
    expect(headings.sort()).toEqual(visibleIds.map((id) => id.replaceAll(':', ' ')).sort());
    expect(page).toContain('USAGE\n  $ gds records export TABLE [flags]');
    expect(page).toContain('JSON FIELDS');
  });
});

describe('a help subject that names nothing', () => {
  it('is a usage error naming the command meant, in this process', async () => {
    const error = await help(['records', 'lst']).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toBe('Unknown command: records lst.');
    expect((error as CliError).suggestion).toContain('Did you mean `gds records list`?');
  });

  it.each([
    [['help', 'records', 'lst'], 'Did you mean `gds records list`?'],
    [['records', 'lst', '--help'], 'Did you mean `gds records list`?'],
    [['help', 'enviroment'], 'Did you mean `gds help environment`?'],
  ])('gds %j: exit 2, the did-you-mean on stderr, nothing on stdout', async (args, meant) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(meant);
    expect(r.stderr).not.toContain('records:lst');
  });
});

describe('a topic page (gds tokens --help)', () => {
  it("names each of the topic's subcommands in its summary", () => {
    const topics = config.pjson.oclif.topics ?? {};
    for (const [name, topic] of Object.entries(topics)) {
      const subcommands = visibleIds
        .map((id) => id.split(':'))
        .filter((words) => words[0] === name && words.length > 1)
        .map((words) => words[1] ?? '');
      for (const word of subcommands)
        expect(topic.description, `${name} ${word}`).toMatch(new RegExp(`\\b${word}\\b`));
    }
  });
});
