// Adaptive waiting shared by `push --wait`, `status --watch` and `gate status --watch`: the first read at
// once, the next after 0.25 s, then each wait doubles up to --interval. A job that ends in a few
// milliseconds is seen by the first read on the reference server (it holds a read of a job queued less
// than 0.25 s ago until the job ends), else a quarter of a second later; a long one costs one request per
// --interval.
import { setTimeout as sleepFor } from 'node:timers/promises';

/** The wait before the second read (the first read is immediate). */
export const FIRST_POLL_MS = 250;

export interface PollOptions {
  /** The longest wait between two reads (--interval). */
  intervalMs: number;
  signal?: AbortSignal;
  /** Replaces the real timer (tests count and space the polls with it). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
  /**
   * The fingerprint of a value the caller read just before (e.g. the job a registration answered): that
   * value is not reported again. The first read still comes at once: the reference server answers a read
   * of a job queued less than 0.25 s ago when the job ends (within that 0.25 s), so a job that ends in
   * a few milliseconds is seen then; a server that answers at once costs one request more.
   */
  known?: string;
}

/** The wait after the `attempt`-th read (0-based): 250 ms, 500 ms, 1 s, … capped at `intervalMs`. */
export function pollDelay(attempt: number, intervalMs: number): number {
  return Math.min(intervalMs, FIRST_POLL_MS * 2 ** Math.min(attempt, 30));
}

/**
 * Reads until `done` holds, calling `onChange` with the first value and each one whose `fingerprint`
 * differs from the one before; returns the last value read.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  fingerprint: (value: T) => string,
  options: PollOptions,
  onChange: (value: T) => void | Promise<void>,
): Promise<T> {
  const sleep = options.sleep ?? ((ms, signal) => sleepFor(ms, undefined, { signal }));
  let previous = options.known;
  for (let attempt = 0; ; attempt += 1) {
    const value = await read();
    const current = fingerprint(value);
    if (current !== previous) await onChange(value);
    previous = current;
    if (done(value)) return value;
    await sleep(pollDelay(attempt, options.intervalMs), options.signal);
  }
}
