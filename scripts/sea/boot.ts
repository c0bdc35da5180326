// The single executable's main script (Node's SEA `main`): answers a bare `--version` at once, and a help
// page rendered before when it applies (precomputed-help.ts: the build's off a terminal, the cache's on
// one), else compiles the bundle (SEA asset gds.cjs, or the command's own) with a code cache trained at
// build time (asset gds.cache, or gds-help.cache for help) and runs it. Assets are read in place from the
// executable: no copy of the cache, one of the source.
// mask-argv.js comes first: it masks a token given as an argument in the command line before anything else.
import './mask-argv.js';
import { dirname } from 'node:path';
import { readFileSync } from 'node:fs';
import { getRawAsset } from 'node:sea';
import packageJson from '../../package.json' with { type: 'json' };
import { answeredVersion, userAgent } from '../../src/cli/version.js';
import { codeCacheAsset, compileBundle } from './bundle-script.js';
import type { BundleFunction } from './bundle-script.js';
import { commandBundleRoute } from '../../src/cli/command-route.js';
import type { CommandBundles } from '../../src/cli/command-route.js';
import { cacheVariant, commandBundleAsset } from './command-bundles.js';
import { writeCacheFile } from './cache-dir.js';
import { helpCase, helpKey, terminalHelpFile, terminalHelpKey } from './precomputed-help.js';
import type { PrecomputedHelp } from './precomputed-help.js';

/** Filled in by scripts/build-binary.ts: the first 16 hex digits of the bundle's sha256. */
declare const GDS_BUILD_ID: string;
/** Filled in by scripts/build-binary.ts: the commands with a bundle of their own (command-bundles.ts). */
declare const GDS_COMMAND_BUNDLES: CommandBundles;

function answeredHelp(argv: string[]): boolean {
  const kind = helpCase(argv, process.env);
  if (kind === 'terminal') return answeredTerminalHelp(argv);
  if (kind !== 'piped') return false;
  const help = JSON.parse(Buffer.from(getRawAsset('help.json')).toString('utf8')) as PrecomputedHelp;
  const page = help.pages[helpKey(argv)];
  // The root page's VERSION line names the platform (WSL reads as `wsl`): only the build's is served.
  if (page === undefined || help.userAgent !== userAgent(packageJson)) return false;
  process.stdout.write(page);
  return true;
}

/**
 * On a terminal: the page this build's oclif printed before for the same arguments, width and colour, else
 * false, and what oclif prints this time is kept for the next call (when it exits 0 with nothing on stderr).
 */
function answeredTerminalHelp(argv: string[]): boolean {
  const file = terminalHelpFile(GDS_BUILD_ID, terminalHelpKey(argv, process.env));
  try {
    process.stdout.write(readFileSync(file, 'utf8'));
    return true;
  } catch {
    // not rendered yet at this width and colour
  }
  const printed: string[] = [];
  let spoke = false;
  const { stdout, stderr } = process;
  const write = stdout.write.bind(stdout);
  const writeError = stderr.write.bind(stderr);
  stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    printed.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof stdout.write;
  stderr.write = ((...args: unknown[]) => {
    spoke = true;
    return (writeError as (...args: unknown[]) => boolean)(...args);
  }) as typeof stderr.write;
  process.once('exit', (code) => {
    if (code !== 0 || spoke || printed.length === 0) return;
    try {
      writeCacheFile(dirname(file), file, printed.join(''), 0o600);
    } catch {
      // a cache that cannot be written only means oclif renders the page again next time
    }
  });
  return false;
}

/**
 * The bundle and code cache for these arguments: the command's own when it has one, else the whole CLI's.
 */
function bundleAssets(argv: readonly string[]): { source: string; cache: string } {
  const route = commandBundleRoute(argv, GDS_COMMAND_BUNDLES);
  if (route === undefined) return { source: 'gds.cjs', cache: codeCacheAsset(argv) };
  const jq = cacheVariant(route.argv) === 'jq' && GDS_COMMAND_BUNDLES.jq?.includes(route.id) === true;
  return {
    source: commandBundleAsset(route.id, 'cjs'),
    cache: commandBundleAsset(route.id, jq ? 'jq.cache' : 'cache'),
  };
}

const argv = process.argv.slice(2);
if (!answeredVersion(argv, packageJson) && !answeredHelp(argv)) {
  const assets = bundleAssets(argv);
  const source = Buffer.from(getRawAsset(assets.source)).toString('latin1');
  const script = compileBundle(source, new Uint8Array(getRawAsset(assets.cache)));
  if (process.env.GDS_TEST_CODE_CACHE === '1') {
    const verdict = script.cachedDataRejected === true ? 'rejected' : 'accepted';
    process.stderr.write(`code cache: ${verdict} (${assets.source}, ${assets.cache})\n`);
  }
  (script.runInThisContext() as BundleFunction)(exports, require, module, __filename, __dirname);
}
