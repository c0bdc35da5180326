// CSV as records export writes it and import reads it: RFC 4180 quoting, and null apart from "".
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, csvValue } from '../../src/core/csv.js';

describe('csvField', () => {
  it('quotes what must be quoted and doubles quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('"')).toBe('""""');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
    expect(csvField(' lead')).toBe('" lead"');
    expect(csvField('trail ')).toBe('"trail "');
    expect(csvField('tab\tin')).toBe('tab\tin');
  });

  it('writes null as an empty field and "" as a quoted empty one; numbers and booleans bare', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
    expect(csvField('')).toBe('""');
    expect(csvField(-12.5)).toBe('-12.5');
    expect(csvField(9007199254740991)).toBe('9007199254740991');
    expect(csvField(false)).toBe('false');
    expect(csvField({ a: [1, ','] })).toBe('"{""a"":[1,"",""]}"');
  });
});

describe('a line written, read back by an RFC 4180 reader', () => {
  it('gives every value back, null and "" apart, typed by the column', () => {
    const values = ['x,y', '"q"', 'multi\r\nline', '', null, ' s ', 'é🚀\u2028\u0085'];
    const text = csvLine(values) + csvLine([42, -0.5, true, null]);
    const rows = parse(text, {
      relax_column_count: true,
      cast: (value, context) => ({ value, quoted: context.quoting }),
    }) as unknown as Array<Array<{ value: string; quoted: boolean }>>;
    expect(rows[0]?.map((c) => csvValue(c.value, c.quoted, 'text'))).toEqual(values);
    const types = ['integer', 'numeric', 'boolean', 'integer'] as const;
    expect(rows[1]?.map((c, i) => csvValue(c.value, c.quoted, types[i]))).toEqual([42, -0.5, true, null]);
  });
});

describe('csvValue', () => {
  it('reads numbers and booleans only when written as such, else keeps the text for the table to refuse', () => {
    expect(csvValue('12', false, 'integer')).toBe(12);
    expect(csvValue('1.5', false, 'integer')).toBe('1.5');
    expect(csvValue('99999999999999999999', false, 'integer')).toBe('99999999999999999999');
    expect(csvValue('1e3', false, 'numeric')).toBe(1000);
    expect(csvValue('abc', false, 'numeric')).toBe('abc');
    expect(csvValue('TRUE', false, 'boolean')).toBe(true);
    expect(csvValue('f', false, 'boolean')).toBe(false);
    expect(csvValue('maybe', false, 'boolean')).toBe('maybe');
    expect(csvValue('', false, 'text')).toBeNull();
    expect(csvValue('', true, 'text')).toBe('');
    expect(csvValue('007', false, 'text')).toBe('007');
  });
});
