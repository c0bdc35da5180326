import { describe, expect, it } from 'vitest';
import { countText } from '../../src/core/count-text.js';

describe('countText', () => {
  it("writes every integer as toLocaleString('en') does", () => {
    const values = [
      0, 7, 42, 999, 1000, 1001, 65_536, 262_144, 999_999, 1_000_000, 2_097_152, -1, -1234, -999_999,
    ];
    for (let i = 0; i < 60; i += 1) values.push(Math.floor(Math.random() * 10 ** (i % 16)));
    values.push(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER);
    for (const value of values) expect(countText(value)).toBe(value.toLocaleString('en'));
  });

  it('leaves fractions and unsafe integers to toLocaleString', () => {
    for (const value of [1.5, 1234.5678, 2 ** 60, Number.NaN, Infinity]) {
      expect(countText(value)).toBe(value.toLocaleString('en'));
    }
  });
});
