// Which command lines gds runs without oclif (src/cli/command-route.ts directRun): each one it takes must be
// read as oclif's parser reads it for the real `gate validate` command (the same file, --json or not, no
// table id), and every other line must be left to oclif, which parses and refuses as always.
import { Parser } from '@oclif/core';
import { describe, expect, it } from 'vitest';
import { directRun } from '../../src/cli/command-route.js';
import GateValidate from '../../src/commands/gate/validate.js';

const taken: string[][] = [
  ['gate', 'validate', '-f', 'gate1.yml'],
  ['gate', 'validate', '--file', 'gate1.yml'],
  ['gate', 'validate', '--file=gate1.yml'],
  ['gate', 'validate', '-f', '-'],
  ['gate', 'validate', '-f', 'gate1.yml', '--json'],
  ['gate', 'validate', '--json', '-f', 'dir/with space.yml'],
  ['gate', 'validate', '--file=a=b.yml', '--json'],
];

const left: Array<[string, string[], NodeJS.ProcessEnv?]> = [
  ['no file', ['gate', 'validate']],
  ['a table id', ['gate', 'validate', 't_42', '-f', 'gate1.yml']],
  ['--env', ['gate', 'validate', '-f', 'gate1.yml', '--env', 'dev']],
  ['-f without its value', ['gate', 'validate', '-f']],
  ['a value that looks like a flag', ['gate', 'validate', '-f', '--json']],
  ['an empty value', ['gate', 'validate', '-f', '']],
  ['--file= with nothing', ['gate', 'validate', '--file=']],
  ['two files', ['gate', 'validate', '-f', 'a.yml', '-f', 'b.yml']],
  ['--json twice', ['gate', 'validate', '--json', '--json', '-f', 'a.yml']],
  ['a --json field list', ['gate', 'validate', '-f', 'a.yml', '--json', 'valid,file']],
  ['--jq', ['gate', 'validate', '-f', 'a.yml', '--jq', '.valid']],
  ['a help flag', ['gate', 'validate', '-f', 'a.yml', '--help']],
  ['-h', ['gate', 'validate', '-h']],
  ['the value joined to -f', ['gate', 'validate', '-fgate1.yml']],
  ['--', ['gate', 'validate', '-f', 'a.yml', '--']],
  ['--token', ['gate', 'validate', '-f', 'a.yml', '--token', 'cli_x']],
  ['another command', ['gate', 'diff', '-f', 'a.yml', '--against', 'b.yml']],
  ['GDS_DIRECT=0', ['gate', 'validate', '-f', 'a.yml'], { GDS_DIRECT: '0' }],
  ['DEBUG (oclif’s debug log)', ['gate', 'validate', '-f', 'a.yml'], { DEBUG: 'oclif*' }],
];

describe('a direct run', () => {
  it.each(taken.map((line) => [line.join(' '), line]))('%s: read as oclif reads it', async (_, line) => {
    const run = directRun(line, {});
    const parsed = await Parser.parse(line.slice(2), {
      flags: { ...GateValidate.baseFlags, ...GateValidate.flags },
      args: GateValidate.args,
      strict: true,
    });
    expect(run).toEqual({ id: 'gate:validate', file: parsed.flags.file });
    expect(parsed.args.tableId).toBeUndefined();
    expect(parsed.flags.json === true).toBe(line.includes('--json'));
  });

  it.each(left)('leaves to oclif: %s', (_, line, env = {}) => {
    expect(directRun(line, env)).toBeUndefined();
  });
});
