// Where plain http is allowed: loopback hosts only (a local reference server). Anywhere else a bearer
// token, a refresh token or a sign-in would cross the network in the clear.

/** localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** True for an `http:` address to a host that is not loopback. */
export function isInsecureUrl(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopbackUrl(url);
}

export const INSECURE_URL_CODE = 'insecure_url';

export const INSECURE_URL_ADVICE =
  'Use the https address of the service (plain http is allowed only for localhost, 127.0.0.0/8 and ::1).';
