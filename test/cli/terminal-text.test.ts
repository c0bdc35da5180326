import { describe, expect, it } from 'vitest';
import { onOneLine, stripControlCharacters } from '../../src/core/terminal-text.js';

describe('stripControlCharacters', () => {
  it.each([
    ['CSI colour', 'a\u001b[31mred\u001b[0m b', 'ared b'],
    ['CSI cursor movement and erase', 'x\u001b[2J\u001b[10;5Hy\u001b[K', 'xy'],
    ['OSC window title ended by BEL', '\u001b]0;pwned title\u0007ok', 'ok'],
    ['OSC 8 hyperlink ended by ST', '\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\', 'click'],
    ['OSC 52 clipboard write', 'safe\u001b]52;c;ZWNobyBydW0=\u0007', 'safe'],
    ['8-bit CSI (C1)', 'a\u009b31mb', 'ab'],
    ['8-bit OSC ended by 8-bit ST', 'a\u009d0;title\u009cb', 'ab'],
    ['DCS string', 'a\u001bPq#0;2;0;0;0\u001b\\b', 'ab'],
    ['short escapes (charset, keypad)', 'a\u001b(0b\u001b=c', 'abc'],
    ['carriage return overwrite', 'good\rbad', 'goodbad'],
    ['backspace, bell, NUL, DEL', 'a\bb\u0007c\u0000d\u007fe', 'abcde'],
    ['a lone trailing ESC', 'end\u001b', 'end'],
    ['bidi overrides (Trojan Source)', 'invoice_\u202Efdp.exe\u202C', 'invoice_fdp.exe'],
    ['bidi embeddings and marks', 'a\u202Ab\u202Bc\u200Ed\u200Fe\u061Cf', 'abcdef'],
    ['bidi isolates', '\u2066x\u2067y\u2068z\u2069', 'xyz'],
    ['zero width space, word joiner, BOM', 'ad\u200Bmin\u2060\uFEFF', 'admin'],
    ['line and paragraph separators', 'a\u2028b\u2029c', 'abc'],
    // Never the text after them: cp1252 "Žižek" read as latin1 is \u008E i \u009E e k (U+009E starts a PM).
    ['a lone 8-bit PM introducer, not what follows', 'Slavoj \u008Ei\u009Eek', 'Slavoj iek'],
    ['a lone 8-bit OSC introducer, not what follows', 'Café \u009dQuote', 'Café Quote'],
    ['lone 8-bit DCS, SOS and APC introducers', 'a\u0090b\u0098c\u009fd', 'abcd'],
    ['an 8-bit string ended only on a later line, not the lines', 'a\u009dx\nb\u0007c', 'ax\nbc'],
    ['an open 7-bit OSC string up to the end of its line only', 'a\u001b]0;title\nnext', 'a\nnext'],
  ])('removes %s', (_name, input, expected) => {
    expect(stripControlCharacters(input)).toBe(expected);
  });

  // Searched to the end of the line from each introducer, 100,000 introducers took minutes: 300,000 would
  // take half an hour, so a search per introducer ends this test at its limit, whatever the machine's load.
  it('strips a long line of open introducers in one pass, not once per introducer', () => {
    expect(stripControlCharacters('a\u009e\u009d'.repeat(300_000))).toBe('a'.repeat(300_000));
    expect(stripControlCharacters('\u001b]x\n'.repeat(300_000))).toBe('\n'.repeat(300_000));
  });

  it('keeps newlines, tabs, non-ASCII text and the joiners emoji and scripts need', () => {
    const text = 'línea 1\n\tcolumn: naïve ✓ 表 👩\u200D💻 می\u200Cخواهم\n';
    expect(stripControlCharacters(text)).toBe(text);
  });

  it('leaves no control character behind whatever the input', () => {
    let all = '';
    for (let code = 0; code < 0xa0; code += 1) all += String.fromCharCode(code);
    const stripped = stripControlCharacters(all + all);
    expect(stripped).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});

describe('onOneLine', () => {
  it('leaves a string it does not change as it is, and changes every other as stripping then joining does', () => {
    const slow = (text: string) =>
      stripControlCharacters(text.replace(/[\r\v\f\u0085\u2028\u2029]/g, '\n')).replace(/\n+/g, ' ');
    for (let code = 0; code <= 0xffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const text = `a${String.fromCharCode(code)}b`;
      if (onOneLine(text) !== slow(text))
        expect.fail(`U+${code.toString(16)}: ${JSON.stringify(onOneLine(text))}`);
    }
    for (const text of ['orders', 'é ü 中文 🎉', 'a\u00a0b', 'tabs\tstay', 'a\u200db', '\u{e0041}'])
      expect(onOneLine(text)).toBe(slow(text));
  });

  it('shows each run of line breaks and separators as one space: no line of a view is forged, no words joined', () => {
    expect(onOneLine('orders\nState:  CERTIFIED')).toBe('orders State:  CERTIFIED');
    expect(onOneLine('a\r\nb\n\nc\u2028d\u2029e\u000bf\u000cg\u0085h\ri')).toBe('a b c d e f g h i');
    expect(onOneLine('x\u2028\u2029\r✓ Certified')).toBe('x ✓ Certified');
    // An escape sequence left open ends at a separator as at a line break: what follows it is shown.
    expect(onOneLine('a\u001b]8;;http://evil\rb')).toBe('a b');
    expect(onOneLine('tabs\tstay, \u001b[2Jescapes go')).toBe('tabs\tstay, escapes go');
  });
});
