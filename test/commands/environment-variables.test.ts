// A short, deliberate list of environment variables steers gds. Every command's flags (the
// command map, global flags included) are checked against it: only --profile, --json and --interval read
// one, and no flag that targets, replaces, confirms or redirects does. Then the variables that used to
// retarget a command (GDS_REPLACE, GDS_OUTPUT, GDS_YES, GDS_FORCE, GDS_TO, …) are set and parsed: ignored.
import { describe, expect, it } from 'vitest';
import {
  ENVIRONMENT_VARIABLES,
  environmentVariableNames,
  FLAG_VARIABLES,
} from '../../src/cli/environment.js';
import { COMMANDS } from '../../src/commands/index.js';
import { flagsOf, setEnv } from './helpers/oclif-parse.js';

interface FlagDefinition {
  env?: string;
}

function flagsOfCommand(id: string): Array<[string, FlagDefinition]> {
  const command = COMMANDS[id] as unknown as {
    flags?: Record<string, FlagDefinition>;
    baseFlags?: Record<string, FlagDefinition>;
  };
  return Object.entries({ ...command.baseFlags, ...command.flags });
}

const steering = ['replace', 'to', 'yes', 'force', 'output', 'file', 'input', 'table', 'env', 'method'];

describe('environment variables of flags', () => {
  it('covers the whole command map', () => {
    expect(Object.keys(COMMANDS).length).toBeGreaterThan(40);
  });

  it.each(Object.keys(COMMANDS))('gds %s: a flag reads a variable only from the documented list', (id) => {
    const documented = new Set(environmentVariableNames());
    for (const [name, flag] of flagsOfCommand(id)) {
      if (flag.env === undefined) continue;
      expect({ flag: name, env: flag.env }).toEqual({ flag: name, env: FLAG_VARIABLES[name] });
      expect(documented.has(flag.env)).toBe(true);
    }
  });

  it.each(Object.keys(COMMANDS))(
    'gds %s: no flag that targets, replaces, confirms or redirects reads one',
    (id) => {
      for (const [name, flag] of flagsOfCommand(id)) {
        if (steering.includes(name))
          expect({ flag: name, env: flag.env }).toEqual({ flag: name, env: undefined });
      }
    },
  );

  it('the list is the deliberate one, each variable once', () => {
    const names = environmentVariableNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(
      expect.arrayContaining([
        'SERVICE_TOKEN',
        'SERVICE_API_URL',
        'GDS_PROFILE',
        'GDS_JSON',
        'GDS_CONTENT_TYPE',
        'GDS_CONFIG_DIR',
        'GDS_SECRET_STORAGE',
        'GDS_KEYCHAIN_TIMEOUT_MS',
        'GDS_CLIENT_ID',
        'GDS_DEBUG',
        'GDS_BROWSER',
        'BROWSER',
        'GDS_PROMPT_DISABLED',
        'GDS_INTERVAL',
        'NO_COLOR',
        'FORCE_COLOR',
        'CLICOLOR_FORCE',
        'GDS_PAGER',
        'PAGER',
        'HTTPS_PROXY',
        'HTTP_PROXY',
        'NO_PROXY',
      ]),
    );
    expect(names).not.toContain('GDS_LIMIT');
    for (const variable of ENVIRONMENT_VARIABLES) expect(variable.description.length).toBeGreaterThan(10);
  });
});

describe('variables that used to retarget a command are ignored', () => {
  const cases: Array<[string, string[], Record<string, string>]> = [
    [
      'push',
      ['categorydim.sql'],
      { GDS_REPLACE: 'tbl_1', GDS_SOURCE: 'a.b', GDS_CONNECTOR: 'c', GDS_WAIT: '1' },
    ],
    ['gate:get', ['tbl_1'], { GDS_OUTPUT: 'x', GDS_FORCE: '1' }],
    ['delete', ['tbl_1'], { GDS_YES: 'true' }],
    [
      'env:promote',
      ['tbl_1', '--to', 'staging'],
      { GDS_FORCE: '1', GDS_REPLACE: 'tbl_2', GDS_DEST_PROFILE: 'p' },
    ],
    ['versions:restore', ['tbl_1', '--to', '2', '--reason', 'r'], { GDS_ENV: 'production' }],
    ['quarantine:open', ['tbl_1'], { GDS_OUTPUT: 'x.sql', GDS_FORCE: '1' }],
    ['list', [], { GDS_STATE: 'CERTIFIED', GDS_LIMIT: '2' }],
  ];

  it.each(cases)('gds %s %j with %j', async (id, argv, variables) => {
    const command = COMMANDS[id];
    if (command === undefined) throw new Error(`no command ${id}`);
    const without = await flagsOf(command as never, argv);
    setEnv(variables);
    expect(await flagsOf(command as never, argv)).toEqual(without);
  });
});
