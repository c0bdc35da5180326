// The precheck before PostgreSQL's scanner looks for a name longer than 63 bytes (mayHoldLongName in
// src/core/artifacts/pg-view.ts): it may say yes for nothing, never no where the scanner finds such a name.
// Held to the scanner over generated texts that mix long and short names, quoted ones with "" inside,
// multi-byte letters, and string literals and comments holding stray quotes; and it says no for the real
// 262-line view, which then needs no scanner.
import { describe, expect, it } from 'vitest';
import { pgGrammar } from '../../../src/core/artifacts/pg-grammar.js';
import { mayHoldLongName } from '../../../src/core/artifacts/pg-view.js';
import { readSharedFixture } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';

/** What pg-view.ts refuses: an identifier token whose name (quotes taken off, "" as ") is over 63 bytes. */
async function scannerFindsLongName(sql: string): Promise<boolean> {
  const { scanSync } = await pgGrammar();
  let tokens: Array<{ tokenName: string; text: string }>;
  try {
    tokens = scanSync(sql).tokens;
  } catch {
    return false;
  }
  return tokens.some((t) => {
    if (t.tokenName !== 'IDENT') return false;
    const name = t.text.startsWith('"') ? t.text.slice(1, -1).replaceAll('""', '"') : t.text;
    return Buffer.byteLength(name) > 63;
  });
}

/** The precheck as readPostgresView runs it: on a text PostgreSQL parses, with its tree (else undefined). */
async function precheck(sql: string): Promise<boolean | undefined> {
  const { parseSync } = await pgGrammar();
  let tree: unknown;
  try {
    tree = parseSync(sql);
  } catch {
    return undefined;
  }
  return mayHoldLongName(sql, tree);
}

/** A small deterministic generator (the same texts at every run). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

function generated(count: number): string[] {
  const next = random(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const letters = ['a', 'Z', '_', '9', '$', 'é', '売', '🙂'];
  const word = (length: number) =>
    Array.from({ length }, () => pick(letters))
      .join('')
      .replace(/^[9$]/, 'a');
  const lengths = [1, 5, 20, 21, 22, 31, 32, 33, 62, 63, 64, 65, 80];
  const pieces: Array<() => string> = [
    () => word(pick(lengths)),
    () => `"${word(pick(lengths))}"`,
    () => `"${word(pick(lengths))}""${word(pick(lengths))}"`,
    () => `'${word(pick([1, 30, 70]))} " ${word(pick([1, 30, 70]))}'`,
    () => `-- a "comment ${word(pick([1, 40, 70]))}\n`,
    () => `/* "${word(pick([1, 70]))} */`,
    () => pick([',', ' ', '.', '(', ')', ' + ', ' as ']),
  ];
  return Array.from({ length: count }, () => {
    const parts = Array.from({ length: 4 + Math.floor(next() * 12) }, () => pick(pieces)());
    return `create view v as select ${parts.join(' ')} from t`;
  });
}

describe('mayHoldLongName', () => {
  it('says yes wherever the scanner finds a name over 63 bytes (1,500 generated texts, those PostgreSQL parses)', async () => {
    let long = 0;
    let skipped = 0;
    for (const sql of generated(1_500)) {
      const answer = await precheck(sql);
      if (answer === undefined) continue; // refused by the grammar before any name is checked
      if (await scannerFindsLongName(sql)) {
        long += 1;
        expect(answer, sql).toBe(true);
      } else if (!answer) skipped += 1;
    }
    // Both kinds are there: texts with a long name, and texts the precheck spares the scanner.
    expect(long).toBeGreaterThan(30);
    expect(skipped).toBeGreaterThan(30);
  });

  it('finds a long name wherever it is written, quoted or not', async () => {
    const long = 'é'.repeat(32); // 64 bytes
    const view = (list: string, from = 't') => `create view v as select ${list} from ${from}`;
    expect(await precheck(view(`"${long}"`))).toBe(true);
    expect(await precheck(view(`'"' as a, "${long}"`))).toBe(true);
    expect(await precheck(view(`"${'a'.repeat(32)}""${'b'.repeat(31)}"`))).toBe(true);
    expect(await precheck(view(`${'x'.repeat(64)}`))).toBe(true);
    expect(await precheck(view(`${'売'.repeat(22)}`))).toBe(true);
    expect(await precheck(view('a', `"${'🙂'.repeat(16)}"`))).toBe(true);
    expect(await precheck(view(`a as x`, `s.t join u on t.${'k'.repeat(70)} = u.k`))).toBe(true);
    expect(await precheck(view(`"${'a'.repeat(59)}", ${'b'.repeat(59)}, "ORDER"`))).toBe(false);
  });

  it('spares the scanner for the real 262-line view', needs(noSharedFixtures), async () => {
    const sql = readSharedFixture('real/sql/snowflake_jfb_shared.billing_estimator_rates.sql');
    expect(await precheck(sql)).toBe(false);
  });
});
