// Whether JSON.stringify would write two values the same, told without writing them where it can be told at
// once: `gds plan` compares thousands of definitions and contracts whose values are mostly the same. Buys
// a no-change plan of 2,000 models 20 MB less garbage and 33 -> 11 ms of comparing (docs/bench.md, fifteenth
// pass).

/**
 * JSON.stringify(a) === JSON.stringify(b): the same value (or object) is written the same; arrays are
 * compared element by element; anything else is written and compared.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b) && !hasToJson(a) && !hasToJson(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!sameElement(a[i], b[i])) return false;
    return true;
  }
  return JSON.stringify(a) === JSON.stringify(b);
}

/** An array's element: what JSON.stringify leaves out of an object (undefined, a function) it writes as null. */
function sameElement(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return sameJson(a, b);
  return (JSON.stringify(a) ?? 'null') === (JSON.stringify(b) ?? 'null');
}

function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}
