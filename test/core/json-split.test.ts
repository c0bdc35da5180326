// The JSON splitter of src/core/json-split.ts, which both the dbt manifest's reader (a file's chunks) and the
// held-tables page's reader (an answer's chunks) feed: whatever the chunks, the pieces it hands over put back
// together are what JSON.parse of the whole text gives, and text JSON.parse refuses it refuses, with the same
// message wherever the chunks end.
import { describe, expect, it } from 'vitest';
import {
  JsonSplitter,
  JsonSyntaxError,
  keepArrayNumberTexts,
  numberText,
  parsePiece,
} from '../../src/core/json-split.js';
import type { JsonKind } from '../../src/core/json-split.js';

/** JSON.parse's way of setting a member (a `__proto__` member is the object's own, a repeated one keeps its place). */
function set(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

interface Read {
  value?: unknown;
  error?: unknown;
  /** Each piece as handed over, with the bytes of the text it says it came from. */
  pieces: Array<{ text: string; from: string }>;
}

/**
 * `bytes` fed to a splitter in the chunks `cuts` make, the pieces parsed and put back together as the value;
 * `cut` says which of the root's members (by name and kind) are cut into their members or elements.
 */
function read(bytes: Buffer, cuts: number[], cut: (name: string, kind: JsonKind) => boolean): Read {
  const pieces: Read['pieces'] = [];
  let root: unknown;
  const object: Record<string, unknown> = {};
  let inside: Record<string, unknown> | unknown[] | undefined;
  const splitter = new JsonSplitter({
    value(name, kind) {
      const cutting = cut(name, kind);
      if (cutting && kind !== 'value') {
        inside = kind === 'array' ? [] : {};
        set(object, name, inside);
      }
      return cutting;
    },
    piece(text, offset, name, key, inCut) {
      pieces.push({ text, from: bytes.subarray(offset, offset + Buffer.byteLength(text)).toString() });
      const value: unknown = JSON.parse(text);
      if (!inCut) set(object, name, value);
      else if (Array.isArray(inside)) {
        expect(key).toBeUndefined();
        inside.push(value);
      } else set(inside as Record<string, unknown>, key as string, value);
    },
    root(text, offset) {
      pieces.push({ text, from: bytes.subarray(offset, offset + Buffer.byteLength(text)).toString() });
      root = JSON.parse(text);
    },
  });
  try {
    let at = 0;
    for (const end of [...cuts, bytes.length]) {
      splitter.write(bytes.subarray(at, end));
      at = end;
    }
    splitter.end();
    return { value: splitter.kind === 'object' ? object : root, pieces };
  } catch (error) {
    return { error, pieces };
  }
}

/** Every way of cutting `length` bytes in one or two places (and not at all). */
function* everyCut(length: number): Generator<number[]> {
  yield [];
  for (let a = 0; a <= length; a += 1) for (let b = a; b <= length; b += 1) yield [a, b];
}

const CUT_ALL = () => true;
const CUT_NONE = () => false;
const CUT_C = (name: string) => name.startsWith('c');

const VALID = [
  '{}',
  ' { } ',
  '{"a":[]}',
  '{"a":{},"b":[],"c":{}}',
  ' { "c" : [ 1 , {"a":[2,{"b":"]"}]} ] , "n" : "x" } ',
  '{"a":"c","c":["a\\"],","\\\\",[3,[4]],{"b":"}"}],"d":[1]}',
  '{"c":{"k\\"}":{"x":"\\\\\\""},"l":[],"m":null},"d":true,"e":-1.5e-3}',
  '{"ca\\u0062":[{"q":"\\\\\\""}],"n":1e400,"cz":"\\u00e9\\ud83d\\ude00"}',
  '{"c":[1],"c":{"d":2},"__proto__":{"p":1}}',
  '{"c":"\\\\","d":"\\"","e":["\\\\\\\\","\\/\\b\\f\\n\\r\\t"]}',
  `{"long":"${'x'.repeat(40)}\\\\\\"}]},{${'y'.repeat(40)}\\\\","c":["${'z'.repeat(35)}\\"]"]}`,
  '{"c":{"café":"☕ 𝄞 ünï","€":["€€","𝄞"]},"ключ":"значение"}',
  '\n\t{\r\n"c"\t:\n[\n]\r\n}\n',
  '[{"c":[1]},2]',
  '"c"',
  'null',
  ' 12 ',
  '[]',
];

const NOT_JSON = [
  '',
  '  ',
  '{',
  '{"a":1',
  '{"a":1}x',
  '{"a":1}}',
  '{"a":1,}',
  '{,"a":1}',
  '{"a" 1}',
  '{"a":}',
  '{:1}',
  '{"a"::1}',
  '{1:2}',
  '{"a":1 "b":2}',
  '{"a":1]',
  '{"c":[1,]}',
  '{"c":[,1]}',
  '{"c":[1 2]}',
  '{"c":[1]',
  '{"c":[1]]}',
  '{"c":[1],}',
  '{"c":["a]}',
  '{"c":[{]}]}',
  '{"c":[{"a":1}}]}',
  '{"c"[1]}',
  '{"c":1[2]}',
  '{"c":{"a":1,}}',
  '{"c":{"a" 1}}',
  '{"c":{1:2}}',
  '{"c":{"a":1]}',
  '{"c":{} "x":1}',
  '{"c":{}, }',
  '{"c":{"a":tru}}',
  '{"a":"\\x"}',
  '{"a":"\u0001"}',
  '[1, 2',
  '[1] 2',
  '"a',
  'nul',
];

describe('the JSON splitter', () => {
  it('hands over pieces that put back together are JSON.parse of the text, however its bytes are cut', () => {
    for (const text of VALID) {
      const bytes = Buffer.from(text);
      const whole: unknown = JSON.parse(text);
      for (const cut of [CUT_ALL, CUT_NONE, CUT_C])
        for (const cuts of everyCut(bytes.length)) {
          const { value, error, pieces } = read(bytes, cuts, cut);
          const where = `${text} cut at ${cuts.join(',')}`;
          expect(error, where).toBeUndefined();
          expect(value, where).toStrictEqual(whole);
          for (const piece of pieces) expect(piece.text, where).toBe(piece.from);
        }
    }
  });

  it('decodes a character whose bytes are cut between chunks', () => {
    // Every byte of the two-, three- and four-byte characters is a chunk's end, inside a member and a name.
    const text = '{"c":{"é☕":"é☕𝄞","𝄞":["€", "𝄞é"]},"d":"☕𝄞"}';
    const bytes = Buffer.from(text);
    for (let a = 1; a < bytes.length; a += 1)
      for (let b = a; b < bytes.length; b += 1) {
        const { value } = read(bytes, [a, b], CUT_ALL);
        expect(value, `cut at ${a},${b}`).toStrictEqual(JSON.parse(text));
      }
  });

  it('cuts a member, its members and its elements where they are, never inside a string', () => {
    const text = '{"meta":{"a":"}"},"c":{"k":"a\\",","l":[1,"]"]},"cs":["x,y",{"z":"{"}]}';
    expect(read(Buffer.from(text), [], CUT_C).pieces.map((piece) => piece.text)).toEqual([
      '{"a":"}"}',
      '"a\\","',
      '[1,"]"]',
      '"x,y"',
      '{"z":"{"}',
    ]);
  });

  it('refuses what JSON.parse refuses, with the same message however the bytes are cut', () => {
    for (const text of NOT_JSON) {
      expect(() => JSON.parse(text), text).toThrow();
      const bytes = Buffer.from(text);
      for (const cut of [CUT_ALL, CUT_NONE, CUT_C]) {
        const message = (read(bytes, [], cut).error as Error | undefined)?.message;
        for (const cuts of everyCut(bytes.length)) {
          const { error } = read(bytes, cuts, cut);
          const where = `${text} cut at ${cuts.join(',')}`;
          // A piece's own text is refused by the caller's parse (here JSON.parse's SyntaxError).
          expect(error, where).toBeInstanceOf(Error);
          expect((error as Error).message, where).toBe(message);
        }
      }
    }
  });

  it('says where the text stops being JSON, by byte', () => {
    const error = (text: string) => read(Buffer.from(text), [], CUT_ALL).error;
    expect(error('{"é":1 "b":2}')).toEqual(new JsonSyntaxError('Unexpected ":" at byte 11'));
    expect(error('{"c":[1,]}')).toEqual(new JsonSyntaxError('A value is missing at byte 8'));
    expect(error('{"c":{} "x":1}')).toEqual(new JsonSyntaxError('Expected "," or "}" at byte 8'));
    expect(error('{"a":1}x')).toEqual(new JsonSyntaxError('Unexpected text after the JSON value at byte 7'));
    expect(error('{"a":1')).toEqual(new JsonSyntaxError('Unexpected end of JSON input'));
    expect(error('{1:2}')).toEqual(new JsonSyntaxError('A member name that is not a string at byte 1'));
  });

  it('agrees with JSON.parse on texts with a byte changed, added or taken out', () => {
    // A small generator of its own (the same texts every run): each text is a valid one, edited once.
    let seed = 35;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const bytes = '{}[]",:\\ 1a';
    // ASCII texts, so that an edit is of one byte.
    const sources = VALID.filter((text) => text.length > 4 && Buffer.byteLength(text) === text.length);
    for (let round = 0; round < 4000; round += 1) {
      const source = sources[random(sources.length)] as string;
      const at = random(source.length + 1);
      const byte = bytes[random(bytes.length)] as string;
      const edit = random(3);
      const text =
        edit === 0
          ? source.slice(0, at) + byte + source.slice(at + 1)
          : edit === 1
            ? source.slice(0, at) + byte + source.slice(at)
            : source.slice(0, at) + source.slice(at + 1);
      let parsed: { value: unknown } | undefined;
      try {
        parsed = { value: JSON.parse(text) };
      } catch {
        parsed = undefined;
      }
      const buffer = Buffer.from(text);
      const cuts = [random(buffer.length + 1)];
      for (const cut of [CUT_ALL, CUT_C]) {
        const { value, error } = read(buffer, cuts, cut);
        if (parsed === undefined) expect(error, text).toBeInstanceOf(Error);
        else expect({ value, error }, text).toStrictEqual({ value: parsed.value, error: undefined });
      }
    }
  });
});

describe("the numbers' texts (numberText), as a dbt manifest writes them", () => {
  it('parsePiece with keepNumberTexts keeps each number JSON.parse would print otherwise', () => {
    const node = parsePiece('{"values": [1.0, 2, 1e-05, 12345678901234567890, 2.5], "n": 3.0}', 0, true) as {
      values: number[];
    };
    expect([0, 1, 2, 3, 4].map((i) => numberText(node.values, i))).toEqual([
      '1.0',
      undefined,
      '1e-05',
      '12345678901234567890',
      '2.5',
    ]);
    expect(numberText(node, 'n')).toBe('3.0');
    // Parsed without it, nothing is kept.
    const plain = parsePiece('{"values": [1.0]}', 0) as { values: number[] };
    expect(numberText(plain.values, 0)).toBeUndefined();
  });

  it("keepArrayNumberTexts reads the array's text alone; one holding strings, or two equal ones, it leaves", () => {
    const alone = '{"kwargs": {"values": [1.0, 2], "other": [7.0]}}';
    const node = JSON.parse(alone) as { kwargs: { values: number[] } };
    expect(keepArrayNumberTexts(node.kwargs.values, 'values', alone)).toBe(true);
    expect([numberText(node.kwargs.values, 0), numberText(node.kwargs.values, 1)]).toEqual([
      '1.0',
      undefined,
    ]);
    // Another equal array under the key (a meta's [1, 2]): which one is the kwargs' is not known.
    const twice = '{"meta": {"values": [1, 2]}, "kwargs": {"values": [1.0, 2]}}';
    const both = JSON.parse(twice) as { kwargs: { values: number[] } };
    expect(keepArrayNumberTexts(both.kwargs.values, 'values', twice)).toBe(false);
    const mixed = '{"values": ["a", 1.0]}';
    const strings = JSON.parse(mixed) as { values: unknown[] };
    expect(keepArrayNumberTexts(strings.values, 'values', mixed)).toBe(false);
  });
});
