// The server answers only its own names (DNS rebinding): a page at `rebind.attacker.example:8787` whose
// name an attacker points at 127.0.0.1 reaches this server with its own name in `Host`, so a request whose
// Host is not one of the server's (the listening address, `127.0.0.1`/`localhost`/`[::1]` on its port, the
// host of `--public-url`) is answered 421 before any route runs. Same-origin checks compare `Origin` with
// these origins, never with the request's own Host.
import { networkInterfaces } from 'node:os';
import type { FastifyRequest } from 'fastify';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

export class OwnNames {
  private readonly hosts = new Set<string>();
  private readonly origins = new Set<string>();

  /** `listening` is the bound address (`host` as given, `port` as bound); `publicUrl` a name given at start. */
  constructor(listening: { host: string; port: number }, publicUrl?: string) {
    const names = new Set(LOOPBACK_NAMES);
    const bound =
      listening.host.includes(':') && !listening.host.startsWith('[')
        ? `[${listening.host}]`
        : listening.host;
    if (WILDCARD.has(bound)) {
      // Listening on every interface: each interface's address is one of the server's names.
      for (const addresses of Object.values(networkInterfaces())) {
        for (const a of addresses ?? []) names.add(a.family === 'IPv6' ? `[${a.address}]` : a.address);
      }
    } else {
      names.add(bound.toLowerCase());
    }
    for (const name of names) this.add('http:', `${name}:${listening.port}`);
    if (publicUrl !== undefined) {
      const url = new URL(publicUrl);
      this.add(url.protocol, url.host.toLowerCase());
    }
  }

  private add(protocol: string, host: string): void {
    this.hosts.add(host);
    this.origins.add(`${protocol}//${host}`);
    if (protocol === 'https:') this.origins.add(`http://${host}`);
  }

  /** Whether a request's Host header names this server. */
  isOwnHost(host: string | undefined): boolean {
    return host !== undefined && this.hosts.has(host.toLowerCase());
  }

  /** Whether an Origin header value is one of this server's origins. */
  isOwnOrigin(origin: string): boolean {
    const url = URL.parse(origin);
    return url !== null && this.origins.has(`${url.protocol}//${url.host}`);
  }
}

/**
 * CSRF of the form posts (sign-in, sign-out, device approval). Browsers send Sec-Fetch-Site, which must be
 * same-origin: the browser vouches that the page's origin is the target's, whose Host the onRequest hook
 * has already checked, and its Origin, which the pages' Referrer-Policy (same-origin) has it send, must be one
 * of this server's names too (a proxy that rewrote Host to loopback is seen there). A browser
 * without Sec-Fetch-Site must send an Origin that is one of this server's own (never the request's own
 * Host, which a rebinding page controls). A client with neither header is not a browser, so no page can
 * have made it post; with `browserOnly` it is refused all the same (403).
 */
export function isSameOriginPost(
  request: FastifyRequest,
  names: OwnNames,
  options: { browserOnly?: boolean } = {},
): boolean {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (site !== undefined) {
    return site === 'same-origin' && (origin === undefined || origin === 'null' || names.isOwnOrigin(origin));
  }
  // `browserOnly` (the dashboard sign-in, a form only a browser fills in): every browser sends one of the
  // two headers on a form POST, so a post with neither is refused rather than trusted as a non-browser.
  if (origin === undefined) return options.browserOnly !== true;
  return names.isOwnOrigin(origin);
}

/**
 * Why a form post was refused, for its page: when the browser vouches that the form came from the page's own
 * origin but that origin is not one of this server's names, a proxy the server does not know of stands in
 * front of it (one that rewrote Host to loopback; the host check refuses any other), and the fix is to name it.
 */
export function refusedPostMessage(request: FastifyRequest, names: OwnNames, otherwise: string): string {
  const origin = request.headers.origin;
  const page = origin === undefined ? undefined : URL.parse(origin)?.origin;
  if (request.headers['sec-fetch-site'] !== 'same-origin' || page === undefined || page === 'null')
    return otherwise;
  if (names.isOwnOrigin(page)) return otherwise;
  return (
    `This page was reached at ${page}, which is not one of this server’s names: a proxy in front of it? ` +
    `Start the server with --public-url ${page}; it then asks for a sign-in secret as well as the e-mail.`
  );
}
