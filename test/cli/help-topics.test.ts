// The help topics gh has (`gds help environment`, `exit-codes`, `formatting`,
// `global-flags`), generated from the code that decides, and `gds version` printing the version. In the test
// process (runInProcess), but the help on a terminal (node bin/run.js over dist/ under a pseudo-terminal).
import { beforeAll, describe, expect, it } from 'vitest';
import { environmentVariableNames } from '../../src/cli/environment.js';
import { ExitCode } from '../../src/core/errors.js';
import { JSON_FIELDS, VARYING_JSON_FIELDS } from '../../src/cli/json-fields.js';
import { COMPLETION_SETUP } from '../../src/cli/completion-scripts.js';
import { cliCommand, ensureBuilt, runInTerminal } from './helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

beforeAll(async () => {
  await ensureBuilt();
});

describe('gds help <topic>', () => {
  it('environment: every variable of the list, and none of the retired GDS_<FLAG> ones', async () => {
    const r = await runInProcess(['help', 'environment']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    for (const name of environmentVariableNames()) expect(r.stdout).toContain(name);
    for (const retired of ['GDS_LIMIT', 'GDS_REPLACE', 'GDS_YES', 'GDS_OUTPUT']) {
      expect(r.stdout).not.toContain(retired);
    }
  });

  it('exit-codes: each code gds exits with, one line each', async () => {
    const r = await runInProcess(['help', 'exit-codes']);
    expect(r.code).toBe(0);
    for (const code of Object.values(ExitCode)) expect(r.stdout).toMatch(new RegExp(`^  ${code} +\\S`, 'm'));
  });

  it('formatting: NDJSON, --json fields and per-record --jq with the .[] advice', async () => {
    const r = await runInProcess(['help', 'formatting']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NDJSON');
    expect(r.stdout).toContain('--json id,name');
    expect(r.stdout).toContain("not '.[].name'");
    expect(r.stdout).toContain("gds list --template '{{id}} {{name}} ({{state}})'");
  });

  it('global-flags: the global flags, once', async () => {
    const r = await runInProcess(['help', 'global-flags']);
    expect(r.code).toBe(0);
    for (const flag of ['--token', '--base', '--profile', '--json', '-q, --jq', '--max-retry-after']) {
      expect(r.stdout.split(`  ${flag}`).length - 1).toBe(1);
    }
  });
});

describe('gds version', () => {
  it('prints the version line, as gds --version does', async () => {
    const [word, flag] = await Promise.all([runInProcess(['version']), runInProcess(['--version'])]);
    expect(word).toMatchObject({ code: 0, stderr: '' });
    expect(word.stdout).toMatch(/^gds\/\d+\.\d+\.\d+ /);
    expect(word.stdout).toBe(flag.stdout);
  });
});

describe('command help, as gh has it', () => {
  it('the summary once, a short usage line, and the tagline written for users', async () => {
    const r = await runInProcess(['gate', 'apply', '--help']);
    expect(r.code).toBe(0);
    const summary = 'Validate a gate1.yml locally, then store it as the next version of the table.';
    expect(r.stdout.split(summary).length - 1).toBe(1);
    expect(r.stdout).toMatch(/USAGE\n {2}\$ gds gate apply TABLEID \[flags\]\n/);
    const root = await runInProcess(['--help']);
    expect(root.stdout.split('\n')[0]).toBe('Work with the Governed Data Service from the command line.');
    expect(root.stdout).not.toContain('reference server');
  });
});

describe('help like gh', () => {
  it('the root page lists the help topics, the global flags topic, and examples', async () => {
    const r = await runInProcess(['--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const topics = /\nHELP TOPICS\n((?: {2}.*\n)+)/.exec(r.stdout)?.[1] ?? '';
    for (const topic of ['environment', 'exit-codes', 'formatting', 'global-flags'])
      expect(topics).toMatch(new RegExp(`^ {2}${topic} +\\S`, 'm'));
    const examples = /\nEXAMPLES\n((?: {2}.*\n)+)/.exec(r.stdout)?.[1] ?? '';
    expect(examples.split('\n').filter((line) => line.startsWith('  $ gds ')).length).toBeGreaterThanOrEqual(
      3,
    );
  });

  it.each(Object.entries(JSON_FIELDS))('gds %s --help lists its JSON FIELDS', async (id, fields) => {
    const r = await runInProcess([...id.split(':'), '--help']);
    expect(r.code).toBe(0);
    const section = /\nJSON FIELDS\n((?: {2}.*\n)+)/.exec(r.stdout)?.[1] ?? '';
    expect(section.replace(/\s+/g, ' ').trim()).toBe(fields.join(', '));
  });

  it.each([
    ['list', 'state'],
    ['tokens issue', 'scope'],
    ['push', 'dialect'],
  ])(
    'gds %s --help at 80 columns never splits an allowed value of --%s over two lines',
    async (command, flag) => {
      const r = await runInProcess([...command.split(' '), '--help'], { env: { COLUMNS: '80' } });
      expect(r.code).toBe(0);
      const { COMMANDS } = await import('../../src/commands/index.js');
      const options = (
        COMMANDS[command.replace(' ', ':')]?.flags?.[flag] as { options?: string[] } | undefined
      )?.options;
      expect(options?.length).toBeGreaterThan(1);
      for (const value of options ?? [])
        expect(r.stdout).toMatch(new RegExp(`(?:<options: |\\| |^ +)${value}(?: \\||>| ?$)`, 'm'));
    },
  );

  it('gds completion --help says how to set up each shell, before what it completes', async () => {
    const r = await runInProcess(['completion', '--help']);
    expect(r.code).toBe(0);
    const description = /\nDESCRIPTION\n((?: {2}.*\n|\n)+)/.exec(r.stdout)?.[1] ?? '';
    for (const line of Object.values(COMPLETION_SETUP)) expect(description).toContain(line.trim());
    expect(description).toContain('It completes commands, flags');
    for (const shell of ['bash', 'zsh', 'fish', 'powershell'])
      expect(r.stdout).toMatch(new RegExp(`\\$ gds completion ${shell}`));
  });

  it.each(Object.entries(VARYING_JSON_FIELDS))(
    'gds %s --help says what its records hold',
    async (id, text) => {
      const r = await runInProcess([...id.split(':'), '--help']);
      expect(r.code).toBe(0);
      const section = /\nJSON FIELDS\n((?: {2}.*\n)+)/.exec(r.stdout)?.[1] ?? '';
      expect(section.replace(/\s+/g, ' ').trim()).toBe(text);
    },
  );

  it('--json with a field the records do not have is exit 2 before anything is sent, naming the fields', async () => {
    // Nothing listens on port 9: a request would be exit 9.
    const r = await runInProcess(['list', '--json', 'id,nmae'], {
      env: { SERVICE_API_URL: 'http://127.0.0.1:9', SERVICE_TOKEN: 'cli_x' },
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Unknown JSON field: nmae.');
    expect(r.stderr).toContain(`Available fields: ${JSON_FIELDS.list?.join(', ')}.`);
  });

  it('on a terminal too, the global flags are one line', async () => {
    const { result } = runInTerminal(`${cliCommand(['list', '--help']).flat().join(' ')}`, {
      COLUMNS: '100',
    });
    const r = await result;
    const text = r.stdout.replace(/\r/g, '').replace(/\x1b\[[0-9;]*m/g, '');
    expect(text).toContain(
      'GLOBAL FLAGS\n  --base, -q/--jq, --json, --max-retry-after, --profile, -t/--template, --token\n',
    );
    expect(text).toContain('USAGE\n  $ gds list [flags]\n');
    expect(text).not.toContain('--token=<value>');
  });
});

describe('help of what takes a token', () => {
  it('every flag or argument that takes a token recommends stdin or a variable over the command line', async () => {
    const { COMMANDS } = await import('../../src/commands/index.js');
    const { BaseCommand } = await import('../../src/cli/base-command.js');
    const taking: Array<[string, string | undefined]> = [
      ['--token', (BaseCommand.baseFlags.token as { description?: string }).description],
    ];
    for (const [id, command] of Object.entries(COMMANDS)) {
      const inputs = { ...command.flags, ...command.args } as Record<string, { description?: string }>;
      for (const [name, input] of Object.entries(inputs)) {
        if (/(^|-)token$/.test(name) && name !== 'token') taking.push([`${id} --${name}`, input.description]);
        if (name === 'token' && command.args?.token !== undefined)
          taking.push([`${id} ${name}`, input.description]);
      }
    }
    expect(taking.map(([name]) => name)).toEqual(
      expect.arrayContaining(['--token', 'tokens:refresh --refresh-token', 'tokens:revoke token']),
    );
    for (const [name, description] of taking)
      expect(description, name).toMatch(/--token -|read it from stdin|SERVICE_TOKEN|NAME or id/);
    for (const [, description] of taking) expect(description).toContain('shell history');
  });
});
