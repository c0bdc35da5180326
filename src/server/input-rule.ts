// One input rule for every string the server accepts (bodies, queries, path parameters, artifacts): no NUL
// (PostgreSQL text cannot hold it) and no unpaired UTF-16 surrogate (it cannot be encoded as UTF-8, so it
// would be stored as U+FFFD, silently changed). Checked where each input is validated, after the caller is
// authenticated and authorized; what still reaches the database malformed is mapped to 400 by the error
// handler (INPUT_SQLSTATES in errors.ts).
import { textTooLong } from '../core/text-bounds.js';
import { badCharacter, findBadString, MAX_INPUT_NESTING } from '../core/text-rule.js';
import { badRequest, notFound } from './errors.js';
import { cutId, MAX_ID_LENGTH } from './ids.js';

/** Whether `value` nests arrays and objects deeper than MAX_INPUT_NESTING (iterative: any depth is safe). */
export function nestedTooDeep(value: unknown): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (typeof item !== 'object' || item === null) continue;
    if (depth > MAX_INPUT_NESTING) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** 400 `invalid_input` when `value` nests deeper than MAX_INPUT_NESTING; `where` names the input. */
export function checkNesting(value: unknown, where: string): void {
  if (!nestedTooDeep(value)) return;
  throw badRequest(
    'invalid_input',
    `The ${where} holds nesting deeper than ${MAX_INPUT_NESTING} levels: no request needs that deep a value.`,
    {
      where,
    },
  );
}

/** 400 `invalid_input` when any string of `value` breaks the rule; `where` names the input (body, query). */
export function checkInput(value: unknown, where: string): void {
  const bad = findBadString(value);
  if (bad === undefined) return;
  throw badRequest(
    'invalid_input',
    `The ${where} holds ${bad.problem} at ${bad.path}: ${
      bad.problem.startsWith('nesting')
        ? 'no request needs that deep a value'
        : 'send well-formed text (UTF-8, no NUL)'
    }.`,
    { where, path: bad.path },
  );
}

/** What a door answers for an unknown id of each kind (`not_found` for another). */
const NOT_FOUND_CODES: Record<string, string> = {
  tableId: 'table_not_found',
  recordId: 'record_not_found',
  jobId: 'job_not_found',
  requestId: 'recertification_request_not_found',
  tokenId: 'token_not_found',
  connectorId: 'connector_not_found',
  replaceId: 'replace_target_not_found',
  baseline: 'baseline_not_found',
  environmentLabel: 'environment_not_found',
};

/**
 * The ids a request names (REST path parameters, GraphQL and MCP arguments, body fields), before any is looked up: one that
 * breaks the input rule (a NUL, an unpaired surrogate) or is longer than MAX_ID_LENGTH names nothing, 404 as
 * an unknown id; a long one is said back cut.
 */
export function checkIds(ids: unknown): void {
  for (const [name, value] of Object.entries((ids ?? {}) as Record<string, unknown>)) {
    if (typeof value !== 'string') continue;
    if (value.length > MAX_ID_LENGTH)
      throw notFound(
        NOT_FOUND_CODES[name] ?? 'not_found',
        `No ${name} ${cutId(value)} exists: an id is at most ${MAX_ID_LENGTH} characters.`,
        { [name]: cutId(value), length: value.length },
      );
    const bad = badCharacter(value);
    if (bad !== undefined)
      throw notFound('not_found', `No ${name} ${JSON.stringify(value)} exists: it holds ${bad}.`);
  }
}

/**
 * 400 `text_too_long` when `value` of `field` is over `max` characters (src/core/text-bounds.ts): refused
 * before anything changes, rather than kept cut short or left out of its audit entry.
 */
export function checkTextLength(field: string, value: string, max: number): void {
  const refusal = textTooLong(field, value, max);
  if (refusal === undefined) return;
  throw badRequest('text_too_long', refusal.message, { field, max, length: refusal.length });
}
