// The PostgreSQL view reader is linear in the view's length: byte offsets become character
// offsets through one table computed once (they were re-tested against the whole file per token: 30,000
// lines took 147 s), SELECT items find their tokens by index, and the scanner runs only where its tokens
// decide something. These tests check the reader's answers on views of 30,000 lines, where the old reader
// ran past the test's timeout; the time itself is a bench row (scripts/bench/core.ts), not an assertion.
import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../../src/core/artifacts/index.js';
import { charOffsetsOf } from '../../../src/core/artifacts/pg-grammar.js';

const LINES = 30_000;

/** A view of `lines` columns, one a line, with `suffix` on each alias. */
function longView(lines: number, alias: (i: number) => string = (i) => `col_${i}`): string {
  const items = Array.from({ length: lines }, (_, i) => `  coalesce(c${i}, 0) AS ${alias(i)}`);
  return `CREATE VIEW analytics.wide AS SELECT\n${items.join(',\n')}\nFROM raw.t\n`;
}

const parse = (content: string) => parseArtifact({ fileName: 'wide.sql', content });

describe('a view of 30,000 lines', () => {
  it('is read whole: every column, in order', async () => {
    const result = await parse(longView(LINES));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.artifact.columns).toHaveLength(LINES);
    expect(result.artifact.columns.at(-1)).toEqual({ name: `col_${LINES - 1}` });
  });

  it('with names of several bytes: a duplicate near the end is pointed at by line and character column', async () => {
    const content = longView(LINES, (i) => (i === LINES - 2 ? 'straße_ñ_1' : `straße_ñ_${i}`));
    expect(await parse(content)).toMatchObject({
      ok: false,
      error: { code: 'duplicate_column', line: LINES, column: 26 },
    });
  });

  it('a name over 63 bytes near the end is refused where it is written', async () => {
    const long = `"${'é'.repeat(32)}"`; // 64 bytes inside the quotes
    const content = longView(LINES, (i) => (i === LINES - 1 ? long : `col_${i}`));
    expect(await parse(content)).toMatchObject({
      ok: false,
      error: { code: 'invalid_column', line: LINES + 1, column: 26 },
    });
  });
});

describe('charOffsetsOf', () => {
  /** The definition: the characters of the first `byteOffset` bytes. */
  const reference = (text: string, byteOffset: number) =>
    Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8').length;

  it('agrees with decoding the prefix, at every character boundary of mixed text', () => {
    const text = 'a é ✓ 𝄞 z\n"ñ" SELECT 1 -- ü';
    const offsets = charOffsetsOf(text);
    let byte = 0;
    for (const char of text) {
      expect(offsets(byte)).toBe(reference(text, byte));
      byte += Buffer.byteLength(char);
    }
    expect(offsets(byte)).toBe(text.length);
    expect(offsets(byte + 10)).toBe(text.length);
  });

  it('is the identity on ASCII', () => {
    const offsets = charOffsetsOf('SELECT 1');
    expect([0, 3, 8].map(offsets)).toEqual([0, 3, 8]);
  });
});
