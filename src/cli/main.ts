// The process entry behind bin/run.js and bin/dev.js: runs oclif and renders the errors that never reach
// a command (unknown command, a bad topic) the same way BaseCommand renders its own: exit 2 for usage,
// and under --json one `{"error":{…}}` line on stderr with nothing else printed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as OclifCore from '@oclif/core';
import type { Command, Interfaces } from '@oclif/core';
import { installUndiciFetch } from '../client/undici-fetch.js';
import { flagMeant, globalFlagsAfterCommand, mayBeAlias } from './command-route.js';
import { CliError, ExitCode } from '../core/errors.js';
import {
  commandSuggestion,
  flagFirstSuggestion,
  toCliError,
  unknownCommandWords,
  withExitCode,
} from './errors.js';
import { colorEnabled, forcedTerminal, jsonRequested, Output, shapingRequested } from './output.js';
import { startRunSecrets } from '../core/redact.js';
import { noteFailure } from './usage-ending.js';
import {
  redactError,
  redactStandardError,
  scrubProcessTitle,
  secretsFrom,
  stderrIsTerminal,
} from './secrets.js';
import { answeredVersion } from './version.js';
import { startUpdateCheck, type UpdateCheck } from './update-notice.js';
import { helpTopicPage } from './help-topics.js';
import { aliasCommandLine } from './aliases.js';

export { globalFlagsAfterCommand };

const notFoundPlugin = '@oclif/plugin-not-found';
const notFoundExit = 127;
const devCommands = {
  strategy: 'explicit',
  target: './src/commands/index.ts',
  identifier: 'COMMANDS',
} as const;

/** Each command's module by id, imported on first use (src/commands/loaders.ts). */
export type CommandLoaders = Readonly<Record<string, () => Promise<{ default: Command.Class }>>>;

export interface MainOptions {
  /** bin/dev.js: load the command map from src/ (TypeScript through tsx) instead of dist/. */
  development?: boolean;
  /**
   * The command loaders of the root plugin: when oclif has a manifest (the npm package's
   * oclif.manifest.json, or the one built into the single executable), running a command imports that
   * command alone instead of the whole command map.
   */
  commands?: CommandLoaders;
  /** The single executable: package.json comes inline and nothing is read from disk (see scripts/sea/). */
  bundle?: BundleOptions;
}

export interface BundleOptions {
  pjson: Interfaces.PJSON;
  /**
   * Runs once, only when oclif is needed (never for a bare `--version`): makes the bundled hooks loadable
   * and returns the root plugin, not loaded yet, whose manifest is the one built with the bundle, with
   * the loaders of every command it holds (gds's and the plugins'). It sets `pjson`'s hooks, which the
   * plugin reads when main() loads it.
   */
  prepare(oclif: typeof OclifCore): Promise<{ rootPlugin: Interfaces.Plugin; commands: CommandLoaders }>;
}

export async function main(givenArgv: string[], root: string, options: MainOptions = {}): Promise<void> {
  scrubProcessTitle();
  let argv = globalFlagsAfterCommand(givenArgv);
  let json = jsonRequested(argv);
  const pjson =
    options.bundle?.pjson ??
    (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Interfaces.PJSON);
  if (answeredVersion(argv, pjson)) return;
  // The completion scripts' words (`gds __complete line -- list --help`) are not a help request.
  const completing = argv[0] === '__complete';
  if (!completing && (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h'))) {
    const page = helpTopicPage(argv);
    if (page !== undefined) {
      process.stdout.write(page);
      return;
    }
  }
  startRunSecrets(secretsFrom(argv));
  redactStandardError(argv);
  const updateCheck = completing ? undefined : await updateCheckFor(pjson, argv, json);
  installUndiciFetch();
  colourOnlyOnTerminals();
  const oclif = await importOclif();
  const { flush, run, settings } = oclif;
  // Never map dist/ to src/ through tsconfig (oclif does when NODE_ENV is test or development): dev.js
  // names the TypeScript map itself, and production must run what was built.
  settings.enableAutoTranspile = false;
  if (options.development) pjson.oclif.commands = { ...devCommands };
  let commandIds: readonly string[] = [];
  try {
    const bundled = await options.bundle?.prepare(oclif);
    // One did-you-mean path, on a terminal or not: the error below names the command meant and never runs
    // it (plugin-not-found would offer to run its guess, and would default to yes).
    withoutCommandNotFoundHook(pjson);
    await bundled?.rootPlugin.load();
    const loadConfig = (ignoreManifest: boolean) =>
      oclif.Config.load({
        root,
        pjson,
        userPlugins: false,
        devPlugins: false,
        ignoreManifest,
        ...(bundled && { plugins: new Map([[bundled.rootPlugin.name, bundled.rootPlugin]]) }),
      });
    let config = await loadConfig(false);
    const rootPlugin = config.plugins.get(pjson.name);
    const commands = bundled?.commands ?? options.commands;
    // Without a manifest (a checkout) oclif has imported every command already, to make one.
    if (rootPlugin?.hasManifest === true && commands !== undefined) {
      if (bundled !== undefined || sameIds(rootPlugin.commandIDs, Object.keys(commands))) {
        importOnlyTheCommandRun(oclif, rootPlugin, commands);
      } else if (bundled === undefined) {
        // An oclif.manifest.json that lists other commands (left in a checkout, or from another
        // version) would route and document commands that are not there: do without it.
        config = await loadConfig(true);
      }
    }
    commandIds = config.commandIDs;
    // An alias (`gds alias set`), only for a first word that names no command or topic: the normal
    // command path loads and reads nothing more.
    if (mayBeAlias(argv[0], commandIds)) {
      const expanded = await aliasCommandLine(argv);
      if ('exitCode' in expanded) {
        process.exitCode = expanded.exitCode;
        return;
      }
      if ('aliases' in expanded) commandIds = [...commandIds, ...expanded.aliases];
      else {
        argv = expanded.argv;
        json = jsonRequested(argv);
      }
    }
    await run(argv, config);
    await flush();
  } catch (error) {
    process.exitCode = exitAfter(error, argv, json || shapingRequested(argv), commandIds);
  }
  const notice = await updateCheck?.finish();
  if (notice !== undefined) process.stderr.write(notice);
}

/**
 * The update check (update-notice.ts), started in the background when the package names a release source and
 * stderr is a terminal; its module is not even loaded otherwise.
 */
async function updateCheckFor(
  pjson: Interfaces.PJSON,
  argv: readonly string[],
  json: boolean,
): Promise<UpdateCheck | undefined> {
  const source = (pjson as { gds?: { updateUrl?: string | null } }).gds?.updateUrl ?? undefined;
  if (source === undefined || source === '' || !stderrIsTerminal()) return undefined;
  return startUpdateCheck({
    current: pjson.version,
    source,
    env: process.env,
    stderrIsTerminal: true,
    json: json || argv.some((word) => /^(?:--jq|-q|--template|-t)(?:=|$)/.test(word)),
  });
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.toSorted().join('\n') === b.toSorted().join('\n');
}

/**
 * oclif's explicit command strategy finds a command in the module that maps every command, which imports
 * them all; the loader table imports the one asked for. Help and the command list come from the manifest.
 * What it buys: in a bundle, commands that are not there are never looked for; in the npm package, a
 * command imports its modules alone, not every command's (`auth status` 131 -> 109 ms of CPU, 62 -> 59 MiB).
 */
function importOnlyTheCommandRun(
  oclif: typeof OclifCore,
  plugin: Interfaces.Plugin,
  commands: CommandLoaders,
): void {
  async function findCommand(id: string, opts?: { must: boolean }): Promise<Command.Class | undefined> {
    const load = Object.hasOwn(commands, id) ? commands[id] : undefined;
    if (load === undefined) {
      if (opts?.must === true) oclif.Errors.error(`command ${id} not found`);
      return undefined;
    }
    const command = (await load()).default;
    command.id = id;
    command.plugin = plugin;
    return command;
  }
  plugin.findCommand = findCommand as Interfaces.Plugin['findCommand'];
}

/**
 * @oclif/core checks the Node version against its own `engines` as it loads, through `semver` (about 50
 * files, a tenth of the start-up); our package.json's `engines` already says which Node gds needs.
 */
async function importOclif(): Promise<typeof OclifCore> {
  const engineWarning = 'OCLIF_DISABLE_ENGINE_WARNING';
  const before = process.env[engineWarning];
  process.env[engineWarning] = 'true';
  try {
    return await import('@oclif/core');
  } finally {
    if (before === undefined) delete process.env[engineWarning];
    else process.env[engineWarning] = before;
  }
}

/**
 * oclif and its plugins colour through ansis, which also colours in CI (a `CI` variable) when no
 * terminal is attached; gds colours only on a terminal, so without one ansis is told so before it loads.
 */
function colourOnlyOnTerminals(): void {
  if (
    !colorEnabled(forcedTerminal(process.stdout, process.env)) &&
    !colorEnabled({ isTTY: stderrIsTerminal() })
  )
    process.env.FORCE_COLOR = '0';
}

function withoutCommandNotFoundHook(pjson: Interfaces.PJSON): void {
  pjson.oclif.plugins = (pjson.oclif.plugins ?? []).filter((p) => p !== notFoundPlugin);
  if (pjson.oclif.hooks !== undefined) delete pjson.oclif.hooks.command_not_found;
}

function exitAfter(
  error: unknown,
  argv: readonly string[],
  json: boolean,
  commandIds: readonly string[],
): number {
  const shape = error as { oclif?: { exit?: unknown }; code?: unknown; message?: unknown };
  if (shape.code === 'EEXIT' && typeof shape.oclif?.exit === 'number') return shape.oclif.exit;
  const unknownCommand = /^command (.+) not found$/s.exec(String(shape.message));
  let failure: CliError;
  if (unknownCommand !== null) {
    const id = unknownCommand[1] ?? '';
    // A flag first (`--file=x plan`): its name, never its value (maybe a token).
    const named = id.startsWith('-') ? (id.split('=')[0] ?? id) : id;
    failure = new CliError(`Unknown command: ${unknownCommandWords(named, commandIds)}.`, {
      exitCode: ExitCode.Usage,
      code: 'command_not_found',
      suggestion: flagFirstSuggestion(argv, commandIds) ?? commandSuggestion(named, commandIds),
    });
  } else if (shape.oclif?.exit === notFoundExit) {
    // plugin-not-found has already said which command is unknown; its message says where to look.
    failure = new CliError(String(shape.message), { exitCode: ExitCode.Usage, code: 'command_not_found' });
  } else {
    failure = toCliError(error, 'See `gds --help`.', { argv });
  }
  noteFailure(failure);
  // No command ran (`gds pln --dbt . --detailed-exitcode`): under plan's --detailed-exitcode a usage error
  // ends with 1 as plan's own do, never with 2, which says a table would change.
  if (failure.exitCode === ExitCode.Usage && flagMeant(argv, 'detailed-exitcode'))
    failure = withExitCode(failure, ExitCode.Failure);
  new Output({ json }).error(redactError(failure, argv));
  return failure.exitCode;
}
