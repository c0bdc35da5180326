// The waits a user sets by environment variable. GDS_LOCK_WAIT_MS=0 (a CI job that would rather fail at once
// than wait on another gds) waited the whole 20 s default; a value past 2^31 - 1 ms made the timer fire at once
// (GDS_KEYCHAIN_TIMEOUT_MS=1e10: the hold of a Ctrl-C for a save ended after 1 ms).
import { describe, expect, it } from 'vitest';
import { profileLockWaitMs } from '../../src/auth/config.js';
import { saveBoundMs } from '../../src/auth/refresh.js';
import { keychainTimeoutMs } from '../../src/auth/secret-store.js';
import { completionWaitMs } from '../../src/cli/completion-values.js';
import { MAX_TIMER_MS } from '../../src/core/env-milliseconds.js';

describe('GDS_LOCK_WAIT_MS', () => {
  const wait = (value: string | undefined) => profileLockWaitMs({ GDS_LOCK_WAIT_MS: value });

  it('0 is one try and no wait; a number is that many ms', () => {
    expect(wait('0')).toBe(0);
    expect(wait('1500')).toBe(1500);
  });

  it('unset, empty, not a number or negative: the 20 s default', () => {
    for (const value of [undefined, '', ' ', 'abc', '-5', 'NaN'])
      expect(wait(value), String(value)).toBe(20_000);
  });

  it('past what a timer can wait: the longest it can', () => {
    expect(wait('1e12')).toBe(MAX_TIMER_MS);
    expect(wait('Infinity')).toBe(MAX_TIMER_MS);
  });
});

describe('GDS_KEYCHAIN_TIMEOUT_MS', () => {
  it('0 and nonsense are the 3 s default; past a timer, the longest it can, and so is the hold of a signal', () => {
    expect(keychainTimeoutMs({ GDS_KEYCHAIN_TIMEOUT_MS: '0' })).toBe(3_000);
    expect(keychainTimeoutMs({ GDS_KEYCHAIN_TIMEOUT_MS: 'soon' })).toBe(3_000);
    expect(keychainTimeoutMs({ GDS_KEYCHAIN_TIMEOUT_MS: '1e10' })).toBe(MAX_TIMER_MS);
    expect(saveBoundMs({ GDS_KEYCHAIN_TIMEOUT_MS: '1e10' })).toBe(MAX_TIMER_MS);
    expect(saveBoundMs({ GDS_KEYCHAIN_TIMEOUT_MS: '1000' })).toBeGreaterThan(1000);
  });
});

describe('GDS_COMPLETION_TIMEOUT_MS', () => {
  it('at most ten minutes, else the 2 s default', () => {
    expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '5000' })).toBe(5000);
    expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '1e12' })).toBe(600_000);
    expect(completionWaitMs({ GDS_COMPLETION_TIMEOUT_MS: '0' })).toBe(2_000);
  });
});
