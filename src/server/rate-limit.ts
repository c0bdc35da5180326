// Fixed one-minute windows per key: an integration token id on table endpoints, a client address for failed
// authentication, a person for minting tokens.
import type { Clock } from './clock.js';
import { HttpError } from './errors.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Epoch milliseconds when the window ends. */
  resetAt: number;
  allowed: boolean;
}

export const RATE_WINDOW_MS = 60_000;

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    readonly limit: number,
    private readonly clock: Clock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  /** Whether `key` has used up its window, without counting a request. */
  exhausted(key: string): RateLimitState | null {
    const now = this.clock();
    const window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs || window.count < this.limit) return null;
    return { limit: this.limit, remaining: 0, resetAt: window.start + this.windowMs, allowed: false };
  }

  /** Counts one request for `key` and says whether it may proceed. */
  take(key: string): RateLimitState {
    const now = this.clock();
    let window = this.windows.get(key);
    if (!window || now >= window.start + this.windowMs) {
      if (this.windows.size > 10_000) this.sweep(now);
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    return {
      limit: this.limit,
      remaining: Math.max(0, this.limit - window.count),
      resetAt: window.start + this.windowMs,
      allowed: window.count <= this.limit,
    };
  }

  private sweep(now: number): void {
    for (const [key, window] of this.windows) {
      if (now >= window.start + this.windowMs) this.windows.delete(key);
    }
  }
}

export function rateLimitHeaders(state: RateLimitState, now: number): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(Math.ceil(state.resetAt / 1000)),
  };
  if (!state.allowed) headers['retry-after'] = String(Math.max(1, Math.ceil((state.resetAt - now) / 1000)));
  return headers;
}

/** The 429 of a window used up (`what` says which limit). */
export function rateLimited(state: RateLimitState, now: number, what: string): HttpError {
  const headers = rateLimitHeaders(state, now);
  return new HttpError(
    429,
    'rate_limited',
    `Rate limit of ${state.limit} ${what} per minute reached; retry after ${headers['retry-after']} seconds.`,
    { limit: state.limit },
    headers,
  );
}
