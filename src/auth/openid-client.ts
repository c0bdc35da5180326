// openid-client (with oauth4webapi, about 7 MiB), the one place gds imports it: loaded only by the runs that
// sign in (login.ts) or refresh a session (refresh.ts).
import type * as OpenIdClient from 'openid-client';

export function openIdClient(): Promise<typeof OpenIdClient> {
  return import('openid-client');
}
