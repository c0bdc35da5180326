import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, backoffMs, decideRetry, parseRetryAfter } from '../../src/client/retry.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['30', 30],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:00:45 GMT', 45],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    ['', undefined],
    [null, undefined],
  ])('reads %j as %j seconds', (value, seconds) => {
    expect(parseRetryAfter(value, now)).toBe(seconds);
  });
});

describe('backoffMs', () => {
  it('stays between half and all of the doubled, capped delay', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, r) => {
        const ceiling = Math.min(DEFAULT_RETRY_POLICY.maxDelayMs, DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** n);
        const delay = backoffMs(n, DEFAULT_RETRY_POLICY, () => r);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(ceiling);
      }),
    );
  });
});

describe('decideRetry', () => {
  const decide = (method: string, status: number | 'network', retries = 0, retryAfterSeconds?: number) =>
    decideRetry(
      method,
      status === 'network' ? { kind: 'network' } : { kind: 'status', status, retryAfterSeconds },
      retries,
      DEFAULT_RETRY_POLICY,
      () => 0.5,
    ).retry;

  it.each(['GET', 'PUT', 'DELETE'])('retries %s on connection failures and 502/503/504 only', (method) => {
    expect([502, 503, 504, 'network' as const].map((s) => decide(method, s))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect([400, 401, 403, 404, 409, 422, 500].map((s) => decide(method, s))).toEqual(Array(7).fill(false));
  });

  it.each(['POST', 'PATCH'])(
    'never retries %s after a 5xx or a broken connection, but does after a 429',
    (method) => {
      expect([500, 502, 503, 504, 'network' as const].map((s) => decide(method, s))).toEqual(
        Array(5).fill(false),
      );
      expect(decide(method, 429, 0, 3)).toBe(true);
    },
  );

  it('retries a POST with an Idempotency-Key (applied once however often sent) as a GET, but not after an answer timeout', () => {
    const keyed = (outcome: Parameters<typeof decideRetry>[1]) =>
      decideRetry('POST', outcome, 0, DEFAULT_RETRY_POLICY, () => 0.5, true).retry;
    expect(
      [502, 503, 504].map((status) => keyed({ kind: 'status', status, retryAfterSeconds: undefined })),
    ).toEqual([true, true, true]);
    expect(keyed({ kind: 'network' })).toBe(true);
    expect(keyed({ kind: 'network', answerTimedOut: true })).toBe(false);
    expect(
      [400, 401, 403, 409, 422, 500].map((status) =>
        keyed({ kind: 'status', status, retryAfterSeconds: undefined }),
      ),
    ).toEqual(Array(6).fill(false));
    expect(decideRetry('POST', { kind: 'network' }, 3, DEFAULT_RETRY_POLICY, () => 0.5, true).retry).toBe(
      false,
    );
  });

  it.each(['POST', 'PATCH', 'GET'])(
    'waits out a 503 that says when to come back (Retry-After: the service was busy) on %s too',
    (method) => {
      expect(decide(method, 503, 0, 8)).toBe(true);
      expect(
        decideRetry(
          method,
          { kind: 'status', status: 503, retryAfterSeconds: 8 },
          0,
          DEFAULT_RETRY_POLICY,
          () => 0.5,
        ),
      ).toEqual({ retry: true, delayMs: 8000, reason: '503, Retry-After 8s', refused: true });
      expect(decide(method, 503, 0, 61)).toBe(false);
    },
  );

  it('stops after three retries whatever the cause', () => {
    expect(decide('GET', 503, 2)).toBe(true);
    expect(decide('GET', 503, 3)).toBe(false);
    expect(decide('POST', 429, 3, 1)).toBe(false);
  });
});
