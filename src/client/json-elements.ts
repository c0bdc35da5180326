// A JSON answer read as it arrives, with the elements of one array member of its root object parsed one at a
// time: a page of held tables (500 tables, about 1.5 MB of text) is then never one string, and each table's
// text is garbage as soon as it is parsed, while V8 still holds it in its young generation. Read whole, the
// page's text and its chunks outlived the collections JSON.parse's own allocations set off, and every page's
// went to the old generation: 10 pages of 5,000 tables, about 30 MB of a no-change plan's peak.
//
// The text outside that array (the root's braces, its other members, the array's brackets and commas) is
// kept as a skeleton, each element written there as `0`, and the skeleton is parsed by JSON.parse: text that
// is not JSON is refused there or by an element's own parse, as JSON.parse of the whole would refuse it.
import { parseLossless } from '../core/lossless-json.js';

/** Reads an answer's text in pieces, in order; `end` gives its value (undefined for no text at all). */
export interface BodyReader<T> {
  write(text: string): void;
  /** Throws when the text is not JSON. */
  end(): T;
}

const [QUOTE, BACKSLASH, COMMA, COLON, LEFT_BRACE, RIGHT_BRACE, LEFT_BRACKET, RIGHT_BRACKET] = Array.from(
  '"\\,:{}[]',
  (character) => character.charCodeAt(0),
);

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * The reader of a JSON answer whose root object's `member` is an array: each element is parsed alone (numbers
 * kept to the digit, as parseLossless does) and handed to `each` as it is parsed; the value is what
 * parseLossless of the whole text would give.
 */
export function arrayElementsReader<T, E = unknown>(
  member: string,
  each?: (element: E) => void,
): BodyReader<T> {
  const skeleton: string[] = [];
  let elements: unknown[] = [];
  let split: unknown[] | undefined;
  let wrote = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // At depth 1: the text of the string being read (from `stringStart` of the chunk, after earlier parts),
  // and the last one read, which a `:` makes the key of the value after it.
  let stringParts: string[] | undefined;
  let stringStart = -1;
  let lastString: string | undefined;
  let key: string | undefined;
  // Inside the array being split (depth 2 and deeper): the element being read.
  let splitting = false;
  let elementParts: string[] = [];
  let elementStart = -1;

  const endElement = (chunk: string, end: number) => {
    const text = elementParts.join('') + (elementStart < 0 ? '' : chunk.slice(elementStart, end));
    elementParts = [];
    elementStart = -1;
    if (text.trim() === '') return;
    const element = parseLossless(text);
    each?.(element as E);
    elements.push(element);
    skeleton.push('0');
  };

  /**
   * The index of the quote that ends the string `chunk` is in from `from` on, or -1 when the chunk ends first
   * (`escaped` then says whether its last character escapes the next chunk's first).
   */
  const closingQuote = (chunk: string, from: number): number => {
    let at = from;
    if (escaped) {
      escaped = false;
      at += 1;
    }
    for (;;) {
      const quote = chunk.indexOf('"', at);
      const end = quote < 0 ? chunk.length : quote;
      let backslashes = 0;
      while (end - backslashes - 1 >= at && chunk.charCodeAt(end - backslashes - 1) === BACKSLASH)
        backslashes += 1;
      if (quote < 0) {
        escaped = backslashes % 2 === 1;
        return -1;
      }
      if (backslashes % 2 === 0) return quote;
      at = quote + 1;
    }
  };

  const scan = (chunk: string) => {
    // Where the text to copy to the skeleton starts in this chunk (-1: inside the split array).
    let copyFrom = splitting ? -1 : 0;
    for (let i = 0; i < chunk.length; i += 1) {
      if (inString) {
        const close = closingQuote(chunk, i);
        if (close < 0) break;
        i = close;
        inString = false;
        if (stringParts !== undefined) {
          lastString = JSON.parse(stringParts.join('') + chunk.slice(stringStart, i + 1)) as string;
          stringParts = undefined;
        }
        continue;
      }
      const code = chunk.charCodeAt(i);
      if (splitting && depth === 2) {
        if (code === COMMA || code === RIGHT_BRACKET) {
          endElement(chunk, i);
          if (code === RIGHT_BRACKET) {
            depth = 1;
            splitting = false;
            split = elements;
            copyFrom = i;
          } else skeleton.push(',');
          continue;
        }
        if (elementStart < 0 && elementParts.length === 0 && !isSpace(code)) elementStart = i;
      }
      if (code === QUOTE) {
        inString = true;
        if (depth === 1) {
          stringParts = [];
          stringStart = i;
        }
      } else if (code === LEFT_BRACE || code === LEFT_BRACKET) {
        depth += 1;
        if (depth === 2 && code === LEFT_BRACKET && key === member) {
          skeleton.push(chunk.slice(copyFrom, i + 1));
          copyFrom = -1;
          splitting = true;
          elements = [];
        }
      } else if (code === RIGHT_BRACE || code === RIGHT_BRACKET) depth -= 1;
      else if (depth === 1 && code === COLON) key = lastString;
      else if (depth === 1 && code === COMMA) key = undefined;
    }
    if (copyFrom >= 0) skeleton.push(chunk.slice(copyFrom));
    if (inString && stringParts !== undefined) {
      stringParts.push(chunk.slice(stringStart));
      stringStart = 0;
    }
    if (elementStart >= 0) {
      elementParts.push(chunk.slice(elementStart));
      elementStart = 0;
    }
  };

  return {
    write(text) {
      if (text === '') return;
      wrote = true;
      scan(text);
    },
    end() {
      if (!wrote) return undefined as T;
      const value = parseLossless(skeleton.join('')) as Record<string, unknown> | null;
      // The array the skeleton's parse kept (JSON.parse keeps a member's last value) is the last one read.
      const kept = split === undefined || value === null ? undefined : value[member];
      if (Array.isArray(kept) && kept.length === split?.length)
        (value as Record<string, unknown>)[member] = split;
      return value as T;
    },
  };
}
