// The human rendering shared by `tokens issue` and `tokens refresh`: the secrets on stdout (so they can
// be captured), the warning that they are shown once on stderr; or, with --save-profile, where they are.
import { Flags } from '@oclif/core';
import type { SavedIntegration } from '../auth/integration-profile.js';
import { clockSkewMs, onLocalClock } from '../auth/refresh.js';
import type { Output } from './output.js';
import type { TokenBundle } from '../contract/types.js';

/**
 * The service's expiries on this machine's clock (clockSkewMs), for "expires in 59 minutes": a clock that runs
 * an hour ahead would call a token just issued expired. JSON keeps the service's instants as it sent them.
 */
function localExpiries(tokens: TokenBundle): Pick<TokenBundle, 'expiresAt' | 'refreshExpiresAt'> {
  const skew = clockSkewMs(tokens.accessToken);
  return {
    expiresAt: onLocalClock(tokens.expiresAt, skew),
    refreshExpiresAt: onLocalClock(tokens.refreshExpiresAt, skew),
  };
}

/** The lines of the view are printField's: an expiry of the service's on two lines forges no line under them. */
export function printTokenBundle(out: Output, tokens: TokenBundle): void {
  const { expiresAt, refreshExpiresAt } = localExpiries(tokens);
  out.printField(`Access token:  ${tokens.accessToken}`);
  out.printField(`               expires ${out.when(expiresAt)}`);
  out.printField(`Refresh token: ${tokens.refreshToken}`);
  out.printField(`               expires ${out.when(refreshExpiresAt)}, single use`);
  out.info(
    out.style(['bold', 'yellow'], 'Shown once:'),
    ' gds has not stored these tokens and cannot show them again. Put them in your secret manager now; ' +
      'rotate with `gds tokens refresh`.',
  );
}

/** `--save-profile` and `--force` of `tokens issue` and `tokens refresh`. */
export const saveProfileFlags = {
  'save-profile': Flags.string({
    description:
      'Store the tokens in this profile (keychain or config file) instead of showing them; used with ' +
      '--profile <name>, the access token then renews itself.',
  }),
  force: Flags.boolean({
    description: 'With --save-profile: replace a profile that holds a live token.',
    dependsOn: ['save-profile'],
  }),
};

/** The human and JSON rendering of tokens stored by --save-profile: where they are, never the tokens. */
export function printSavedTokens(out: Output, saved: SavedIntegration<unknown>, tokens: TokenBundle): void {
  const { name, storage } = saved.saved;
  const { expiresAt, refreshExpiresAt } = localExpiries(tokens);
  out.printField(`Access token:  expires ${out.when(expiresAt)}`);
  out.printField(`Refresh token: expires ${out.when(refreshExpiresAt)}, single use`);
  out.info(
    out.style(['bold'], 'Stored'),
    ` in profile ${name} (${storage}: ${saved.location}). Use it with --profile ${name}: the access token ` +
      'renews itself, and each renewal spends the refresh token.',
  );
}

/** A token bundle without its secrets, for the JSON record of --save-profile. */
export function tokenExpiries(tokens: TokenBundle): Pick<TokenBundle, 'expiresAt' | 'refreshExpiresAt'> {
  return { expiresAt: tokens.expiresAt, refreshExpiresAt: tokens.refreshExpiresAt };
}
