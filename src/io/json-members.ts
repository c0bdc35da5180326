// Reads a large JSON file (a dbt manifest of thousands of models is tens of MB) without holding it whole:
// the file is read in chunks and cut by the JSON splitter (src/core/json-split.ts) into its top-level members
// and their members, each of which is parsed alone by JSON.parse; the members the caller asks for are handed
// over one at a time, each dropped once handed, and every other piece is parsed (so text that is not JSON is
// still refused) and dropped. JSON.parse of the whole text would hold the bytes, the text and every object of
// the file at once (a 5,000-model manifest: about 150 MB); a token-by-token streaming parser holds little but
// allocates about 25 bytes a byte read, which the garbage collector pays for in time and peak memory.
import { isUtf8 } from 'node:buffer';
import { readBoundedText, regularFileChunks } from './input.js';
import type { BoundedInputOptions } from './input.js';
import { JsonSplitter, JsonSyntaxError, keepArrayNumberTexts, parsePiece } from '../core/json-split.js';
import type { JsonKind } from '../core/json-split.js';

export { JsonSyntaxError };
export type { JsonKind };

export interface JsonMembersOptions extends BoundedInputOptions {
  /** Top-level members whose own members are handed over one by one (`nodes`: each node). */
  each: readonly string[];
  /** Top-level members handed over whole (`metadata`). */
  whole: readonly string[];
  /** Top-level arrays whose elements are handed over one by one, `key` undefined (run_results.json's `results`). */
  elements?: readonly string[];
  /**
   * The array of a member, once parsed, whose numbers keep the text they were written as (src/core/json-split.ts
   * numberText), and its key: that array's text is parsed again (keepArrayNumberTexts), or where it holds
   * strings too the whole member (JSON.parse with a reviver is about ten times as slow).
   */
  numberArray?: (
    name: string,
    key: string | undefined,
    value: unknown,
  ) => { array: readonly unknown[]; key: string } | undefined;
}

/** What the document was: its root's kind, and the kind of each top-level member (when the root is an object). */
export interface JsonOutline {
  root: JsonKind;
  members: Map<string, JsonKind>;
}

/**
 * Reads the JSON file `path` (bounded, UTF-8, a regular file: as readBoundedText reads it) and calls
 * `member(name, key, value)` for each member `key` of a top-level object member `name` of `options.each`,
 * `member(name, undefined, value)` for each element of a top-level array member of `options.elements` and for
 * each top-level member of `options.whole`, in file order. A member
 * written twice is handed over twice (JSON.parse keeps the last). Throws JsonSyntaxError for text that is
 * not JSON.
 */
export async function readJsonMembers(
  path: string,
  options: JsonMembersOptions,
  member: (name: string, key: string | undefined, value: unknown) => void,
): Promise<JsonOutline> {
  const each = new Set(options.each);
  const whole = new Set(options.whole);
  const elements = new Set(options.elements);
  const members = new Map<string, JsonKind>();
  // The root's members are cut by the splitter, and inside a top-level object or array that is not asked
  // for whole, its members (or elements). Each piece is parsed alone: every one, so that text that is not
  // JSON is refused wherever it is, and only those asked for are handed over.
  const splitter = new JsonSplitter({
    value(name, kind) {
      members.set(name, kind);
      return !whole.has(name);
    },
    piece(text, offset, name, key, cut) {
      let value = parsePiece(text, offset);
      const numbers = options.numberArray?.(name, key, value);
      if (numbers !== undefined && !keepArrayNumberTexts(numbers.array, numbers.key, text))
        value = parsePiece(text, offset, true);
      if (cut) {
        if (key !== undefined ? each.has(name) : elements.has(name)) member(name, key, value);
      } else if (whole.has(name)) member(name, undefined, value);
    },
    root(text, offset) {
      parsePiece(text, offset);
    },
  });

  // UTF-8 is checked chunk by chunk (a character cut by a chunk's end is checked with the next).
  let tail: Buffer | undefined;
  const checkUtf8 = async (chunk: Buffer | undefined) => {
    const bytes = tail === undefined ? chunk : chunk === undefined ? tail : Buffer.concat([tail, chunk]);
    tail = undefined;
    if (bytes === undefined) return;
    let cut = bytes.length;
    if (chunk !== undefined && cut > 0) {
      // The last character, when the chunk's end cuts it, is checked with the next chunk.
      let start = cut - 1;
      while (start > 0 && cut - start < 4 && ((bytes[start] as number) & 0xc0) === 0x80) start -= 1;
      const lead = bytes[start] as number;
      const size = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (start + size > cut) {
        tail = Buffer.from(bytes.subarray(start));
        cut = start;
      }
    }
    if (!isUtf8(bytes.subarray(0, cut)))
      // Read again as every input is read, for the refusal that names the byte and its line.
      await readBoundedText(path, options);
  };
  for await (const chunk of regularFileChunks(path, options)) {
    await checkUtf8(chunk);
    splitter.write(chunk);
  }
  await checkUtf8(undefined);
  splitter.end();
  return { root: splitter.kind ?? 'value', members };
}
