// openid-client (`gds auth login`, a session's refresh) calls fetch, not the transport: behind a proxy its
// requests go through HTTPS_PROXY / HTTP_PROXY like the transport's, NO_PROXY hosts and loopback
// directly (a loopback base never goes through a proxy: see proxyEnvironment in client/transport.ts). The
// proxy-aware dispatcher is undici's EnvHttpProxyAgent with the transport's reading of the variables;
// undici loads only when a proxy is set.
import type * as OpenIdClient from 'openid-client';
import { proxyEnvironment } from '../client/transport.js';
import { isLoopbackUrl } from '../core/url-policy.js';

type CustomFetch = NonNullable<OpenIdClient.DiscoveryRequestOptions[typeof OpenIdClient.customFetch]>;

/** The fetch openid-client should use under these proxy variables; undefined: none is set, use its own. */
export async function oidcFetch(env: NodeJS.ProcessEnv = process.env): Promise<CustomFetch | undefined> {
  const proxy = proxyEnvironment(env);
  if (proxy === undefined) return undefined;
  const undici = await import('undici');
  // The user's NO_PROXY only: undici's syntax has no address ranges, so loopback is decided below.
  const userNoProxy = env.NO_PROXY || env.no_proxy || '';
  const dispatcher = new undici.EnvHttpProxyAgent({
    httpProxy: proxy.HTTP_PROXY ?? '',
    httpsProxy: proxy.HTTPS_PROXY ?? '',
    noProxy: userNoProxy,
  });
  // As Node's agent (the transport) does: https goes through HTTPS_PROXY only, http through HTTP_PROXY only.
  const proxied = (url: URL) =>
    !isLoopbackUrl(url) && (url.protocol === 'https:' ? proxy.HTTPS_PROXY : proxy.HTTP_PROXY) !== undefined;
  return (url, options) =>
    undici.fetch(url, {
      ...(options as Parameters<typeof undici.fetch>[1]),
      ...(proxied(new URL(url)) ? { dispatcher } : {}),
    }) as unknown as Promise<Response>;
}
