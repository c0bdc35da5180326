// What the executable's V8 code caches are trained on, and so which commands get a bundle of their own:
// the routing table of both entries (command-route.ts CommandBundles).
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Interfaces } from '@oclif/core';
import { commandBundleRoute } from '../../src/cli/command-route.js';
import type { CommandBundles } from '../../src/cli/command-route.js';
import { routesOf } from '../sea/command-bundles.js';
import { loadersById } from './esbuild-plugins.js';
import { exec, node, readJson, root } from './tools.js';

/**
 * V8 options of every run of the executable (the SEA's execArgv), and of the runs that train its code caches:
 * V8 refuses a cache made under other flags. A young generation of at most 2 x 8 MiB: with V8's default
 * (16 MiB a semi-space) `records import` of 1,000,000 rows peaked at 147-153 MiB, with 8 at 103 MiB (89
 * at 10,000 rows): a batch that lives across scavenges made V8 grow the young generation over the run.
 * And of at least 2 x 2 MiB from the start: `list --json` allocates a little over V8's first 1 MiB, and its
 * one scavenge cost 3-4 ms of CPU (docs/bench.md); the peak is no higher (nothing is collected either way).
 */
export const executableNodeOptions = ['--max-semi-space-size=8', '--min-semi-space-size=2'];

/**
 * What the code caches are trained on. Two caches, as V8 deserialises a whole cache at every start
 * (boot.ts picks one by the arguments, bundle-script.ts): help's (the root, each topic and each command's
 * --help; the pages printed are kept for precomputed-help.ts), and the runs' (a flag error, a --json run,
 * a network command up to its request, and the commands of the start-up budget). A profile, not a list of
 * commands: a command not run here works the same, its own code compiles on first call.
 */
export async function trainCodeCache(
  trainer: string,
  bundle: string,
  files: { run: string; help: string; helpPages: string },
  ownBundles: ReadonlyArray<{ file: string; caches: ReadonlyArray<{ file: string; runs: string[][] }> }>,
): Promise<void> {
  const { COMMANDS } = await import('../../src/commands/index.js');
  const scratch = await mkdtemp(join(tmpdir(), 'gds-train-'));
  try {
    const gate1 = 'patternChecks:\n  - {name: code, column: code, regex: "^[A-Z]+$", severity: WARN}\n';
    await writeFile(join(scratch, 'a.yml'), gate1);
    await writeFile(join(scratch, 'b.yml'), gate1.replace('WARN', 'HARD_FAIL'));
    await writeFile(
      join(scratch, 'v.sql'),
      'CREATE VIEW analytics.v AS SELECT id, amount::numeric AS amount FROM t',
    );
    const ids = Object.keys(COMMANDS);
    const topics = new Set(
      ids.flatMap((id) =>
        id
          .split(':')
          .slice(0, -1)
          .map((_, i, words) => words.slice(0, i + 1).join(':')),
      ),
    );
    const helpRuns = [
      ['--help'],
      ['-h'],
      ...[...topics].filter((topic) => !ids.includes(topic)).map((topic) => [...topic.split(':'), '--help']),
      ...ids.map((id) => [...id.split(':'), '--help']),
    ];
    const options = {
      quiet: true,
      cwd: scratch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch },
    };
    const train = (...args: string[]) => exec(node, [...executableNodeOptions, trainer, ...args], options);
    await train(bundle, files.help, JSON.stringify(helpRuns), files.helpPages);
    await train(bundle, files.run, JSON.stringify(trainingRuns));
    // Each command's own bundle, on the runs of that command (its --jq runs apart, cacheVariant).
    await Promise.all(
      ownBundles.flatMap(({ file, caches }) =>
        caches.map(({ file: cache, runs }) => train(file, cache, JSON.stringify(runs))),
      ),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const written = [
    files.run,
    files.help,
    files.helpPages,
    ...ownBundles.flatMap(({ caches }) => caches.map(({ file }) => file)),
  ];
  if (!written.every((file) => existsSync(file)))
    throw new Error('The code cache training wrote no cache or no help pages.');
}

/**
 * The runs the runs' code cache is trained on (run from a folder holding a.yml, b.yml and v.sql): a flag
 * error, a --json run, a network command up to its request, and the commands of the start-up budget. Each
 * command named here also gets a bundle of its own (ownBundleCommands), trained on its own runs.
 */
export const trainingRuns: string[][] = [
  ['gate', 'validate', '-f', 'a.yml'],
  ['gate', 'validate', '-f', 'a.yml', '--json'],
  // gate validate with a table id: a network command's path.
  ['gate', 'validate', 't_1', '-f', 'a.yml', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  ['gate', 'diff', '-f', 'b.yml', '--against', 'a.yml', '--semantic'],
  ['gate', 'diff', '--nope'],
  ['gate', 'diff', '--nope', '--json'],
  // A network command's path (credentials, client, transport) up to a refused connection.
  ['list', '--json', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // --jq with a filter outside gds's own subset: jq-wasm's glue in list's cache (7 ms of CPU per run).
  ['list', '--jq', '[.id, .name] | @tsv', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // push parses the view (PostgreSQL's grammar, from node_modules here) before its refused request.
  ['push', 'v.sql', '--json', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // A dry run asks the service, unreachable here: the view read, its diff and YAML, and the warning.
  ['push', 'v.sql', '--dry-run', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // With one, up to the refused request for the connectors.
  [
    'push',
    'v.sql',
    '--dry-run',
    '--connector',
    'con_1',
    '--token',
    'cli_training_only',
    '--base',
    'http://127.0.0.1:9',
  ],
];

let routesForTraining: CommandBundles['routes'] = {};

export function routeOf(argv: readonly string[]): { id: string } | undefined {
  const routes = routesForTraining;
  return commandBundleRoute(argv, { routes, own: Object.keys(routes), helpFlags: [] });
}

function commandRoutes(manifest: Interfaces.Manifest): CommandBundles['routes'] {
  routesForTraining = routesOf(manifest.commands);
  return routesForTraining;
}

/**
 * The one routing table of both entries (command-route.ts CommandBundles): every command's routing fields,
 * the commands with a bundle of their own, oclif's help flags.
 */
export function commandBundleTable(manifest: Interfaces.Manifest): CommandBundles {
  const routes = commandRoutes(manifest);
  const pjson = readJson(join(root, 'package.json')) as Interfaces.PJSON;
  const helpFlags = [...new Set(['--help', ...(pjson.oclif.additionalHelpFlags ?? [])])];
  return { routes, own: ownBundleCommands(routes), helpFlags };
}

/**
 * gds's commands the runs' training goes through: each gets a bundle of its own (against the whole bundle,
 * paired: list 10 ms of CPU and 5.7 MiB, gate diff 13 ms and 4 MiB, gate validate 9 ms and 4 MiB; what
 * keeps `gate validate` and `list` within 2x `node -e 0` and 60 MiB; push, trained on its dry runs, 9 ms and
 * 3.6 MiB).
 */
function ownBundleCommands(routes: CommandBundles['routes']): string[] {
  const { COMMAND_LOADERS } = loadersById();
  const ids = new Set<string>();
  for (const argv of trainingRuns) {
    const route = commandBundleRoute(argv, { routes, own: Object.keys(routes), helpFlags: [] });
    if (route === undefined)
      throw new Error(`build:binary: the training run \`${argv.join(' ')}\` names no command`);
    if (Object.hasOwn(COMMAND_LOADERS, route.id) && route.id !== '__complete') ids.add(route.id);
  }
  return [...ids];
}
