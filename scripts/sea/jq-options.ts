// Where jq-wasm finds its WebAssembly in the single executable: the SEA asset jq.wasm, in place of
// src/cli/jq-load-options.ts (scripts/bundle/esbuild-plugins.ts redirects that module here). The bytes are read
// only by a `--jq` run, in place (not hashed: see scripts/sea/libpg-query-options.ts). A bundle run by a plain
// `node` (the build's training) reads the jq.wasm the build wrote beside it.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';
import type { JqLoadOptions } from 'jq-wasm';

function jqWasm(): Uint8Array {
  if (!isSea()) return readFileSync(join(dirname(__filename), 'jq.wasm'));
  return new Uint8Array(getRawAsset('jq.wasm'));
}

export function jqLoadOptions(): JqLoadOptions {
  return { wasmBinary: jqWasm() };
}
