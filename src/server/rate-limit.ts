// Fixed one-minute windows per key: an integration token id on table endpoints, a client address for failed
// authentication, a person for minting tokens. The windows live in the database (gds.rate_windows), so that
// every server process on one PostgreSQL counts against the same window: one statement per counted request.
import type { Clock } from './clock.js';
import type { Queryable } from './db/handle.js';
import { HttpError } from './errors.js';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Epoch milliseconds when the window ends. */
  resetAt: number;
  allowed: boolean;
}

export const RATE_WINDOW_MS = 60_000;

/**
 * Counts `$4` requests (one, or a GraphQL request's several reads) in the key's window and answers its start
 * and count, in one statement: a window that has ended is started again at `now` (with the count `$4`),
 * otherwise its count goes up by `$4`. The row
 * lock of the upsert makes concurrent requests (of this or any other process) count one after another.
 */
const TAKE = `
  INSERT INTO gds.rate_windows AS w (key, window_start, count) VALUES ($1, $2, $4::int)
  ON CONFLICT (key) DO UPDATE SET
    window_start = CASE WHEN w.window_start <= $3 THEN $2 ELSE w.window_start END,
    count = CASE WHEN w.window_start <= $3 THEN $4::int ELSE w.count + $4::int END
  RETURNING w.window_start::float8 AS start, w.count`;

export class RateLimiter {
  /**
   * The keys this process has seen use up their window, until it ends: answered from here without a
   * statement (a flood costs no database work). Only a key's own window can end it, so this never answers
   * differently from the database; another process's requests are seen at this process's next count.
   */
  private readonly spent = new Map<string, RateLimitState>();
  private lastSweep = 0;

  /** `name` keeps this limiter's keys apart from other limiters' in the shared table. */
  constructor(
    private readonly name: string,
    readonly limit: number,
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  /**
   * Whether `key` has used up its window as far as this process knows, without counting a request (no
   * statement). With several processes, each further process learns of a used-up window at its own next
   * counted request for that key.
   */
  exhausted(key: string): RateLimitState | null {
    const known = this.spent.get(key);
    if (!known) return null;
    if (this.clock() < known.resetAt) return known;
    this.spent.delete(key);
    return null;
  }

  /** Counts `units` requests (default one) for `key` and says whether they may proceed. */
  async take(key: string, units = 1): Promise<RateLimitState> {
    if (!Number.isInteger(units) || units < 1) throw new Error(`rate limit: cannot take ${units} units`);
    const known = this.exhausted(key);
    if (known) return known;
    const now = this.clock();
    await this.sweep(now);
    const [row] = await this.db.query<{ start: number; count: number }>(TAKE, [
      `${this.name}:${key}`,
      now,
      now - this.windowMs,
      units,
    ]);
    if (!row) throw new Error('rate limit: the window upsert returned no row');
    const state: RateLimitState = {
      limit: this.limit,
      remaining: Math.max(0, this.limit - row.count),
      resetAt: row.start + this.windowMs,
      allowed: row.count <= this.limit,
    };
    if (state.remaining === 0) {
      if (this.spent.size >= 10_000) this.spent.clear();
      this.spent.set(key, { ...state, allowed: false });
    }
    return state;
  }

  /** At most once a window per process: the windows that have ended are deleted (their keys start afresh). */
  private async sweep(now: number): Promise<void> {
    if (now - this.lastSweep < this.windowMs && now >= this.lastSweep) return;
    this.lastSweep = now;
    await this.db.query('DELETE FROM gds.rate_windows WHERE key LIKE $1 AND window_start <= $2', [
      `${this.name}:%`,
      now - this.windowMs,
    ]);
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
