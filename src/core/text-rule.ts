// The text a database can store, one rule for gds and the service: no NUL (PostgreSQL text cannot hold it) and
// no unpaired UTF-16 surrogate (it cannot be encoded as UTF-8, so it would be stored as U+FFFD, silently
// changed). The service refuses such input (server/input-rule.ts); gds leaves out a dbt manifest that holds it.

// NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one (no `u` flag:
// the expression sees UTF-16 code units).
const BAD_CHARACTER = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `text` breaks the rule, or undefined when it does not. */
export function badCharacter(text: string): string | undefined {
  const match = BAD_CHARACTER.exec(text);
  if (!match) return undefined;
  return match[0] === '\u0000'
    ? `a NUL character at offset ${match.index}`
    : `an unpaired surrogate (not UTF-8) at offset ${match.index}`;
}

/**
 * How deep a body may nest arrays and objects: no request of the contract needs more than a dozen levels (a
 * dbt manifest's deepest are about 10). Deeper input is refused here, before anything walks it recursively
 * (a body of 100,000 nested objects overflowed the stack: 500).
 */
export const MAX_INPUT_NESTING = 128;

/** The first string in `value` (keys included) that breaks the rule, with its JSON path. */
export function findBadString(
  value: unknown,
  path = '',
  depth = 0,
): { path: string; problem: string } | undefined {
  if (depth > MAX_INPUT_NESTING && typeof value === 'object' && value !== null) {
    return {
      path: path.length > 200 ? `${path.slice(0, 200)}…` : path,
      problem: `nesting deeper than ${MAX_INPUT_NESTING} levels`,
    };
  }
  if (typeof value === 'string') {
    const problem = badCharacter(value);
    return problem === undefined ? undefined : { path: path || '/', problem };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findBadString(value[i], `${path}/${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = badCharacter(key);
      if (keyProblem !== undefined) return { path: `${path}/${key}`, problem: `a key with ${keyProblem}` };
      const found = findBadString(item, `${path}/${key}`, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}
