// The rules `gds auth login` applies before it talks to anyone: which hosts may use plain http, what
// counts as a live token, and the client id.
import { describe, expect, it } from 'vitest';
import type { Profile } from '../../src/auth/config.js';
import { clientIdFrom, insecureAllowed, liveToken } from '../../src/auth/login.js';
import { CliError } from '../../src/core/errors.js';
import { isLoopbackUrl } from '../../src/core/url-policy.js';

describe('plain http', () => {
  it('is allowed for loopback hosts only', () => {
    for (const url of [
      'http://127.0.0.1:8787',
      'http://localhost/x',
      'http://[::1]:9',
      'http://127.8.9.10',
    ]) {
      expect(isLoopbackUrl(new URL(url))).toBe(true);
      expect(insecureAllowed(new URL(url), 'the service')).toBe(true);
    }
    expect(insecureAllowed(new URL('https://gds.example.com'), 'the service')).toBe(false);
    for (const url of ['http://gds.example.com', 'http://127.0.0.1.example.com', 'http://10.0.0.1']) {
      expect(isLoopbackUrl(new URL(url))).toBe(false);
      let error: unknown;
      try {
        insecureAllowed(new URL(url), 'the service');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect((error as CliError).exitCode).toBe(2);
      expect((error as CliError).message).toContain('must use https');
    }
  });
});

describe('a live token', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const session = (expiresAt?: string): Profile => ({
    kind: 'session',
    base: 'https://x',
    ...(expiresAt ? { expiresAt } : {}),
  });

  it('is a static token, or a session whose access token has not expired', () => {
    expect(liveToken(undefined, now)).toBe(false);
    expect(liveToken({ kind: 'static', base: 'https://x', token: 'cli_x' }, now)).toBe(true);
    expect(liveToken(session('2026-01-01T12:30:00Z'), now)).toBe(true);
    expect(liveToken(session('2026-01-01T11:59:59Z'), now)).toBe(false);
    expect(liveToken(session(), now)).toBe(false);
  });
});

describe('client id', () => {
  it('is gds-cli unless GDS_CLIENT_ID says otherwise', () => {
    expect(clientIdFrom({})).toBe('gds-cli');
    expect(clientIdFrom({ GDS_CLIENT_ID: '' })).toBe('gds-cli');
    expect(clientIdFrom({ GDS_CLIENT_ID: 'corp-cli' })).toBe('corp-cli');
  });
});
