// Where jq-wasm finds its WebAssembly in the single executable: the SEA asset jq.wasm, in place of
// src/cli/jq-load-options.ts (scripts/build-binary.ts redirects that module here). The bytes are read only
// by a `--jq` run, checked against the sha256 known at build time. A bundle run by a plain `node` (the
// build's training) reads the jq.wasm the build wrote beside it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';
import type { JqLoadOptions } from 'jq-wasm';

/** Filled in by scripts/build-binary.ts: asset key -> sha256 of the file, known at build time. */
declare const GDS_WASM_ASSETS: Record<string, string>;

function jqWasm(): Uint8Array {
  if (!isSea()) return readFileSync(join(dirname(__filename), 'jq.wasm'));
  const bytes = new Uint8Array(getRawAsset('jq.wasm'));
  if (createHash('sha256').update(bytes).digest('hex') !== GDS_WASM_ASSETS['jq.wasm']) {
    throw new Error('The embedded jq does not match its checksum: rebuild the executable.');
  }
  return bytes;
}

export function jqLoadOptions(): JqLoadOptions {
  return { wasmBinary: jqWasm() };
}
