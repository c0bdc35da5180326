// Paces a long run of data-plane requests by the service's rate headers (§8: X-RateLimit-Remaining and
// X-RateLimit-Reset on every answer), so that a steady run never meets a 429: requests go as fast as the
// service answers while the window has requests left, and once an answer says none is left, the next one
// waits until the window resets.
//
// When is that, on this machine's clock? Reset is whole seconds on the service's clock (rounded up), so the
// wait ends at Reset plus the offset between the two clocks. The offset is bounded from every answer: its Date
// (whole seconds, rounded down) was stamped after the request left and before the answer came, so
// send - Date - 1 s < offset <= receipt - Date. The wait uses the upper bound (never early, whatever the local
// clock says); over a run of answers the bounds close in on the true offset. And when an answer shows that a
// request of ours opened the window (remaining one below the limit) and its end then lies inside that bound,
// the window ends at most the window's length after that answer came: the wait ends there instead, close to
// the true reset.
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { ResponseHeaders } from './transport.js';

/** A little past the reset, for timer granularity. */
const MARGIN_MS = 25;
/** The spec's window: "200 requests per minute". */
const WINDOW_MS = 60_000;

export interface RatePacerOptions {
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export class RatePacer {
  private resumeAt = 0;
  /** Bounds of (local clock - service clock) in ms, from the answers so far. */
  private offsetLow = -Infinity;
  private offsetHigh = Infinity;
  /** Local time by which the window we opened ends at the latest, when we saw it open. */
  private openedWindowEnd: number | undefined;
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

  /**
   * Reads an answer's rate headers; an answer without them changes nothing. `sentAt` is when its request left
   * (local clock); without it only the answer's receipt bounds the clocks' offset.
   */
  observe(headers: ResponseHeaders, sentAt?: number): void {
    const received = this.now();
    this.limit = wholeNumber(headers.get('x-ratelimit-limit')) ?? this.limit;
    const date = Date.parse(headers.get('date') ?? '');
    if (!Number.isNaN(date)) {
      this.offsetHigh = Math.min(this.offsetHigh, received - date);
      if (sentAt !== undefined) this.offsetLow = Math.max(this.offsetLow, sentAt - date - 1000);
    }
    const remaining = wholeNumber(headers.get('x-ratelimit-remaining'));
    const reset = wholeNumber(headers.get('x-ratelimit-reset'));
    if (remaining === undefined || reset === undefined) return;
    if (this.limit !== undefined && remaining === this.limit - 1) this.openedWindowEnd = received + WINDOW_MS;
    if (remaining > 0) {
      this.resumeAt = 0;
      return;
    }
    let end: number;
    if (Number.isFinite(this.offsetHigh)) {
      // Reset on this machine's clock, never early: at the offset's upper bound.
      end = reset * 1000 + this.offsetHigh;
      const low = Number.isFinite(this.offsetLow) ? this.offsetLow : this.offsetHigh - 1000;
      const earliest = reset * 1000 - 1000 + low;
      // The window we saw open ends by then, if that lies where the headers say the reset can be.
      const opened = this.openedWindowEnd;
      if (opened !== undefined && opened > earliest && opened < end) end = opened;
    } else {
      end = reset * 1000; // no Date: this machine's clock taken for the service's
    }
    this.resumeAt = Math.max(received, end) + MARGIN_MS;
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
    this.openedWindowEnd = undefined;
    return ms;
  }
}

function wholeNumber(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}
