// A person signs in (the dashboard's sign-in, the `/device` approval that mints `gds auth login`'s tokens) with
// a member's e-mail: the reference server has no passwords. On loopback only that is the trial's design: whoever
// reaches the server is on this machine. A server reachable beyond it (a host other than loopback,
// --public-url, --trust-proxy) also asks for a sign-in secret, as a Jupyter server asks for its token: given
// (GDS_SIGN_IN_SECRET), else generated at start and printed once on the server's stderr. A wrong one is a
// failed authentication, counted per address as a bad bearer token is.
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from './context.js';
import { limitFailedAuthentication } from './context.js';
import { HttpError, unauthorized } from './errors.js';
import { newSecret } from './ids.js';

/** Where `npm run server` takes the secret from (an environment variable: a command line is seen by `ps`). */
export const SIGN_IN_SECRET_ENV = 'GDS_SIGN_IN_SECRET';
/** The shortest secret taken: a guessable one would make the sign-in e-mail only again. */
export const MIN_SIGN_IN_SECRET_LENGTH = 16;

/** What makes a server reachable beyond this machine: the listening host, a public URL, trusted proxies. */
export interface Exposure {
  host: string;
  publicUrl?: string | undefined;
  trustProxy?: string[] | number | undefined;
}

function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  const v4 = bare.startsWith('::ffff:') ? bare.slice('::ffff:'.length) : bare;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** Why the server is reachable beyond this machine (for its start-up line), or undefined on loopback only. */
export function reachableBeyondLoopback(exposure: Exposure): string | undefined {
  if (!isLoopbackHost(exposure.host)) return `it listens on ${exposure.host}`;
  if (exposure.publicUrl !== undefined) return `people reach it at ${exposure.publicUrl}`;
  if (exposure.trustProxy !== undefined) return 'it trusts a proxy in front of it (--trust-proxy)';
  return undefined;
}

/** A new secret: 144 random bits, 24 characters a person can paste. */
export function newSignInSecret(): string {
  return newSecret(18);
}

/** The secret, kept as its digest: compared in constant time whatever the length of what is given. */
export class SignInSecret {
  private readonly digest: Buffer;

  constructor(secret: string) {
    this.digest = createHash('sha256').update(secret).digest();
  }

  matches(given: unknown): boolean {
    if (typeof given !== 'string') return false;
    return timingSafeEqual(this.digest, createHash('sha256').update(given).digest());
  }
}

/**
 * The refusal of a sign-in form's `secret`, or undefined when it is right or none is asked: 401 (counted
 * against the address's failed authentications), 429 once the address is over that limit. The message never
 * says the secret.
 */
export async function signInSecretRefusal(
  ctx: AppContext,
  request: FastifyRequest,
  given: unknown,
): Promise<HttpError | undefined> {
  const secret = ctx.signInSecret;
  if (secret === null) return undefined;
  try {
    await limitFailedAuthentication(ctx, request, async () => {
      if (!secret.matches(given))
        throw unauthorized(
          'sign_in_secret_wrong',
          'The sign-in secret is missing or wrong: this server is reachable beyond its own machine, so it asks ' +
            `for the secret it printed on its stderr when it started (or the one in ${SIGN_IN_SECRET_ENV}).`,
        );
    });
    return undefined;
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
}
