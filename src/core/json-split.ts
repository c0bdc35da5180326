// One scanner cuts a JSON text that arrives in chunks of bytes (a file read, an answer's body) into pieces that
// JSON.parse then reads alone: the members of the root object and, inside a member its handler asks to cut,
// that member's members (or elements). The text is never held whole, nor decoded whole: only each piece is
// decoded, from its chunk or (cut by a chunk's end) from the chunks it spans. It passes over strings with
// their escapes and counts brackets, across any chunk boundary, and checks what lies between the pieces
// (names, `:`, `,`, brackets), each piece's own text being checked by its parse: text that is not JSON is
// refused (JsonSyntaxError, saying what and at which byte), as JSON.parse of the whole would refuse it.
// Its callers: the manifest reader of src/io/json-members.ts, the held-tables page reader of
// src/client/json-elements.ts.

export type JsonKind = 'object' | 'array' | 'value';

/** The text is not JSON; the message says what and at which byte. */
export class JsonSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** What a splitter hands its caller, in the text's order. */
export interface JsonSplitHandler {
  /**
   * A member `name` of the root object begins with a value of `kind`: true to have an object's members, or an
   * array's elements, handed over one by one (`piece` with `cut` true) instead of the value whole.
   */
  value(name: string, kind: JsonKind): boolean;
  /**
   * The text of a piece, from byte `offset` of the text: the value of the root's member `name` (`cut` false),
   * or a member `key` (an element: `key` undefined) of the value of `name` that `value` asked to cut.
   */
  piece(text: string, offset: number, name: string, key: string | undefined, cut: boolean): void;
  /** The root is not an object: its whole text, from byte `offset`. */
  root(text: string, offset: number): void;
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

/** A piece of the text being gathered: the bytes from `start` (in the chunk being scanned) or earlier chunks. */
class Piece {
  private parts: Buffer[] = [];
  private start = -1;
  /** The text's offset of the piece's first byte, for an error's message. */
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

/** Strings this long or longer are searched for their end by indexOf rather than byte by byte in JavaScript. */
const SHORT_STRING = 32;

/**
 * V8's own indexOf of a Uint8Array, called on the Buffer: Buffer's goes through node:buffer's JavaScript, which
 * (TurboFan off while a plan reads, declares and compares) allocated about 9 MB a no-change plan of 2,000 models
 * (docs/bench.md, plans at once, eighteenth pass).
 */
const indexOfByte = Uint8Array.prototype.indexOf;

/**
 * Where the JSON string that runs on from `from` of `chunk` (inside it, no escape pending at `from`) ends: the
 * index of its closing quote; when the chunk ends first, -1, or -2 when the chunk's last byte is a backslash
 * that escapes the next chunk's first. Nearly every byte of a dbt manifest is inside a string (compiled SQL,
 * descriptions, names): a string's bytes are passed over by indexOf instead of one by one in JavaScript.
 * With the loop that passes over a piece's inside, reading the 2,000-model project takes 20-50 ms less of
 * the main thread's CPU (docs/bench.md, plans at once, twelfth pass). `length` is the chunk's, read once by
 * the caller: `chunk.length` is a call of V8's TypedArray getter in the code Maglev makes (TurboFan is off while
 * a plan reads), twice a string, 2.6 million calls a plan of 2,000 models (docs/bench.md, fifty-third session).
 */
function stringEnd(chunk: Buffer, from: number, length: number): number {
  let i = from;
  const short = from + SHORT_STRING < length ? from + SHORT_STRING : length;
  while (i < short) {
    const byte = chunk[i] as number;
    if (byte === QUOTE) return i;
    // An escape: the loop below counts backslash runs (a branch of its own here was one more line that first
    // ran long after V8 compiled the reader, throwing its code away; see JsonSplitter's passPiece).
    if (byte === BACKSLASH) break;
    i += 1;
  }
  for (;;) {
    const quote = i < length ? indexOfByte.call(chunk, QUOTE, i) : -1;
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

/** JSON.parse of a piece: its refusal says from which byte of the text the piece runs. */
export function parsePiece(text: string, offset: number, keepNumberTexts = false): unknown {
  try {
    return keepNumberTexts ? JSON.parse(text, keepNumberText) : JSON.parse(text);
  } catch (error) {
    throw new JsonSyntaxError(`${(error as Error).message} (in the text from byte ${offset})`);
  }
}

/**
 * The numbers whose text JSON.parse does not give back (`1.0` read as 1, `1e-05` as 0.00001, digits past
 * 2^53), as written, by the object or array holding them and their key there: a dbt manifest is written by
 * Python, whose repr of a number is the text dbt's Jinja prints into a test's SQL.
 */
const numberTexts = new WeakMap<object, Map<string, string>>();

function keepNumberText(this: object, key: string, value: unknown, context?: { source?: string }): unknown {
  const source = context?.source;
  if (
    typeof value === 'number' &&
    source !== undefined &&
    (/[.eE]/.test(source) || !Number.isSafeInteger(value))
  ) {
    let texts = numberTexts.get(this);
    if (texts === undefined) numberTexts.set(this, (texts = new Map()));
    texts.set(key, source);
  }
  return value;
}

/**
 * Keeps the texts of the numbers of `array`, parsed from `text`, where `text` writes it as `"<key>": [...]` of
 * numbers, booleans and nulls only (no string or bracket in it): that array's text alone is parsed again, with
 * the reviver, not the whole of `text`. False when not exactly one such array equal to `array` is in `text` (an
 * array holding strings too, or another equal one under the key): the caller then parses `text` with
 * parsePiece's keepNumberTexts.
 */
export function keepArrayNumberTexts(array: readonly unknown[], key: string, text: string): boolean {
  const written = new RegExp(`"${key.replace(/\W/g, '\\$&')}"\\s*:\\s*(\\[[^[\\]"{}]*\\])`, 'g');
  let found: unknown[] | undefined;
  for (const match of text.matchAll(written)) {
    const copy = JSON.parse(match[1] ?? '[]', keepNumberText) as unknown[];
    if (copy.length !== array.length || !copy.every((item, index) => Object.is(item, array[index]))) continue;
    // Two such arrays under the key (one in a meta:, say): which one is `array` is not known.
    if (found !== undefined) return false;
    found = copy;
  }
  if (found === undefined) return false;
  const texts = numberTexts.get(found);
  if (texts !== undefined) numberTexts.set(array, texts);
  return true;
}

/** The text a number at `key` of `holder` was written as, where parsePiece kept it (see numberTexts). */
export function numberText(holder: object, key: string | number): string | undefined {
  return numberTexts.get(holder)?.get(String(key));
}

type Phase = 'key' | 'value' | 'done';

/**
 * A scanner of one JSON text, fed its bytes chunk by chunk (`write`), handing its pieces to its handler.
 * A class, not a function's closures: made of closures, each splitter's state (and what its handler keeps)
 * outlived the text in the young generation's collections, so that a page of held tables read at a time
 * left about 0.8 MB a page to the old generation and took 4.6 -> 6.3 ms a page (docs/bench.md, one JSON
 * splitter).
 */
export class JsonSplitter {
  private root: JsonKind | undefined;
  // The scanner counts brackets outside strings. Pieces are cut at depth 1 (the root object's members:
  // `"name"`, then its value) and, inside a top-level object or array the handler asks to cut, at depth
  // 2 (its members, or its elements); deeper brackets are only counted.
  private depth = 0;
  private inString = false;
  private escaped = false;
  private ended = false;
  /** The root is not an object: its whole text is gathered, and handed over at the end. */
  private notObject = false;
  private offset = 0;
  private readonly piece = new Piece();
  // Depth 1: the root object's member being read.
  private phase1: Phase = 'key';
  private name = '';
  private any1 = false;
  // Depth 2: the top-level object or array being cut (split), its member being read.
  private split = false;
  private splitObject = false;
  private phase2: Phase = 'key';
  private key = '';
  private any2 = false;

  constructor(private readonly handler: JsonSplitHandler) {}

  /** The root's kind, once its first byte is read. */
  get kind(): JsonKind | undefined {
    return this.root;
  }

  private fail(message: string, at: number): never {
    throw new JsonSyntaxError(`${message} at byte ${at}`);
  }

  /** The piece at the cut depth ends at `end` of `chunk` (a `,`, or the container's closer when `closing`). */
  private endPiece(chunk: Buffer, end: number, closing: boolean) {
    const piece = this.piece;
    const at = piece.offset;
    const text = piece.open ? piece.text(chunk, end) : '';
    const level2 = this.split;
    const phase = level2 ? this.phase2 : this.phase1;
    const any = level2 ? this.any2 : this.any1;
    if (phase === 'done') {
      this.phase1 = 'key';
      this.any1 = true;
      return;
    }
    const isKey = phase === 'key' && (!level2 || this.splitObject);
    if (text.trim() === '') {
      // `{}` and `[]` are empty; an empty piece anywhere else is a stray comma or a missing value.
      if (closing && !any && (isKey || (level2 && !this.splitObject))) return;
      this.fail(isKey ? 'Expected a member or a value' : 'A value is missing', this.offset + end);
    }
    if (isKey) this.fail('Expected ":" after a member name', this.offset + end);
    this.handler.piece(text, at, this.name, level2 && this.splitObject ? this.key : undefined, level2);
    if (level2) {
      this.any2 = true;
      this.phase2 = 'key';
    } else {
      this.any1 = true;
      this.phase1 = 'key';
    }
  }

  /** A `:` at the cut depth: the piece before it is a member's name. */
  private endKey(chunk: Buffer, at: number) {
    const level2 = this.split;
    if ((level2 ? this.phase2 : this.phase1) !== 'key' || (level2 && !this.splitObject))
      this.fail('Unexpected ":"', this.offset + at);
    const piece = this.piece;
    const start = piece.offset;
    const text = piece.open ? piece.text(chunk, at) : '';
    if (text.trim() === '') this.fail('A member name is missing', this.offset + at);
    const parsed = parsePiece(text, start);
    if (typeof parsed !== 'string') this.fail('A member name that is not a string', start);
    if (level2) {
      this.key = parsed as string;
      this.phase2 = 'value';
    } else {
      this.name = parsed as string;
      this.phase1 = 'value';
    }
  }

  /**
   * Past the string `chunk` is in from `from`: the index after its closing quote, or the chunk's length. Every
   * line runs at every call, a chunk ending inside the string as much as a string ending in the chunk: V8
   * compiles this (inlined in `passPiece`) from the first chunks' calls, and a line that had not run by then
   * threw that code away the first time a chunk ended inside a string (see `passPiece`).
   */
  private skipString(chunk: Buffer, from: number, length: number): number {
    // A backslash that ended the last chunk escapes this one's first byte.
    const end = stringEnd(chunk, from + (this.escaped ? 1 : 0), length);
    this.escaped = end === -2;
    this.inString = end < 0;
    return end >= 0 ? end + 1 : length;
  }

  /**
   * Inside a piece (deeper than the cut depth `cut`), from `from` of `chunk`: only strings and brackets count,
   * up to the bracket that closes it. Answers the index of that bracket, or the chunk's length. A method of its
   * own, not a loop in `write`: nearly every byte of a manifest passes here, and V8's optimising compiler
   * (Maglev) compiled `write` in its first call (a 64 KiB chunk) before its other lines had run, then threw the
   * code away and compiled it again at each of them as the read reached it (a split member's end, the next
   * top-level member, a chunk ending in a string): 7-10 times a plan of 2,000 models. Apart, this loop has run
   * every line of its own within the first pieces, and `write` is compiled 2-3 times: a no-change plan of
   * 2,000 models takes 11-13 ms less CPU, about 7 ms of it on V8's worker threads (docs/bench.md, plans at
   * once, twenty-second pass).
   */
  private passPiece(chunk: Buffer, from: number, cut: number): number {
    const length = chunk.length;
    let depth = this.depth;
    let i = from;
    for (; i < length; i += 1) {
      const inner = chunk[i] as number;
      if (inner === QUOTE) {
        this.inString = true;
        i = this.skipString(chunk, i + 1, length) - 1;
      } else if (inner === LEFT_BRACE || inner === LEFT_BRACKET) depth += 1;
      else if ((inner === RIGHT_BRACE || inner === RIGHT_BRACKET) && --depth === cut) break;
    }
    this.depth = depth;
    return i;
  }

  /** The next chunk of the text (kept by the splitter while a piece it began is open). */
  write(chunk: Buffer): void {
    const length = chunk.length;
    // An empty chunk changes nothing (and must not take a pending escape for its own).
    if (length === 0) return;
    const piece = this.piece;
    for (let i = this.inString ? this.skipString(chunk, 0, length) : 0; i < length; i += 1) {
      const byte = chunk[i] as number;
      if (this.notObject) break; // its bytes are only gathered
      if (isSpace(byte)) continue;
      if (this.ended) this.fail('Unexpected text after the JSON value', this.offset + i);
      if (this.depth === 0) {
        this.root = kindOf(byte);
        if (this.root === 'object') this.depth = 1;
        else {
          this.notObject = true;
          piece.begin(i, this.offset + i);
        }
        continue;
      }
      const cut = this.split ? 2 : 1;
      if (this.depth > cut) {
        i = this.passPiece(chunk, i, cut);
        continue;
      }
      // At the cut depth.
      if (byte === COMMA) {
        this.endPiece(chunk, i, false);
        continue;
      }
      if (byte === COLON) {
        this.endKey(chunk, i);
        continue;
      }
      if (byte === RIGHT_BRACE || byte === RIGHT_BRACKET) {
        const object = this.split ? this.splitObject : true;
        if (object !== (byte === RIGHT_BRACE))
          this.fail(`Unexpected "${String.fromCharCode(byte)}"`, this.offset + i);
        this.endPiece(chunk, i, true);
        this.depth -= 1;
        if (this.split) {
          this.split = false;
          this.phase1 = 'done';
        } else this.ended = true;
        continue;
      }
      if (!this.split && this.phase1 === 'done') this.fail('Expected "," or "}"', this.offset + i);
      if (!piece.open) {
        if (!this.split && this.phase1 === 'value') {
          const kind = kindOf(byte);
          if (this.handler.value(this.name, kind) && kind !== 'value') {
            // A top-level object or array: cut at depth 2.
            this.split = true;
            this.splitObject = kind === 'object';
            this.phase2 = this.splitObject ? 'key' : 'value';
            this.any2 = false;
            this.depth = 2;
            continue;
          }
        }
        piece.begin(i, this.offset + i);
      }
      if (byte === QUOTE) {
        this.inString = true;
        i = this.skipString(chunk, i + 1, length) - 1;
      } else if (byte === LEFT_BRACE || byte === LEFT_BRACKET) this.depth += 1;
    }
    piece.carry(chunk);
    this.offset += length;
  }

  /** The text has ended: throws JsonSyntaxError when it is not a whole JSON value. */
  end(): void {
    if (this.notObject) {
      this.handler.root(this.piece.text(Buffer.alloc(0), 0), this.piece.offset);
      this.ended = true;
    }
    if (!this.ended) throw new JsonSyntaxError('Unexpected end of JSON input');
  }
}
