// CSV as records export writes it and import reads it: RFC 4180 quoting, and null apart from "".
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvLine, csvValue, neutraliseFormula, restoreFormula } from '../../src/core/csv.js';

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
    // Digits a double cannot hold are kept as written (sent so; the table checks its range), never rounded.
    expect(JSON.stringify(csvValue('99999999999999999999', false, 'integer'))).toBe('99999999999999999999');
    expect(JSON.stringify(csvValue('+9007199254740993', false, 'integer'))).toBe('9007199254740993');
    expect(JSON.stringify(csvValue('123456789012345678.123456', false, 'numeric'))).toBe(
      '123456789012345678.123456',
    );
    expect(JSON.stringify(csvValue('-.1000000000000000000001', false, 'numeric'))).toBe(
      '-0.1000000000000000000001',
    );
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

describe('formula-like cells (OWASP CSV injection)', () => {
  const risky = ['=1+1', '+cmd', '-2+3', '@SUM(A1)', '\tx', '\rx', "'=x", "''+y", '=HYPERLINK("http://x")'];
  const harmless = ["'plain", "it's", 'a=b', 'plain', '', "'"];

  it("writes a text a spreadsheet would run with a leading ', and nothing else changed", () => {
    for (const text of risky) expect(neutraliseFormula(text)).toBe(`'${text}`);
    for (const text of harmless) expect(neutraliseFormula(text)).toBe(text);
    expect(csvField('=1+1')).toBe("'=1+1");
    expect(csvField('=1,2')).toBe('"\'=1,2"');
    // A number is never touched, a negative one included; only text is neutralised.
    expect(csvField(-5)).toBe('-5');
    expect(csvLine(['=1+1', -1, '@x'])).toBe("'=1+1,-1,'@x\r\n");
  });

  it('--raw-cells writes every text as it is', () => {
    expect(csvField('=1+1', { rawCells: true })).toBe('=1+1');
    expect(csvLine(['-2+3', '@x'], { rawCells: true })).toBe('-2+3,@x\r\n');
  });

  it('import takes the quote off again: every text survives export | import, quotes before a formula too', () => {
    for (const text of [...risky, ...harmless]) {
      expect(restoreFormula(neutraliseFormula(text))).toBe(text);
      const [row] = parse(csvLine([text]), {
        cast: (value, context) => ({ value, quoted: context.quoting }),
      }) as unknown as Array<Array<{ value: string; quoted: boolean }>>;
      const cell = row?.[0];
      expect(cell && csvValue(cell.value, cell.quoted, 'text')).toBe(text);
    }
    expect(csvValue("'-5", false, 'numeric')).toBe(-5);
    expect(csvValue("'=x", false, 'text', { rawCells: true })).toBe("'=x");
  });
});
