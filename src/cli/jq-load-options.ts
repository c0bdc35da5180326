// Where jq-wasm finds its WebAssembly: beside its own script in node_modules (a bundle moves the script, so
// the bytes are handed over). The single executable carries it as an asset instead:
// scripts/bundle/esbuild-plugins.ts puts scripts/sea/jq-options.ts in this module's place.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { JqLoadOptions } from 'jq-wasm';

export function jqLoadOptions(): JqLoadOptions {
  // jq-wasm's exports hide the .wasm; it sits in dist/build beside the CommonJS entry.
  const entry = createRequire(import.meta.url).resolve('jq-wasm');
  return { wasmBinary: readFileSync(join(dirname(entry), 'build/jq.wasm')) };
}
