// One input rule for every string the server accepts (bodies, queries, path parameters, artifacts): no NUL
// (PostgreSQL text cannot hold it) and no unpaired UTF-16 surrogate (it cannot be encoded as UTF-8, so it
// would be stored as U+FFFD, silently changed). Checked where each input is validated, after the caller is
// authenticated and authorized; what still reaches the database malformed is mapped to 400 by the error
// handler (INPUT_SQLSTATES in errors.ts).
import { badRequest } from './errors.js';

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

/** The first string in `value` (keys included) that breaks the rule, with its JSON path. */
export function findBadString(value: unknown, path = ''): { path: string; problem: string } | undefined {
  if (typeof value === 'string') {
    const problem = badCharacter(value);
    return problem === undefined ? undefined : { path: path || '/', problem };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const found = findBadString(value[i], `${path}/${i}`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const keyProblem = badCharacter(key);
      if (keyProblem !== undefined) return { path: `${path}/${key}`, problem: `a key with ${keyProblem}` };
      const found = findBadString(item, `${path}/${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/** 400 `invalid_input` when any string of `value` breaks the rule; `where` names the input (body, query). */
export function checkInput(value: unknown, where: string): void {
  const bad = findBadString(value);
  if (bad === undefined) return;
  throw badRequest(
    'invalid_input',
    `The ${where} holds ${bad.problem} at ${bad.path}: send well-formed text (UTF-8, no NUL).`,
    { where, path: bad.path },
  );
}
