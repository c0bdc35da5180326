// The human rendering shared by `tokens issue` and `tokens refresh`: the secrets on stdout (so they can
// be captured), the warning that they are shown once on stderr; or, with --save-profile, where they are.
import { Flags } from '@oclif/core';
import type { SavedIntegration } from '../auth/integration-profile.js';
import type { Output } from './output.js';
import type { TokenBundle } from '../contract/types.js';

export function printTokenBundle(out: Output, tokens: TokenBundle): void {
  out.print(`Access token:  ${tokens.accessToken}`);
  out.print(`               expires ${out.when(tokens.expiresAt)}`);
  out.print(`Refresh token: ${tokens.refreshToken}`);
  out.print(`               expires ${out.when(tokens.refreshExpiresAt)}, single use`);
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
  out.print(`Access token:  expires ${out.when(tokens.expiresAt)}`);
  out.print(`Refresh token: expires ${out.when(tokens.refreshExpiresAt)}, single use`);
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
