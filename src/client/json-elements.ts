// A JSON answer read as it arrives, with the elements of one array member of its root object parsed one at a
// time: a page of held tables (500 tables, about 1.5 MB of text) is then never one string, and each table's
// text is garbage as soon as it is parsed, while V8 still holds it in its young generation. Read whole, the
// page's text and its chunks outlived the collections JSON.parse's own allocations set off, and every page's
// went to the old generation: 10 pages of 5,000 tables, about 30 MB of a no-change plan's peak.
//
// The answer's bytes are cut by the JSON splitter (src/core/json-split.ts), which the dbt manifest's reader
// uses too. The text outside that array (the root's braces, its other members, the array's brackets and
// commas) is kept as a skeleton, each element written there as `0`, and the skeleton is parsed by JSON.parse:
// text that is not JSON is refused by the splitter, by an element's own parse or there, as JSON.parse of the
// whole would refuse it.
import { JsonSplitter } from '../core/json-split.js';
import { parseLossless } from '../core/lossless-json.js';

/** Reads an answer's body in pieces, in order; `end` gives its value (undefined for no body at all). */
export interface BodyReader<T> {
  /** The body's next bytes, as they arrive. */
  write(chunk: Buffer): void;
  /** Throws when the text is not JSON. */
  end(): T;
}

/**
 * The reader of a JSON answer whose root object's `member` is an array: each element is parsed alone (numbers
 * kept to the digit, as parseLossless does) and handed to `each` as it is parsed; the value is what
 * parseLossless of the whole text would give.
 */
export function arrayElementsReader<T, E = unknown>(
  member: string,
  each?: (element: E) => void,
): BodyReader<T> {
  // The root object's members in order: the text of each, or the elements of an array cut (written as `0`s).
  const skeleton: Array<string | { name: string; elements: unknown[] }> = [];
  let elements: unknown[] = [];
  let split: unknown[] | undefined;
  /** The root's text when it is not an object. */
  let root: string | undefined;
  let wrote = false;
  const splitter = new JsonSplitter({
    value(name, kind) {
      if (kind !== 'array' || name !== member) return false;
      elements = [];
      split = elements;
      skeleton.push({ name, elements });
      return true;
    },
    piece(text, _offset, name, _key, cut) {
      if (!cut) {
        skeleton.push(`${JSON.stringify(name)}:${text}`);
        return;
      }
      const element = parseLossless(text);
      each?.(element as E);
      elements.push(element);
    },
    root(text) {
      root = text;
    },
  });

  return {
    write(chunk) {
      if (chunk.length === 0) return;
      wrote = true;
      splitter.write(chunk);
    },
    end() {
      if (!wrote) return undefined as T;
      splitter.end();
      if (root !== undefined) return parseLossless(root) as T;
      const text = skeleton
        .map((part) =>
          typeof part === 'string'
            ? part
            : `${JSON.stringify(part.name)}:[${part.elements.map(() => '0').join(',')}]`,
        )
        .join(',');
      const value = parseLossless(`{${text}}`) as Record<string, unknown>;
      // The array the skeleton's parse kept (JSON.parse keeps a member's last value) is the last one read.
      const kept = value[member];
      if (split !== undefined && Array.isArray(kept) && kept.length === split.length) value[member] = split;
      return value as T;
    },
  };
}
