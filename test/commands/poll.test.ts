// Adaptive waiting (push --wait, status --watch, gate status --watch): the first read at once, the next
// after 0.25 s, then each wait doubles up to --interval. A fake clock counts and spaces the reads.
import { describe, expect, it } from 'vitest';
import { FIRST_POLL_MS, pollDelay, pollUntil } from '../../src/services/poll.js';

/** A clock that only moves when the poller sleeps; `read` answers from the time it is read at. */
function fakeClock() {
  let now = 0;
  const readAt: number[] = [];
  return {
    readAt,
    now: () => now,
    sleep: async (ms: number) => {
      now += ms;
    },
    read<T>(answer: (t: number) => T) {
      return async () => {
        readAt.push(now);
        return answer(now);
      };
    },
  };
}

describe('pollDelay', () => {
  it('0.25 s, then twice as long each time, never over the interval', () => {
    expect(FIRST_POLL_MS).toBe(250);
    expect(Array.from({ length: 7 }, (_, i) => pollDelay(i, 3000))).toEqual([
      250, 500, 1000, 2000, 3000, 3000, 3000,
    ]);
    expect(Array.from({ length: 3 }, (_, i) => pollDelay(i, 100))).toEqual([100, 100, 100]);
    expect(pollDelay(5000, 3_600_000)).toBe(3_600_000);
  });
});

describe('pollUntil', () => {
  it('a job that ends within 50 ms is seen on the second read, 0.25 s after the first', async () => {
    const clock = fakeClock();
    const seen: string[] = [];
    const last = await pollUntil(
      clock.read((t) => (t < 50 ? 'QUEUED' : 'SUCCEEDED')),
      (status) => status === 'SUCCEEDED',
      (status) => status,
      { intervalMs: 3000, sleep: clock.sleep },
      (status) => void seen.push(status),
    );
    expect(last).toBe('SUCCEEDED');
    expect(clock.readAt).toEqual([0, 250]);
    expect(seen).toEqual(['QUEUED', 'SUCCEEDED']);
  });

  it('a 10 s job is read 8 times (not 4 at a fixed 3 s, nor 40 at 0.25 s), each change reported once', async () => {
    const clock = fakeClock();
    const seen: string[] = [];
    await pollUntil(
      clock.read((t) => (t < 1000 ? 'QUEUED' : t < 10_000 ? 'RUNNING' : 'SUCCEEDED')),
      (status) => status === 'SUCCEEDED',
      (status) => status,
      { intervalMs: 3000, sleep: clock.sleep },
      (status) => void seen.push(status),
    );
    expect(clock.readAt).toEqual([0, 250, 750, 1750, 3750, 6750, 9750, 12750]);
    expect(seen).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
  });

  it('with the status already known (push --wait: the registration answered QUEUED), the first read is at once and the known status is not reported again', async () => {
    const clock = fakeClock();
    const seen: string[] = [];
    await pollUntil(
      clock.read((t) => (t < 50 ? 'QUEUED' : 'SUCCEEDED')),
      (status) => status === 'SUCCEEDED',
      (status) => status,
      { intervalMs: 3000, sleep: clock.sleep, known: 'QUEUED' },
      (status) => void seen.push(status),
    );
    expect(clock.readAt).toEqual([0, 250]);
    expect(seen).toEqual(['SUCCEEDED']);
  });

  it('with the status known, a read the server held until the job ended is the only one', async () => {
    const clock = fakeClock();
    const seen: string[] = [];
    await pollUntil(
      clock.read(() => 'SUCCEEDED'),
      (status) => status === 'SUCCEEDED',
      (status) => status,
      { intervalMs: 3000, sleep: clock.sleep, known: 'QUEUED' },
      (status) => void seen.push(status),
    );
    expect(clock.readAt).toEqual([0]);
    expect(seen).toEqual(['SUCCEEDED']);
  });

  it('what is already done is read once, with no wait', async () => {
    const clock = fakeClock();
    await pollUntil(
      clock.read(() => 'SUCCEEDED'),
      () => true,
      (s) => s,
      { intervalMs: 3000, sleep: clock.sleep },
      () => undefined,
    );
    expect(clock.readAt).toEqual([0]);
    expect(clock.now()).toBe(0);
  });

  it('an aborted wait ends the poll with the abort (Ctrl-C)', async () => {
    const controller = new AbortController();
    let reads = 0;
    const polling = pollUntil(
      async () => {
        reads += 1;
        return 'QUEUED';
      },
      () => false,
      (s) => s,
      { intervalMs: 3000, signal: controller.signal },
      () => controller.abort(),
    );
    await expect(polling).rejects.toMatchObject({ name: 'AbortError' });
    expect(reads).toBe(1);
  });
});
