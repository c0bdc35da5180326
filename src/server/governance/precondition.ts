// The optional precondition of a write: `If-Match: <version>`, the version of the thing written that the
// client computed its write from (the gate1.yml version, the definition version, the contract revision;
// 0 for "none yet"). Checked inside the writing transaction, after the "no change" comparison: a write
// of what the service already holds is `changed: false` whatever version it was computed from; any
// other write computed from a version that has since moved is 412 `precondition_failed` (HTTP's answer
// to a failed If-Match; 409 stays the spec's name-or-source collision), naming the current version, and
// writes nothing.
import type { FastifyRequest } from 'fastify';
import { badRequest, HttpError } from '../errors.js';

const VERSION = /^(?:W\/)?"?v?(0|[1-9]\d{0,9})"?$/;

/** The version `If-Match` names; undefined without the header; 400 `invalid_if_match` for anything else. */
export function expectedVersion(request: FastifyRequest): number | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) return undefined;
  const text = (Array.isArray(header) ? header.join(',') : header).trim();
  const match = VERSION.exec(text);
  if (!match?.[1]) {
    throw badRequest(
      'invalid_if_match',
      'If-Match takes the version the write was computed from: a number such as 3 (or "3"), 0 when there was none.',
      { ifMatch: text.slice(0, 100) },
    );
  }
  return Number(match[1]);
}

/**
 * Throws 412 `precondition_failed` when `expected` is given and is not `current`. `what` names the thing
 * versioned ("gate1.yml of t_42"); `reread` says how to compute the write again.
 */
export function checkVersion(
  what: string,
  current: number,
  expected: number | undefined,
  reread: string,
): void {
  if (expected === undefined || expected === current) return;
  throw new HttpError(
    412,
    'precondition_failed',
    `${what} is now v${current}, not v${expected} as this write expected: it changed meanwhile. ${reread}`,
    { currentVersion: current, expectedVersion: expected },
  );
}
