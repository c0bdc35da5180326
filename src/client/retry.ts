// When a failed attempt is tried again, and after how long. Pure: the transport supplies the clock and the dice.

export interface RetryPolicy {
  /** Retries after the first attempt, all causes together (default 3). */
  maxRetries: number;
  /** First backoff delay; doubles on each retry (default 250 ms). */
  baseDelayMs: number;
  /** Ceiling of one backoff delay (default 4 s). */
  maxDelayMs: number;
  /** Longest `Retry-After` the client waits out; a longer one fails at once with the 429 (default 60 s). */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 3,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
  maxRetryAfterSeconds: 60,
};

/** What one attempt ended with, as far as retrying is concerned. */
export type AttemptOutcome =
  | { kind: 'status'; status: number; retryAfterSeconds: number | undefined }
  /** `answerTimedOut`: the request went and no answer came in time (the service may still be at it). */
  | { kind: 'network'; answerTimedOut?: boolean };

/** `refused`: the service answered that the attempt stored nothing (a 429; a 503 with Retry-After: busy, or rolled back). */
export type RetryDecision =
  { retry: false } | { retry: true; delayMs: number; reason: string; refused?: true };

const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE']);
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

/**
 * Retry rules: a 429, and a 503 with `Retry-After` (the service busy: nothing was done), on any method
 * wait for `Retry-After`; connection failures and other 502/503/504 are retried only for idempotent
 * methods, since a POST may have taken effect, and for a request with an `Idempotency-Key` (`keyed`),
 * which the service applies once however often it is sent, except after waiting out a whole answer
 * timeout (the service is slow, not gone: the same wait again helps no one); at most `maxRetries`
 * retries in all.
 */
export function decideRetry(
  method: string,
  outcome: AttemptOutcome,
  retriesSoFar: number,
  policy: RetryPolicy,
  random: () => number,
  keyed = false,
): RetryDecision {
  if (retriesSoFar >= policy.maxRetries) return { retry: false };
  const busy = outcome.kind === 'status' && outcome.status === 503 && outcome.retryAfterSeconds !== undefined;
  if (outcome.kind === 'status' && (outcome.status === 429 || busy)) {
    const wait = outcome.retryAfterSeconds;
    if (wait === undefined)
      return { retry: true, delayMs: backoffMs(retriesSoFar, policy, random), reason: '429', refused: true };
    if (wait > policy.maxRetryAfterSeconds) return { retry: false };
    return {
      retry: true,
      delayMs: wait * 1000,
      reason: `${outcome.status}, Retry-After ${wait}s`,
      refused: true,
    };
  }
  if (!IDEMPOTENT.has(method) && !(keyed && !(outcome.kind === 'network' && outcome.answerTimedOut)))
    return { retry: false };
  if (outcome.kind === 'network') {
    return { retry: true, delayMs: backoffMs(retriesSoFar, policy, random), reason: 'connection failure' };
  }
  if (TRANSIENT_STATUSES.has(outcome.status)) {
    return { retry: true, delayMs: backoffMs(retriesSoFar, policy, random), reason: String(outcome.status) };
  }
  return { retry: false };
}

/** Exponential backoff with jitter: between half and all of min(max, base * 2^n). */
export function backoffMs(retriesSoFar: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesSoFar);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  // An HTTP date names its month; Date.parse alone would read "-5" as a year.
  if (!/[a-z]{3}/i.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}
