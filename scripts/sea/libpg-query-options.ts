// The options libpg-query's Emscripten module starts with in the bundle (scripts/build-binary.ts rewrites the
// package's index.cjs to pass them). Inside the single executable the WebAssembly is the SEA asset
// libpg-query.wasm, compiled from a copy of it once its sha256 matches the one known at build time, with its
// initial memory lowered (src/core/wasm-initial-memory.ts): no file is written. A bundle run by a plain
// `node` finds the .wasm in node_modules as usual.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { getAsset, isSea } from 'node:sea';
import { lowerInitialMemory } from '../../src/core/wasm-initial-memory.js';

/** Filled in by scripts/build-binary.ts: asset key -> sha256 of the file, known at build time. */
declare const GDS_WASM_ASSETS: Record<string, string>;

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: object }>;
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

type Receive = (instance: object) => void;

function embeddedWasm(): Uint8Array {
  // A copy (getAsset), as the executable's own pages are read-only.
  const bytes = new Uint8Array(getAsset('libpg-query.wasm'));
  if (createHash('sha256').update(bytes).digest('hex') !== GDS_WASM_ASSETS['libpg-query.wasm']) {
    throw new Error('The embedded PostgreSQL parser does not match its checksum: rebuild the executable.');
  }
  return lowerInitialMemory(bytes);
}

export const moduleOptions = isSea()
  ? {
      instantiateWasm(imports: object, receive: Receive): object {
        wasm.instantiate(embeddedWasm(), imports).then(
          ({ instance }) => receive(instance),
          (error: unknown) => {
            throw error;
          },
        );
        return {};
      },
    }
  : {
      locateFile: (file: string) => createRequire(__filename).resolve(`libpg-query/wasm/${file}`),
    };
