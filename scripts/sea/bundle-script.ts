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

export function compileBundle(source: string, cachedData?: Uint8Array): Script {
  return new Script(source, { filename: 'gds.cjs', cachedData });
}
