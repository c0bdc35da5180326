// The options libpg-query's Emscripten module starts with in the bundle (scripts/bundle/rewrites.ts rewrites the
// package's index.cjs to pass them). Inside the single executable the WebAssembly is the SEA asset
// libpg-query.wasm, its initial memory lowered by the build (src/core/wasm-initial-memory.ts), compiled from
// the executable's pages in place: no copy, no file written. A bundle run by a plain `node` finds the .wasm
// in node_modules as usual.
//
// The bytes are not hashed at run time: node:crypto alone cost a push 4-5 ms of CPU and 1.3 MiB.
// The asset and the code reading it are one SEA blob, written at once by the build; bytes that were not
// the build's could only come from editing the executable, which could edit a hash as well. V8 validates
// the module as it compiles it, and its imports must match this build's glue.
import { createRequire } from 'node:module';
import { getRawAsset, isSea } from 'node:sea';

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: object }>;
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

type Receive = (instance: object) => void;

function embeddedWasm(): Uint8Array {
  return new Uint8Array(getRawAsset('libpg-query.wasm'));
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
