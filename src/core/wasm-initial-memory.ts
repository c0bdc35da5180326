// The initial linear memory a WebAssembly module declares, lowered to what it uses at start before it is
// compiled. libpg-query's Emscripten build declares 128 MiB (INITIAL_MEMORY) of which it touches about
// 1 MiB: the pages cost no RSS, but V8 counts the whole buffer as external memory, and 128 MiB is past
// the 64 MiB at which V8 starts a full garbage collection for it (measured: a 10 ms Mark-Compact
// of a 5 MB heap in every `push`). Such a module grows its memory when it needs more (Emscripten's
// ALLOW_MEMORY_GROWTH: its sbrk calls memory.grow), so declaring less changes nothing it computes.
//
// What the module needs at start is the end of its static data and its stack: Emscripten places the data
// segments first and the stack after them, the stack pointer (a mutable i32 global) starting at the
// stack's top, where sbrk's heap begins. The new minimum is the highest of those, rounded up to whole
// pages, plus `headroomPages`; a module whose layout is not read here (imported memory, memory64, a data
// offset or global that is not a constant) is answered unchanged.

const PAGE = 65_536;
const SECTION = { global: 6, memory: 5, data: 11 } as const;
const I32_CONST = 0x41;
const END = 0x0b;

class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at = 0,
  ) {}

  byte(): number {
    const value = this.bytes[this.at];
    if (value === undefined) throw new RangeError('unexpected end of the WebAssembly module');
    this.at += 1;
    return value;
  }

  /** An unsigned LEB128 of at most 32 bits. */
  u32(): number {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
    }
    throw new RangeError('a LEB128 longer than 5 bytes');
  }

  /** A signed LEB128 of at most 32 bits. */
  s32(): number {
    let result = 0;
    let shift = 0;
    let b: number;
    do {
      b = this.byte();
      result |= (b & 0x7f) << shift;
      shift += 7;
    } while ((b & 0x80) !== 0 && shift < 35);
    return shift < 32 && (b & 0x40) !== 0 ? result | (-1 << shift) : result;
  }

  /** `i32.const N; end`, the only constant expression read here; undefined for any other. */
  i32ConstExpression(): number | undefined {
    if (this.byte() !== I32_CONST) return undefined;
    const value = this.s32();
    return this.byte() === END ? value >>> 0 : undefined;
  }
}

interface Layout {
  /** Where the minimum's LEB128 starts, and how many bytes it takes. */
  minAt: number;
  minBytes: number;
  minPages: number;
  /** The highest address the module needs at start: its data's end, its stack pointer's start. */
  neededBytes: number;
}

function layoutOf(bytes: Uint8Array): Layout | undefined {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) return undefined;
  const reader = new Reader(bytes, 8);
  let memory: Omit<Layout, 'neededBytes'> | undefined;
  let needed = 0;
  while (reader.at < bytes.length) {
    const id = reader.byte();
    const size = reader.u32();
    const end = reader.at + size;
    if (id === SECTION.memory) {
      if (reader.u32() !== 1) return undefined;
      const flags = reader.byte();
      if (flags !== 0 && flags !== 1) return undefined; // shared or 64-bit memory: left as it is
      const minAt = reader.at;
      const minPages = reader.u32();
      memory = { minAt, minBytes: reader.at - minAt, minPages };
    } else if (id === SECTION.global) {
      const count = reader.u32();
      for (let i = 0; i < count; i += 1) {
        const type = reader.byte();
        reader.byte(); // mutability
        if (type !== 0x7f) return undefined; // only i32 globals are expected of a 32-bit Emscripten module
        const init = reader.i32ConstExpression();
        if (init === undefined) return undefined;
        needed = Math.max(needed, init);
      }
    } else if (id === SECTION.data) {
      const count = reader.u32();
      for (let i = 0; i < count; i += 1) {
        const kind = reader.u32();
        if (kind === 1) {
          reader.at += reader.u32(); // passive: copied by memory.init, within what the module grows to
          continue;
        }
        if (kind === 2 && reader.u32() !== 0) return undefined;
        if (kind !== 0 && kind !== 2) return undefined;
        const offset = reader.i32ConstExpression();
        if (offset === undefined) return undefined;
        const length = reader.u32();
        reader.at += length;
        needed = Math.max(needed, offset + length);
      }
    }
    reader.at = end;
  }
  return memory === undefined ? undefined : { ...memory, neededBytes: needed };
}

/**
 * `bytes` with the module's initial memory lowered to what it needs at start plus `headroomPages` (64 KiB
 * each), written in place; `bytes` as they were when that is not lower or the layout is not read here.
 */
export function lowerInitialMemory(bytes: Uint8Array, headroomPages = 16): Uint8Array {
  const layout = layoutOf(bytes);
  if (layout === undefined) return bytes;
  const pages = Math.ceil(layout.neededBytes / PAGE) + headroomPages;
  if (pages >= layout.minPages) return bytes;
  // The same number of bytes as before (a LEB128 may carry continuation bytes of zeros), so no section moves.
  let value = pages;
  for (let i = 0; i < layout.minBytes; i += 1) {
    const last = i === layout.minBytes - 1;
    bytes[layout.minAt + i] = (value & 0x7f) | (last ? 0 : 0x80);
    value = Math.floor(value / 128);
  }
  return bytes;
}

/** The initial memory a module declares, in 64 KiB pages (undefined when not read here). */
export function initialMemoryPages(bytes: Uint8Array): number | undefined {
  return layoutOf(bytes)?.minPages;
}
