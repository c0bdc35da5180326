// openid-client (`gds auth login`, a session's refresh) calls fetch, not the transport: behind a proxy its
// https requests go through HTTPS_PROXY like the transport's, NO_PROXY hosts and loopback directly (a
// loopback base never goes through a proxy: see proxyEnvironment in client/transport.ts). Its http requests
// are to loopback only (plain http anywhere else is refused), so never proxied. The proxy-aware dispatcher
// is undici's EnvHttpProxyAgent with the transport's reading of the variables; undici loads only when a
// proxy is set.
import type * as OpenIdClient from 'openid-client';
import { checkProxyVariable, proxyEnvironment } from '../client/transport.js';
import { isLoopbackUrl } from '../core/url-policy.js';

type CustomFetch = NonNullable<OpenIdClient.DiscoveryRequestOptions[typeof OpenIdClient.customFetch]>;

/**
 * The fetch openid-client should use under these proxy variables; undefined: no HTTPS_PROXY is set, use its
 * own. A CliError (exit 2) for an HTTPS_PROXY gds cannot use, as the transport's.
 */
export async function oidcFetch(env: NodeJS.ProcessEnv = process.env): Promise<CustomFetch | undefined> {
  checkProxyVariable(env, 'https:');
  const httpsProxy = proxyEnvironment(env)?.HTTPS_PROXY;
  if (httpsProxy === undefined) return undefined;
  const undici = await import('undici');
  // The user's NO_PROXY only: undici's syntax has no address ranges, so loopback is decided below.
  const userNoProxy = env.NO_PROXY || env.no_proxy || '';
  const dispatcher = new undici.EnvHttpProxyAgent({ httpProxy: '', httpsProxy, noProxy: userNoProxy });
  // As Node's agent (the transport) does: https goes through HTTPS_PROXY only.
  const proxied = (url: URL) => url.protocol === 'https:' && !isLoopbackUrl(url);
  return (url, options) =>
    undici.fetch(url, {
      ...(options as Parameters<typeof undici.fetch>[1]),
      ...(proxied(new URL(url)) ? { dispatcher } : {}),
    }) as unknown as Promise<Response>;
}
