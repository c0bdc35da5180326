// How jq's WebAssembly is instantiated, from the npm package (jq-load-options.ts) and in the single
// executable (scripts/sea/jq-options.ts) alike: as jq-wasm does it, except for jq's one call for random
// bytes. jq seeds its random generator with 4 bytes at its first run, which jq-wasm's glue asks of
// WebCrypto (`crypto.getRandomValues`); loading WebCrypto for them cost a `--jq` run 7 ms of CPU, a fifth
// of what jq adds (measured). The bytes come from the system's /dev/urandom instead, through
// node:fs (loaded anyway), or from WebCrypto where there is no /dev/urandom (Windows).
import { closeSync, openSync, readSync } from 'node:fs';
import type { JqLoadOptions } from 'jq-wasm';

/**
 * WASI's random_get among the imports of jq-wasm 3.0.0-jq-1.8.2's jq.wasm (its Emscripten glue maps
 * `z: _random_get` in module `a`; test/cli/jq-instantiate.test.ts reads the glue to hold this true).
 */
export const RANDOM_IMPORT = { module: 'a', name: 'z' } as const;

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
interface WasmInstance {
  exports: Record<string, unknown>;
}
interface WasmApi {
  instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: WasmInstance; module: object }>;
  Memory: abstract new (...args: never[]) => { buffer: ArrayBuffer };
}
const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

/** Fills `view` with random bytes from the system: /dev/urandom, else WebCrypto. */
export function fillRandom(view: Uint8Array): void {
  let fd: number | undefined;
  try {
    fd = openSync('/dev/urandom', 'r');
    for (let done = 0; done < view.length;) {
      const read = readSync(fd, view, done, view.length - done, null);
      if (read <= 0) throw new Error('/dev/urandom gave nothing');
      done += read;
    }
  } catch {
    globalThis.crypto.getRandomValues(view);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** jq-wasm's options to instantiate jq from `bytes`, its random bytes read by fillRandom. */
export function jqInstantiation(bytes: Uint8Array): JqLoadOptions {
  return {
    instantiateWasm(imports, onSuccess) {
      const wasi = (imports as Record<string, Record<string, unknown> | undefined>)[RANDOM_IMPORT.module];
      let memory: { buffer: ArrayBuffer } | undefined;
      if (wasi !== undefined && typeof wasi[RANDOM_IMPORT.name] === 'function') {
        const glue = wasi[RANDOM_IMPORT.name] as (at: number, size: number) => number;
        wasi[RANDOM_IMPORT.name] = (at: number, size: number): number => {
          if (memory === undefined) return glue(at, size);
          fillRandom(new Uint8Array(memory.buffer, at, size));
          return 0;
        };
      }
      // A promise: jq-wasm rejects loadJq with its error when it fails.
      return wasm.instantiate(bytes, imports).then(({ instance, module }) => {
        memory = Object.values(instance.exports).find((value) => value instanceof wasm.Memory) as
          { buffer: ArrayBuffer } | undefined;
        onSuccess(instance as never, module as never);
      }) as unknown as undefined;
    },
  };
}
