// The pacing of long data-plane runs by the rate headers: requests go at once while the window has some
// left; after an answer that says none is left, the next waits until the reset, on the service's clock.
import { describe, expect, it } from 'vitest';
import { RatePacer } from '../../src/client/rate-pacer.js';

function headers(values: Record<string, string>) {
  return { get: (name: string) => values[name.toLowerCase()] ?? null };
}

const httpDate = (ms: number) => new Date(ms).toUTCString();

describe('RatePacer', () => {
  it('lets requests go while the window has some left', () => {
    const pacer = new RatePacer({ now: () => 1_000_000 });
    pacer.observe(
      headers({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '3', 'x-ratelimit-reset': '1060' }),
    );
    expect(pacer.delay()).toBe(0);
    expect(pacer.limit).toBe(200);
  });

  it('waits from the service’s Date to its Reset when none is left, whatever the local clock says', async () => {
    let now = 5_000_000; // the local clock is far from the service's
    const slept: number[] = [];
    const pacer = new RatePacer({
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
    });
    pacer.observe(
      headers({
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1700000060',
        date: httpDate(1_700_000_017_000),
      }),
    );
    expect(pacer.delay()).toBe(43_025);
    now += 3_000;
    expect(pacer.delay()).toBe(40_025);
    const waits: number[] = [];
    expect(await pacer.wait(undefined, (ms) => waits.push(ms))).toBe(40_025);
    expect(slept).toEqual([40_025]);
    expect(waits).toEqual([40_025]);
    expect(pacer.delay()).toBe(0);
    expect(pacer.waitedMs).toBe(40_025);
  });

  it('ends the wait when the window it saw open ends, where the headers allow that', () => {
    // Service clock = local clock + 0.4 s. The window opened by our request answered at local 10.0 s.
    let now = 10_000;
    const pacer = new RatePacer({ now: () => now });
    const server = (local: number) => local + 400;
    const answer = (remaining: number, sentAt: number) =>
      pacer.observe(
        headers({
          'x-ratelimit-limit': '5',
          'x-ratelimit-remaining': String(remaining),
          'x-ratelimit-reset': String(Math.ceil((server(10_000) + 60_000) / 1000)),
          date: httpDate(Math.floor(server(now) / 1000) * 1000),
        }),
        sentAt,
      );
    answer(4, now - 5);
    for (const remaining of [3, 2, 1, 0]) {
      now += 700;
      answer(remaining, now - 5);
    }
    // Reset says 71 s on the service's clock, 70.6 s here at the latest; the window we opened ends at 70.0 s.
    expect(now + pacer.delay()).toBe(70_025);
  });

  it('ignores answers without the headers, and a later answer with requests left clears a wait', () => {
    const pacer = new RatePacer({ now: () => 0 });
    pacer.observe(headers({}));
    expect(pacer.delay()).toBe(0);
    pacer.observe(headers({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }));
    expect(pacer.delay()).toBe(30_025);
    pacer.observe(headers({ 'x-ratelimit-remaining': '199', 'x-ratelimit-reset': '90' }));
    expect(pacer.delay()).toBe(0);
  });
});
