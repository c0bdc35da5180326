// How gds reads argv before oclif does: global flags given before the command, and `--json a,b`.
import { describe, expect, it } from 'vitest';
import { takeJsonFields } from '../../src/cli/base-command.js';
import { globalFlagsAfterCommand } from '../../src/cli/main.js';

describe('global flags before the command', () => {
  it('move behind the command words, values and all', () => {
    expect(
      globalFlagsAfterCommand(['--profile', 'prod', 'env', 'promote', 't_1', '--to', 'production']),
    ).toEqual(['env', 'promote', 't_1', '--to', 'production', '--profile', 'prod']);
    expect(globalFlagsAfterCommand(['--token=cli_x', '--json', 'list'])).toEqual([
      'list',
      '--token=cli_x',
      '--json',
    ]);
    expect(globalFlagsAfterCommand(['--json', 'id,name', '--base', 'http://x', 'list', '-L', '2'])).toEqual([
      'list',
      '-L',
      '2',
      '--json',
      'id,name',
      '--base',
      'http://x',
    ]);
  });

  it('stay before a `--`, and leave a line that starts with the command alone', () => {
    expect(globalFlagsAfterCommand(['--profile', 'p', 'api', 'GET', '--', '--profile'])).toEqual([
      'api',
      'GET',
      '--profile',
      'p',
      '--',
      '--profile',
    ]);
    const plain = ['gate', 'run', 't_1', '--profile', 'p'];
    expect(globalFlagsAfterCommand(plain)).toEqual(plain);
    expect(globalFlagsAfterCommand(['--help'])).toEqual(['--help']);
  });
});

describe('--json with a field list', () => {
  const status = {
    args: { tableId: { required: true } },
    flags: { watch: { type: 'boolean' } },
    baseFlags: { profile: { type: 'option' }, json: { type: 'boolean' } },
  };
  const list = { args: {}, flags: { state: { type: 'option' }, limit: { type: 'option', char: 'L' } } };

  it('takes a comma list, or --json=list, as fields', () => {
    expect(takeJsonFields(['--json', 'id,name'], list)).toEqual({ argv: ['--json'], fields: ['id', 'name'] });
    expect(takeJsonFields(['-L', '2', '--json=id'], list)).toEqual({
      argv: ['-L', '2', '--json'],
      fields: ['id'],
    });
  });

  it('takes a single word as a field only when the command does not need it as an argument', () => {
    expect(takeJsonFields(['--json', 'state'], list)).toEqual({ argv: ['--json'], fields: ['state'] });
    expect(takeJsonFields(['t_1', '--json', 'state'], status)).toEqual({
      argv: ['t_1', '--json'],
      fields: ['state'],
    });
    expect(takeJsonFields(['--json', 'tbl1'], status)).toEqual({ argv: ['--json', 'tbl1'] });
    expect(takeJsonFields(['--json', 't_1'], status)).toEqual({ argv: ['--json', 't_1'] });
    expect(takeJsonFields(['--profile', 'p', '--json', 'state'], status)).toEqual({
      argv: ['--profile', 'p', '--json', 'state'],
    });
  });

  it('leaves a plain --json and anything after `--` alone', () => {
    expect(takeJsonFields(['--json'], list)).toEqual({ argv: ['--json'] });
    expect(takeJsonFields(['--', '--json', 'a,b'], list)).toEqual({ argv: ['--', '--json', 'a,b'] });
  });
});
