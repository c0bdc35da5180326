// Fixed one-minute windows per key (an integration token id on table endpoints).
import type { Clock } from './clock.js';

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
