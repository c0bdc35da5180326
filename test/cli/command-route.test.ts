// The route of a command line (src/cli/command-route.ts, by which both entries pick a command's bundle) against oclif's own reading of the same command
// lines: the command id and the arguments handed to the command must be the ones `normalizeArgv` gives on
// gds's real config, and every line oclif would not run as a command (help, version, topics, unknown
// words, aliases) must be left to oclif.
import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core';
import { normalizeArgv } from '@oclif/core/help';
import { beforeAll, describe, expect, it } from 'vitest';
import { commandBundleRoute, commandRoute } from '../../src/cli/command-route.js';
import type { RoutedCommand } from '../../src/cli/command-route.js';
import { globalFlagsAfterCommand } from '../../src/cli/main.js';
import { routesOf } from '../../scripts/sea/command-bundles.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
let config: Config;
let commands: Record<string, RoutedCommand>;
const helpFlags = ['-h', '--help'];

beforeAll(async () => {
  config = await Config.load({ root, devPlugins: false, userPlugins: false });
  commands = Object.fromEntries(config.commands.map((command) => [command.id, command]));
});

const lines: string[][] = [
  ['list', '--json'],
  ['list'],
  ['gate', 'validate', '-f', 'gate1.yml'],
  ['gate', 'validate', 't_42', '-f', 'gate1.yml', '--json'],
  ['gate', 'diff', '-f', 'a.yml', '--against', 'b.yml', '--semantic'],
  ['push', 'view.sql', '--dry-run', '--connector', 'c_1'],
  ['records', 'list', 'crm_contacts', '--limit', '10'],
  ['records', 'get', 'tbl_42', 'rec_1'],
  ['auth', 'status', '--offline'],
  ['gate:validate', '-f', 'x.yml'],
  ['api', 'GET', '/api/tables'],
  ['api', 'gate', 'validate'],
  ['env', 'promote', 't_1', '--to', 'production'],
  ['delete', 'list'],
  ['certify', 'gate', 'x'],
  ['status', 'records', 'list'],
  ['list', 'extra', 'words'],
  ['tokens', 'issue', '--scope', 'read'],
  ['completion', 'zsh'],
  ['__complete', 'line', '--', 'list', '--help'],
  ['autocomplete', 'bash'],
  ['gate', '--json'],
  ['gate', 'nope', '--json'],
  ['gate'],
  ['nope'],
  ['nope', 'more'],
  ['list=1'],
  ['--json', 'list'],
  ['', 'list'],
  ['gate', '', 'validate'],
];

describe('the fast dispatcher routes a command line as oclif does', () => {
  it.each(lines.map((line) => [line.join(' '), line]))('%s', (_, line) => {
    const route = commandRoute(line, commands, helpFlags);
    const [id, ...rest] = normalizeArgv(config, [...line]);
    if (route === undefined) {
      // left to oclif: a line oclif does not run as a command (or runs through an alias)
      expect(id !== undefined && Object.hasOwn(commands, id) && config.findCommand(id)?.id === id).toBe(
        false,
      );
    } else {
      expect(route).toEqual({ id, argv: rest });
      expect(config.findCommand(route.id)?.id).toBe(route.id);
    }
  });

  it('leaves help, version and an empty line to oclif', () => {
    for (const line of [[], ['--version'], ['list', '--help'], ['gate', 'validate', '-h'], ['--help']]) {
      expect(commandRoute(line, commands, helpFlags)).toBeUndefined();
    }
    // after `--` a help flag is an argument, as oclif reads it
    expect(commandRoute(['api', 'GET', '--', '--help'], commands, helpFlags)).toEqual({
      id: 'api',
      argv: ['GET', '--', '--help'],
    });
  });
});

// Both entries (bin/run.js, dist/gds's boot script) pick a command's own bundle from one table's routing fields
// alone (routesOf), before oclif loads: the command oclif then runs, and no bundle where it runs none.
describe('the entries pick the bundle of the command oclif runs', () => {
  it.each(
    [...lines, ['--profile', 'p', 'list', '--json'], ['--json', 'gate', 'validate', '-f', 'x.yml']].map(
      (line) => [line.join(' '), line],
    ),
  )('%s', (_, line) => {
    const routes = routesOf(commands);
    const main = commandRoute(globalFlagsAfterCommand(line), commands, helpFlags);
    expect(commandBundleRoute(line, { routes, own: Object.keys(routes), helpFlags })).toEqual(main);
    expect(commandBundleRoute(line, { routes, own: ['gate:validate'], helpFlags })?.id).toBe(
      main?.id === 'gate:validate' ? 'gate:validate' : undefined,
    );
  });
});
