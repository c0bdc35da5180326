// The human rendering shared by `tokens issue` and `tokens refresh`: the secrets on stdout (so they can
// be captured), the warning that they are shown once on stderr.
import type { Output } from './output.js';
import type { TokenBundle } from '../contract/types.js';

export function printTokenBundle(out: Output, tokens: TokenBundle): void {
  out.print(`Access token:  ${tokens.accessToken}`);
  out.print(`               expires ${tokens.expiresAt}`);
  out.print(`Refresh token: ${tokens.refreshToken}`);
  out.print(`               expires ${tokens.refreshExpiresAt}, single use`);
  out.info(
    out.style(['bold', 'yellow'], 'Shown once:'),
    ' gds has not stored these tokens and cannot show them again. Put them in your secret manager now; ' +
      'rotate with `gds tokens refresh`.',
  );
}
