// What another command may do to profile ci while a command that read ci waits on the network (a sign-in, a
// token checked or minted): log ci out, sign in into it, or store another static token of the same base into it.
// For tests that the waiting command then saves nothing over it.
import { expect } from 'vitest';
import type { Env, GdsConfig } from '../../src/auth/config.js';
import { withProfileLock } from '../../src/auth/config.js';
import { removeProfile, saveProfile, setStaticProfile } from '../../src/auth/profiles.js';

export interface ProfileChange {
  what: string;
  /** Does it to ci (`base`: the service's, that ci was set up with). */
  run: (env: Env, base: string) => Promise<unknown>;
  /** Checks that ci is as `run` left it. */
  left: (config: GdsConfig) => void;
  /** Whether ci is gone after it. */
  loggedOut: boolean;
}

export const profileChanges: readonly ProfileChange[] = [
  {
    what: 'auth logout --profile ci',
    run: (env) => removeProfile('ci', { env }),
    left: (config) => expect(config.profiles).toEqual({}),
    loggedOut: true,
  },
  {
    what: 'a sign-in into ci',
    run: (env) =>
      withProfileLock(
        'ci',
        () =>
          saveProfile(
            'ci',
            { kind: 'session', base: 'https://signed-in.example' },
            { accessToken: 'signed-in-access', refreshToken: 'signed-in-refresh' },
            { env },
          ),
        { env },
      ),
    left: (config) =>
      expect(config.profiles.ci).toMatchObject({ kind: 'session', accessToken: 'signed-in-access' }),
    loggedOut: false,
  },
  {
    // The same fields as the token it replaces (kind, base): only the token (and its savedId) differs.
    what: 'gds auth set of another token into ci',
    run: (env, base) => setStaticProfile({ name: 'ci', token: 'cli_otherProfileToken42', base }, { env }),
    left: (config) =>
      expect(config.profiles.ci).toMatchObject({ kind: 'static', token: 'cli_otherProfileToken42' }),
    loggedOut: false,
  },
];
