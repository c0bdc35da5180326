// What gds says back of a user's input: short, one line's worth, and nothing a terminal would act on.
import { describe, expect, it } from 'vitest';
import { echoed, echoedList, quotedEcho } from '../../src/core/echo.js';

describe('echoed', () => {
  it('keeps a short text as it is, and cuts a long one at 80 characters with …', () => {
    expect(echoed('t_42')).toBe('t_42');
    expect(echoed('a'.repeat(80))).toBe('a'.repeat(80));
    expect(echoed('a'.repeat(100_000))).toBe(`${'a'.repeat(79)}…`);
  });

  it('strips control characters first, and never splits a character of two UTF-16 units', () => {
    expect(echoed('\u001b]0;title\u0007name\u001b[31m')).toBe('name');
    const cut = echoed('😀'.repeat(100));
    expect(cut).toBe(`${'😀'.repeat(79)}…`);
    expect(echoed('😀'.repeat(80))).toBe('😀'.repeat(80));
  });
});

describe('quotedEcho', () => {
  it('quotes as JSON does, cut as echoed cuts', () => {
    expect(quotedEcho('say "hi"')).toBe('"say \\"hi\\""');
    expect(quotedEcho('a'.repeat(1_000))).toBe(`"${'a'.repeat(79)}…"`);
  });
});

describe('echoedList', () => {
  it('names at most 10, then says how many more', () => {
    const names = Array.from({ length: 25 }, (_, i) => `n${i}`);
    expect(echoedList(names.slice(0, 3))).toBe('n0, n1, n2');
    expect(echoedList(names)).toBe('n0, n1, n2, n3, n4, n5, n6, n7, n8, n9, … and 15 more');
  });
});
