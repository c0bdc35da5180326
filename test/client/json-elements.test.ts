import { describe, expect, it } from 'vitest';
import { arrayElementsReader } from '../../src/client/json-elements.js';
import { parseLossless } from '../../src/core/lossless-json.js';

/** The reader's value for `text` given in `pieces` (each as the bytes the transport hands over), or the error it threw. */
function read(pieces: string[], each?: (element: unknown) => void): { value?: unknown; error?: unknown } {
  const reader = arrayElementsReader<unknown>('tables', each);
  try {
    for (const piece of pieces) reader.write(Buffer.from(piece));
    return { value: reader.end() };
  } catch (error) {
    return { error };
  }
}

/** `text` cut at every pair of places (and whole). */
function everyCut(text: string): string[][] {
  const cuts: string[][] = [[text]];
  for (let a = 0; a <= text.length; a += 1)
    for (let b = a; b <= text.length; b += 1) cuts.push([text.slice(0, a), text.slice(a, b), text.slice(b)]);
  return cuts;
}

const VALID = [
  '{"tables":[],"nextCursor":null}',
  ' { "tables" : [ 1 , {"a":[2,{"b":"]"}]} ] , "nextCursor" : "x" } ',
  '{"a":"tables","tables":["a\\"],","\\\\",[3,[4]],{"b":"}"}],"c":[1]}',
  '{"tables":[1],"tables":[2,3]}',
  '{"x":{"tables":[1,2]},"tables":[{"n":12345678901234567890}]}',
  '{"ta\\u0062les":[{"q":"\\\\\\""}],"n":1e400}',
  '{"tables":{"a":[1]}}',
  '[{"tables":[1]}]',
  '"tables"',
  'null',
];

const NOT_JSON = [
  '{"tables":[1,]}',
  '{"tables":[,1]}',
  '{"tables":[1 2]}',
  '{"tables":[1]',
  '{"tables":[1]}x',
  '{"tables":[1]]}',
  '{"tables":[1],}',
  '{"tables":["a]}',
  '{"tables":[{]}]}',
  '{"tables":[{"a":1}}]}',
  '{"tables"[1]}',
  '{"tables":1[2]}',
  '  ',
];

describe('a JSON answer read with one array member parsed element by element', () => {
  it('reads what JSON.parse reads, however the text is cut, numbers kept to the digit', () => {
    for (const text of VALID)
      for (const pieces of everyCut(text))
        expect(read(pieces), JSON.stringify(pieces)).toEqual({ value: parseLossless(text) });
    const big = read(['{"tables":[{"n":1234567890', '1234567890}]}']).value as {
      tables: Array<{ n: unknown }>;
    };
    expect(JSON.stringify(big)).toBe('{"tables":[{"n":12345678901234567890}]}');
  });

  it('refuses what JSON.parse refuses, however the text is cut', () => {
    for (const text of NOT_JSON) {
      expect(() => JSON.parse(text)).toThrow();
      for (const pieces of everyCut(text))
        expect(read(pieces).error, JSON.stringify(pieces)).toBeInstanceOf(Error);
    }
  });

  it('hands over each element of the array as it is parsed, in order, and nothing for no text', () => {
    const seen: unknown[] = [];
    const { value } = read(['{"tables":[{"id":1},', '{"id":2}]', ',"nextCursor":null}'], (element) => {
      seen.push(structuredClone(element));
      (element as { seen?: boolean }).seen = true;
    });
    expect(seen).toEqual([{ id: 1 }, { id: 2 }]);
    expect(value).toEqual({
      tables: [
        { id: 1, seen: true },
        { id: 2, seen: true },
      ],
      nextCursor: null,
    });
    expect(read([])).toEqual({ value: undefined });
    expect(read(['', ''])).toEqual({ value: undefined });
  });
});
