// Reads a large JSON file (a dbt manifest of thousands of models is tens of MB) without holding it whole:
// the file is read in chunks and cut by a scanner into its top-level members and their members, each of
// which is parsed alone by JSON.parse; the members the caller asks for are handed over one at a time, each
// dropped once handed, and every other piece is parsed (so text that is not JSON is still refused) and
// dropped. JSON.parse of the whole text would hold the bytes, the text and every object of the file at once
// (a 5,000-model manifest: about 150 MB); a token-by-token streaming parser holds little but allocates about
// 25 bytes a byte read, which the garbage collector pays for in time and peak memory.
import { isUtf8 } from 'node:buffer';
import { readBoundedText, regularFileChunks } from './input.js';
import type { BoundedInputOptions } from './input.js';

export type JsonKind = 'object' | 'array' | 'value';

export interface JsonMembersOptions extends BoundedInputOptions {
  /** Top-level members whose own members are handed over one by one (`nodes`: each node). */
  each: readonly string[];
  /** Top-level members handed over whole (`metadata`). */
  whole: readonly string[];
}

/** What the document was: its root's kind, and the kind of each top-level member (when the root is an object). */
export interface JsonOutline {
  root: JsonKind;
  members: Map<string, JsonKind>;
}

/** The file is not JSON; the message says what and at which byte. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LEFT_BRACE = 0x7b;
const RIGHT_BRACE = 0x7d;
const LEFT_BRACKET = 0x5b;
const RIGHT_BRACKET = 0x5d;

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
const kindOf = (byte: number): JsonKind =>
  byte === LEFT_BRACE ? 'object' : byte === LEFT_BRACKET ? 'array' : 'value';

/** A piece of the file being gathered: the bytes from `start` (in the chunk being scanned) or earlier chunks. */
class Piece {
  private parts: Buffer[] = [];
  private start = -1;
  /** The file offset of the piece's first byte, for an error's message. */
  offset = 0;

  begin(at: number, offset: number) {
    this.parts = [];
    this.start = at;
    this.offset = offset;
  }

  /** The chunk ends with the piece open: its bytes so far are kept. */
  carry(chunk: Buffer) {
    if (this.start < 0) return;
    this.parts.push(chunk.subarray(this.start));
    this.start = 0;
  }

  /** The piece's text, up to (not including) `end` of the chunk. */
  text(chunk: Buffer, end: number): string {
    const start = this.start;
    this.start = -1;
    // A piece within one chunk (nearly every one) is decoded from it in place: no view, no copy.
    if (this.parts.length === 0) return chunk.toString('utf8', start, end);
    const bytes = Buffer.concat([...this.parts, chunk.subarray(start, end)]);
    this.parts = [];
    return bytes.toString('utf8');
  }

  get open() {
    return this.start >= 0;
  }
}

/** Strings this long or longer are searched for their end by Buffer's indexOf (memchr) rather than byte by byte. */
const SHORT_STRING = 32;

/**
 * Where the JSON string that runs on from `from` of `chunk` (inside it, no escape pending at `from`) ends: the
 * index of its closing quote; when the chunk ends first, -1, or -2 when the chunk's last byte is a backslash
 * that escapes the next chunk's first. Nearly every byte of a dbt manifest is inside a string (compiled SQL,
 * descriptions, names): a string's bytes are passed over by memchr instead of one by one in JavaScript.
 * With the loop that passes over a piece's inside, reading the 2,000-model project takes 20-50 ms less of
 * the main thread's CPU (docs/bench.md, plans at once, twelfth pass).
 */
function stringEnd(chunk: Buffer, from: number): number {
  const length = chunk.length;
  let i = from;
  const short = from + SHORT_STRING < length ? from + SHORT_STRING : length;
  while (i < short) {
    const byte = chunk[i] as number;
    if (byte === QUOTE) return i;
    if (byte === BACKSLASH) {
      if (i + 1 >= length) return -2;
      i += 2;
    } else i += 1;
  }
  for (;;) {
    const quote = i < length ? chunk.indexOf(QUOTE, i) : -1;
    // A quote is the string's end unless an odd run of backslashes (from `i` on: none is pending there) escapes it.
    const last = quote < 0 ? length : quote;
    let k = last - 1;
    while (k >= i && chunk[k] === BACKSLASH) k -= 1;
    const escapes = (last - 1 - k) % 2 === 1;
    if (quote < 0) return escapes ? -2 : -1;
    if (!escapes) return quote;
    i = quote + 1;
  }
}

function parsePiece(text: string, offset: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JsonSyntaxError(`${(error as Error).message} (in the text from byte ${offset})`);
  }
}

type Phase = 'key' | 'value' | 'done';

/**
 * Reads the JSON file `path` (bounded, UTF-8, a regular file: as readBoundedText reads it) and calls
 * `member(name, key, value)` for each member `key` of a top-level object member `name` of `options.each`,
 * and `member(name, undefined, value)` for each top-level member of `options.whole`, in file order. A member
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
  let root: JsonKind | undefined;
  const members = new Map<string, JsonKind>();
  // The scanner counts brackets outside strings. Pieces are cut at depth 1 (the root object's members:
  // `"name"`, then its value) and, inside a top-level object or array that is not asked for whole, at depth
  // 2 (its members, or its elements); deeper brackets are only counted. Each piece is parsed alone.
  let depth = 0;
  let inString = false;
  let escaped = false;
  let ended = false;
  /** The root is not an object: its whole text is gathered, and parsed to check it. */
  let notObject = false;
  let offset = 0;
  const piece = new Piece();
  // Depth 1: the root object's member being read.
  let phase1: Phase = 'key';
  let name = '';
  let any1 = false;
  // Depth 2: the top-level object or array being cut (split), its member being read.
  let split = false;
  let splitObject = false;
  let phase2: Phase = 'key';
  let key = '';
  let any2 = false;

  const fail = (message: string, at: number): never => {
    throw new JsonSyntaxError(`${message} at byte ${at}`);
  };

  /** The piece at the cut depth ends at `end` of `chunk` (a `,`, or the container's closer when `closing`). */
  const endPiece = (chunk: Buffer, end: number, closing: boolean) => {
    const at = piece.offset;
    const text = piece.open ? piece.text(chunk, end) : '';
    const level2 = split;
    const phase = level2 ? phase2 : phase1;
    const any = level2 ? any2 : any1;
    if (phase === 'done') {
      phase1 = 'key';
      any1 = true;
      return;
    }
    const isKey = phase === 'key' && (!level2 || splitObject);
    if (text.trim() === '') {
      // `{}` and `[]` are empty; an empty piece anywhere else is a stray comma or a missing value.
      if (closing && !any && (isKey || (level2 && !splitObject))) return;
      fail(isKey ? 'Expected a member or a value' : 'A value is missing', offset + end);
    }
    if (isKey) fail('Expected ":" after a member name', offset + end);
    const value = parsePiece(text, at);
    if (level2) {
      any2 = true;
      phase2 = 'key';
      if (splitObject && each.has(name)) member(name, key, value);
    } else {
      any1 = true;
      phase1 = 'key';
      if (whole.has(name)) member(name, undefined, value);
    }
  };

  /** A `:` at the cut depth: the piece before it is a member's name. */
  const endKey = (chunk: Buffer, at: number) => {
    const level2 = split;
    if ((level2 ? phase2 : phase1) !== 'key' || (level2 && !splitObject)) fail('Unexpected ":"', offset + at);
    const start = piece.offset;
    const text = piece.open ? piece.text(chunk, at) : '';
    if (text.trim() === '') fail('A member name is missing', offset + at);
    const parsed = parsePiece(text, start);
    if (typeof parsed !== 'string') fail('A member name that is not a string', start);
    if (level2) {
      key = parsed as string;
      phase2 = 'value';
    } else {
      name = parsed as string;
      phase1 = 'value';
    }
  };

  /** Past the string `chunk` is in from `from`: the index after its closing quote, or the chunk's length. */
  const skipString = (chunk: Buffer, from: number): number => {
    let at = from;
    if (escaped) {
      escaped = false;
      at += 1;
    }
    const end = stringEnd(chunk, at);
    if (end >= 0) {
      inString = false;
      return end + 1;
    }
    escaped = end === -2;
    return chunk.length;
  };

  const scan = (chunk: Buffer) => {
    const length = chunk.length;
    for (let i = inString ? skipString(chunk, 0) : 0; i < length; i += 1) {
      const byte = chunk[i] as number;
      if (notObject) continue;
      if (isSpace(byte)) continue;
      if (ended) fail('Unexpected text after the JSON value', offset + i);
      if (depth === 0) {
        root = kindOf(byte);
        if (root === 'object') depth = 1;
        else {
          notObject = true;
          piece.begin(i, offset + i);
        }
        continue;
      }
      const cut = split ? 2 : 1;
      if (depth > cut) {
        // Inside a piece: only strings and brackets count, up to the bracket that closes it.
        for (; i < length; i += 1) {
          const inner = chunk[i] as number;
          if (inner === QUOTE) {
            inString = true;
            i = skipString(chunk, i + 1) - 1;
          } else if (inner === LEFT_BRACE || inner === LEFT_BRACKET) depth += 1;
          else if ((inner === RIGHT_BRACE || inner === RIGHT_BRACKET) && --depth === cut) break;
        }
        continue;
      }
      // At the cut depth.
      if (byte === COMMA) {
        endPiece(chunk, i, false);
        continue;
      }
      if (byte === COLON) {
        endKey(chunk, i);
        continue;
      }
      if (byte === RIGHT_BRACE || byte === RIGHT_BRACKET) {
        const object = split ? splitObject : true;
        if (object !== (byte === RIGHT_BRACE)) fail(`Unexpected "${String.fromCharCode(byte)}"`, offset + i);
        endPiece(chunk, i, true);
        depth -= 1;
        if (split) {
          split = false;
          phase1 = 'done';
        } else ended = true;
        continue;
      }
      if (!split && phase1 === 'done') fail('Expected "," or "}"', offset + i);
      if (!piece.open) {
        if (!split && phase1 === 'value') {
          members.set(name, kindOf(byte));
          if ((byte === LEFT_BRACE || byte === LEFT_BRACKET) && !whole.has(name)) {
            // A top-level object or array: cut at depth 2.
            split = true;
            splitObject = byte === LEFT_BRACE;
            phase2 = splitObject ? 'key' : 'value';
            any2 = false;
            depth = 2;
            continue;
          }
        }
        piece.begin(i, offset + i);
      }
      if (byte === QUOTE) {
        inString = true;
        i = skipString(chunk, i + 1) - 1;
      } else if (byte === LEFT_BRACE || byte === LEFT_BRACKET) depth += 1;
    }
    piece.carry(chunk);
    offset += length;
  };

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
    scan(chunk);
  }
  await checkUtf8(undefined);
  if (notObject) {
    parsePiece(piece.text(Buffer.alloc(0), 0), piece.offset);
    ended = true;
  }
  if (!ended) throw new JsonSyntaxError('Unexpected end of JSON input');
  return { root: root ?? 'value', members };
}
