// How libpg-query's index.cjs gets its Emscripten module in the bundle (scripts/bundle/rewrites.ts rewrites the
// package's index.cjs to call startModule). Inside the executable built with PostgreSQL's parser as a native
// addon (scripts/bundle/pg-parser-addon.ts: the same WebAssembly translated to C), the addon answers
// index.cjs's calls, and the glue and its WebAssembly are never loaded (push --dry-run of the real view 9 ms
// faster). Where the addon is not in the executable (other platforms) or cannot be loaded (a cache folder
// that cannot be written or mapped, an older C library), the WebAssembly, as before: inside the single
// executable the SEA asset libpg-query.wasm, its initial memory lowered by the build
// (src/core/wasm-initial-memory.ts), compiled from the executable's pages in place: no copy, no file
// written. A bundle run by a plain `node` finds the .wasm in node_modules as usual.
//
// The bytes are not hashed at run time: node:crypto alone cost a push 4-5 ms of CPU and 1.3 MiB.
// The asset and the code reading it are one SEA blob, written at once by the build; bytes that were not
// the build's could only come from editing the executable, which could edit a hash as well. V8 validates
// the module as it compiles it, and its imports must match this build's glue.
import { createRequire } from 'node:module';
import { getRawAsset, isSea } from 'node:sea';
import { loadEmbeddedAddon } from './native-addon.js';

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: object }>;
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

type Receive = (instance: object) => void;
type ModuleFactory = (options: object) => Promise<object>;

/** What scripts/sea/pg-parser-addon.c exports: the module's entries and its memory's accessors. */
interface PgParserAddon extends Record<string, unknown> {
  getI32(pointer: number): number;
}

export function startModule(glue: () => ModuleFactory): Promise<object> {
  const native = isSea() ? nativeModule() : undefined;
  return native === undefined ? glue()(moduleOptions) : Promise.resolve(native);
}

/** The addon as the Emscripten module index.cjs expects (the members it uses), or undefined without it. */
function nativeModule(): object | undefined {
  let addon: PgParserAddon;
  try {
    addon = loadEmbeddedAddon('pg-parser') as PgParserAddon;
  } catch {
    return undefined;
  }
  return {
    ...addon,
    lengthBytesUTF8: (text: string) => Buffer.byteLength(text, 'utf8'),
    getValue(pointer: number, type: string): number {
      if (type !== 'i32') throw new Error(`getValue(${type}) is not in the native parser`);
      return addon.getI32(pointer);
    },
  };
}

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
