// Where jq-wasm finds its WebAssembly: beside its own script in node_modules (the package's default). The
// single executable carries it as an asset instead: scripts/build-binary.ts puts scripts/sea/jq-options.ts
// in this module's place.
import type { JqLoadOptions } from 'jq-wasm';

export function jqLoadOptions(): JqLoadOptions {
  return {};
}
