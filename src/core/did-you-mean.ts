// Near-miss suggestions ("did you mean …?") over a closed set of allowed words: command ids, flag names,
// flag values, gate1.yml keys and severities. One rule everywhere, so `HARD` suggests `HARD_FAIL`.

/** Levenshtein distance: insertions, deletions and substitutions each cost 1. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] ?? 0;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}

const normalise = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The allowed word the given one most likely meant, or undefined when none is close: the same word but
 * for case and punctuation; else the shortest word it begins (`HARD` → `HARD_FAIL`); else the nearest by
 * edit distance, within a third of the word's length (at least 1, at most 3).
 */
export function closest(given: string, allowed: readonly string[]): string | undefined {
  const key = normalise(given);
  if (key === '') return undefined;
  const same = allowed.find((word) => normalise(word) === key);
  if (same !== undefined) return same;
  const extended = allowed
    .filter((word) => normalise(word).startsWith(key))
    .toSorted((a, b) => a.length - b.length);
  if (key.length >= 3 && extended[0] !== undefined) return extended[0];
  const limit = Math.min(3, Math.max(1, Math.floor(given.length / 3)));
  let best: { word: string; distance: number } | undefined;
  for (const word of allowed) {
    const distance = editDistance(given.toLowerCase(), word.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { word, distance };
  }
  return best?.word;
}
