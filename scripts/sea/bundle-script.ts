// The bundle (gds.cjs) as one V8 script, compiled the same way by the executable's boot script and by the
// build's training run, so the code cache the training produces fits the executable. Node's own SEA code
// cache covers only a script's top level: every function of the bundle would compile on first call.
import { Script } from 'node:vm';

/** esbuild wraps the bundle in this function (banner and footer): boot.ts calls it like Node calls a CJS module. */
export const bundleWrapper = {
  head: '(function (exports, require, module, __filename, __dirname) {',
  tail: '\n})',
};

export type BundleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: unknown,
  filename: string,
  dirname: string,
) => void;

/** An empty cache (an executable built for another platform carries none) compiles without one. */
export function compileBundle(source: string, cachedData?: Uint8Array): Script {
  return new Script(source, {
    filename: 'gds.cjs',
    cachedData: cachedData === undefined || cachedData.length === 0 ? undefined : cachedData,
  });
}

/**
 * The code cache for these arguments: V8 deserialises all of a cache at start-up, so a help request
 * (`… --help`, `-h`) reads the one trained on help and a run the one trained on runs (build-binary.ts).
 * Either works for any arguments: a function missing from a cache compiles on first call.
 */
export function codeCacheAsset(argv: readonly string[]): 'gds-help.cache' | 'gds.cache' {
  const last = argv.at(-1);
  return last === '--help' || last === '-h' ? 'gds-help.cache' : 'gds.cache';
}
