// parseLossless: a number no double holds keeps its digits (as JSON.rawJSON); every other value is what
// JSON.parse gives, plain numbers included.
import { describe, expect, it, vi } from 'vitest';
import { jsonSegments } from '../../src/cli/json-colour.js';
import { parseLossless } from '../../src/core/lossless-json.js';

describe('parseLossless', () => {
  it('keeps the digits of a numeric(30,6) and a bigint above 2^53 through JSON.stringify', () => {
    const text =
      '{"amount":123456789012345678.123456,"big":9007199254740993,"huge":1e400,"n":[-12345678901234567890]}';
    expect(JSON.stringify(JSON.parse(text))).not.toBe(text);
    expect(JSON.stringify(parseLossless(text))).toBe(text);
  });

  it('leaves numbers a double holds plain numbers, whatever their spelling', () => {
    const value = parseLossless(
      '{"a":1.500000,"b":9007199254740992,"c":1e3,"d":0.1,"e":100000000000000000000,"f":-0.000000000000000001,"s":"12345678901234567890"}',
    );
    expect(value).toEqual({
      a: 1.5,
      b: 9007199254740992,
      c: 1000,
      d: 0.1,
      e: 1e20,
      f: -1e-18,
      s: '12345678901234567890',
    });
  });

  it('is JSON.parse for text without a long number, errors included', () => {
    expect(parseLossless('{"total":2,"limit":50}')).toEqual({ total: 2, limit: 50 });
    expect(() => parseLossless('{"a":12345678901234567890')).toThrow(SyntaxError);
  });

  it('reads long digit runs inside strings as plain JSON.parse does, with no reviver', () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const text = '{"id":"tbl_12345678901234567890","sql":"SELECT 12345678901234567890 AS n","n":[1,2.5]}';
      expect(parseLossless(text)).toEqual(JSON.parse(text));
      expect(parse.mock.calls[0]).toEqual([text]);
      parse.mockClear();
      parseLossless('[12345678901234567890]');
      expect(parse.mock.calls[0]?.[1]).toBeTypeOf('function');
    } finally {
      parse.mockRestore();
    }
  });

  it('prints the digits in the indented JSON of gds api on a terminal', () => {
    const value = parseLossless('{"amount":123456789012345678.123456,"small":42}');
    const text = jsonSegments(value)
      .map((s) => (typeof s === 'string' ? s : s.text))
      .join('');
    expect(text).toBe('{\n  "amount": 123456789012345678.123456,\n  "small": 42\n}');
  });
});
