// Whether a profile read before a long request (a sign-in, `tokens issue|refresh --save-profile`) still holds the
// same credentials at the save: a renewal of them is no change, other credentials saved meanwhile are one.
import { describe, expect, it } from 'vitest';
import type { Profile, SessionProfile } from '../../src/auth/config.js';
import { sameCredentials } from '../../src/auth/profiles.js';

const signedIn: SessionProfile = {
  kind: 'session',
  base: 'https://gds.example.com/v1',
  issuer: 'https://gds.example.com',
  savedId: 'aaaa1111',
  accessToken: 'access-1',
  refreshToken: 'refresh-1',
  expiresAt: '2026-12-07T01:00:00.000Z',
};

describe('sameCredentials', () => {
  it('a renewal (new tokens, a new expiry) is the same credentials', () => {
    const renewed: Profile = {
      ...signedIn,
      accessToken: 'access-2',
      refreshToken: 'refresh-2',
      expiresAt: '2026-12-07T02:00:00.000Z',
    };
    expect(sameCredentials(renewed, signedIn)).toBe(true);
  });

  it('the e-mail a sign-in writes into its profile after the save is the same credentials', () => {
    // `gds auth login` saves, asks the service who signed in, then writes the e-mail: a command that read the
    // profile in between must not take it for another's.
    expect(sameCredentials({ ...signedIn, user: 'ann@example.com' }, signedIn)).toBe(true);
  });

  it('credentials saved meanwhile are other credentials, even with every other field the same', () => {
    expect(sameCredentials({ ...signedIn, savedId: 'bbbb2222' }, signedIn)).toBe(false);
    expect(sameCredentials(undefined, signedIn)).toBe(false);
    expect(sameCredentials(undefined, undefined)).toBe(true);
  });
});
