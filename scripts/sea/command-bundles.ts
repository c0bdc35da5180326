// Commands with a bundle of their own in the single executable (a command compiles and holds only
// its own code). build-binary.ts makes one per command its runs' training goes through (a copy of the main
// bundle with that command alone, trained on that command's runs); boot.ts runs it for a command line that
// routes to that command, the way main() routes one (command-route.ts), and the whole bundle otherwise.
import { commandRoute, globalFlagsAfterCommand } from '../../src/cli/command-route.js';
import type { CommandRoute, RoutedCommand } from '../../src/cli/command-route.js';

export interface CommandBundles {
  /** Every command of the manifest, with what routing reads of it. */
  routes: Record<string, RoutedCommand>;
  /** The commands with a bundle of their own. */
  own: string[];
  /** Of those, the ones with a second code cache, trained on `--jq` runs (cacheVariant). */
  jq?: string[];
}

/**
 * Which of a command bundle's code caches suits these arguments: `jq` for a `--jq` (`-q`) run, whose cache
 * also holds jq-wasm's glue, else the plain one, which `--json` runs read without jq's code in it. A wrong
 * guess costs only speed: a function missing from a cache compiles on first call.
 */
export function cacheVariant(argv: readonly string[]): 'jq' | 'plain' {
  const end = argv.indexOf('--');
  const flags = end === -1 ? argv : argv.slice(0, end);
  return flags.some((word) => word === '--jq' || word.startsWith('--jq=') || word.startsWith('-q'))
    ? 'jq'
    : 'plain';
}

/** What routing a command line reads of each command (command-route.ts), and nothing more. */
export function routesOf(commands: Readonly<Record<string, RoutedCommand>>): Record<string, RoutedCommand> {
  return Object.fromEntries(
    Object.entries(commands).map(([id, command]) => {
      const args = Object.keys(command.args ?? {});
      const route: RoutedCommand = {
        ...(command.strict === false && { strict: false }),
        ...(args.length > 0 && { args: Object.fromEntries(args.map((name) => [name, {}])) }),
      };
      return [id, route];
    }),
  );
}

/** The asset that holds a command's bundle (`cjs`) or one of its code caches (`cache`, `jq.cache`). */
export function commandBundleAsset(id: string, kind: 'cjs' | 'cache' | 'jq.cache'): string {
  return `command-${id.replaceAll(':', '-')}.${kind}`;
}

/** The command these arguments run when it has a bundle of its own; else undefined (the whole bundle). */
export function commandBundleRoute(
  argv: readonly string[],
  bundles: CommandBundles,
  helpFlags: readonly string[] = ['--help', '-h'],
): CommandRoute | undefined {
  const route = commandRoute(globalFlagsAfterCommand(argv), bundles.routes, helpFlags);
  return route !== undefined && bundles.own.includes(route.id) ? route : undefined;
}
