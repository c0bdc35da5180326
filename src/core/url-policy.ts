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

/**
 * A URL as it may be shown in a message: no user name or password (`****@`), no query, no fragment (`?…` or
 * `#…` says there was one), any of which may hold a secret. Text that is not a URL loses the same parts.
 */
export function shownUrl(value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url !== undefined && url.host !== '') {
    const userinfo = url.username !== '' || url.password !== '' ? '****@' : '';
    const path = url.pathname === '/' ? '' : url.pathname;
    return `${url.protocol}//${userinfo}${url.host}${path}${elided(url.href)}`;
  }
  // Not a URL with a host: all up to the last `@` may be a user name and password, `#`, `?` or `/` in it.
  const masked = value.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^]*@/i, '$1****@');
  return masked.replace(/[?#][^]*$/, '') + elided(masked);
}

/** `?…` or `#…` for the query or fragment of a URL's text, whichever comes first; '' when it has neither. */
function elided(text: string): string {
  const first = /[?#]/.exec(text);
  return first === null ? '' : `${first[0]}…`;
}
