// Text in and out of an Emscripten module's memory by Node's own encoder and decoder, in place of the
// glue's JavaScript loops: libpg-query's parseSync copies the SQL in (lengthBytesUTF8, stringToUTF8) and
// its parse tree out (UTF8ToString, which scans for the terminating NUL byte by byte), and in a short run
// those loops run cold: about 3-4 ms of a push of a 262-line view (19 KB of SQL, 67 KB of tree;
// measured). The answers are the same bytes and text for any string a file or JSON document gives
// (test/core/wasm-strings.test.ts); a lone surrogate, which neither holds, is written as U+FFFD (3 bytes,
// as the glue counts it) where the glue wrote the surrogate's own 3 bytes.

/** The runtime methods of an Emscripten module that move text, and the memory they read. */
export interface EmscriptenStrings {
  HEAPU8: Uint8Array;
  lengthBytesUTF8(text: string): number;
  stringToUTF8(text: string, at: number, maxBytes: number): number;
  UTF8ToString(at: number, maxBytes?: number): string;
}

/** Puts the fast methods on `module` (its HEAPU8 is read at each call: memory growth replaces it). */
export function useNativeStrings(module: EmscriptenStrings): void {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  module.lengthBytesUTF8 = (text) => Buffer.byteLength(text, 'utf8');
  module.stringToUTF8 = (text, at, maxBytes) => {
    if (!(maxBytes > 0)) return 0;
    const heap = module.HEAPU8;
    const { written } = encoder.encodeInto(text, heap.subarray(at, at + maxBytes - 1));
    heap[at + written] = 0;
    return written;
  };
  module.UTF8ToString = (at, maxBytes) => {
    if (!at) return '';
    const heap = module.HEAPU8;
    const limit = maxBytes === undefined ? heap.length : Math.min(heap.length, at + maxBytes);
    const nul = heap.indexOf(0, at);
    return decoder.decode(heap.subarray(at, nul < 0 || nul > limit ? limit : nul));
  };
}
