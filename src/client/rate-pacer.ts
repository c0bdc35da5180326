// Paces a long run of data-plane requests by the service's rate headers (§8: X-RateLimit-Remaining and
// X-RateLimit-Reset on every answer), so that a steady run never meets a 429: requests go as fast as the
// service answers while the window has requests left, and once an answer says none is left, the next one
// waits until the window resets. The wait is measured on the service's own clock (its Date header), so a
// client clock that is off does not matter; Date is whole seconds (rounded down) and Reset is rounded up,
// so the wait is never short, and at most about a second long per window (under 2 % of a minute).
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { ResponseHeaders } from './transport.js';

/** A little past the reset, for timer granularity. */
const MARGIN_MS = 50;

export interface RatePacerOptions {
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export class RatePacer {
  private resumeAt = 0;
  /** Time spent waiting for windows to reset, in ms. */
  waitedMs = 0;
  /** The window size the service last stated (X-RateLimit-Limit). */
  limit: number | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;

  constructor(options: RatePacerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
  }

  /** Reads an answer's rate headers; an answer without them changes nothing. */
  observe(headers: ResponseHeaders): void {
    this.limit = wholeNumber(headers.get('x-ratelimit-limit')) ?? this.limit;
    const remaining = wholeNumber(headers.get('x-ratelimit-remaining'));
    const reset = wholeNumber(headers.get('x-ratelimit-reset'));
    if (remaining === undefined || reset === undefined) return;
    if (remaining > 0) {
      this.resumeAt = 0;
      return;
    }
    const received = this.now();
    const date = Date.parse(headers.get('date') ?? '');
    const serverNow = Number.isNaN(date) ? received : date;
    this.resumeAt = received + Math.max(0, reset * 1000 - serverNow) + MARGIN_MS;
  }

  /** How long the next request must wait, in ms (0: it may go now). */
  delay(): number {
    return Math.max(0, this.resumeAt - this.now());
  }

  /** Waits until the next request may go; `onWait` hears how long first. Returns the ms waited. */
  async wait(signal?: AbortSignal, onWait?: (ms: number) => void): Promise<number> {
    const ms = this.delay();
    if (ms === 0) return 0;
    onWait?.(ms);
    await this.sleep(ms, signal);
    this.waitedMs += ms;
    this.resumeAt = 0;
    return ms;
  }
}

function wholeNumber(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}
