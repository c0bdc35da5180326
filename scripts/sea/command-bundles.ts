// Commands with a bundle of their own in the single executable (a command compiles and holds only
// its own code). build-binary.ts makes one per command its runs' training goes through (a copy of the main
// bundle with that command alone, trained on that command's runs); boot.ts runs it for a command line that
// routes to that command (command-route.ts commandBundleRoute, as bin/run.js does), and the whole bundle
// otherwise.
import type { RoutedCommand } from '../../src/cli/command-route.js';

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
