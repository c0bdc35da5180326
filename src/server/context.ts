// What every route module receives: the database, the clock, token signing and caller resolution.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import type { Caller } from './auth/caller.js';
import type { Authenticator } from './auth/caller.js';
import type { SigningKeys } from './auth/keys.js';
import type { TokenSigner } from './auth/tokens.js';
import type { Clock } from './clock.js';
import type { Db } from './db/handle.js';
import type { OwnNames } from './host-check.js';
import { HttpError } from './errors.js';
import type { RateLimiter } from './rate-limit.js';
import { rateLimited } from './rate-limit.js';

export interface AppContext {
  db: Db;
  clock: Clock;
  keys: SigningKeys;
  signer: TokenSigner;
  auth: Authenticator;
  limiter: RateLimiter;
  /** Failed authentications per client address (a flood of bogus tokens costs no database lookups). */
  failedAuth: RateLimiter;
  /** Integration tokens minted per person (each token has a rate bucket of its own). */
  mints: RateLimiter;
  /** How long a spent refresh token is answered again with its successor instead of revoking its family. */
  refreshGraceMs: number;
  /** How long after a gate job is queued a read of it waits for its end (ServerOptions.jobReadHoldMs). */
  jobReadHoldMs?: number;
  /** The server's listening origin (known once it listens): the dashboard and the device page are under it. */
  baseUrl: () => string;
  /** The REST door's stage segment (`v1`). */
  stage: string;
  /** The REST door's base URL on the listening origin: `{origin}/{stage}`. */
  restBaseUrl: () => string;
  /** The origin people reach the service by: --public-url when given (shared by every process behind it),
   *  else the listening origin. The device page's and the sign-in endpoints' address. */
  publicOrigin: () => string;
  /** The REST base URL on the public origin: the tokens' issuer and the discovery document's. */
  issuer: () => string;
  /** The server's own names and origins (known once it listens): Host and Origin checks. */
  names: () => OwnNames;
  /** What person sign-in asks besides the e-mail (sign-in-secret.ts's SignInSecret); null: the e-mail alone. */
  signInSecret: { matches(given: unknown): boolean } | null;
}

/** The request's caller: resolved by a hook before the body is read; 401 when none. */
export async function callerOf(ctx: AppContext, request: FastifyRequest): Promise<Caller> {
  return request.caller ?? authenticate(ctx, request);
}

/**
 * Identifies the caller, counting failures per client address: once an address has failed too often in a
 * minute it is answered 429 before its credential is even looked at (no database work per bogus token).
 * The count is shared by every server process (one statement per failure); a process that has not yet
 * seen the address's window used up learns it at that address's next failure there.
 */
export async function authenticate(ctx: AppContext, request: FastifyRequest): Promise<Caller> {
  return limitFailedAuthentication(ctx, request, () => ctx.auth.identify(request.headers.authorization));
}

/**
 * Runs `attempt` (a credential check: a bearer token, a refresh token) under the per-address limit of failed
 * authentications: refused with 429 once the address is over it, and a 401 of `attempt` counts against it.
 */
export async function limitFailedAuthentication<T>(
  ctx: AppContext,
  request: FastifyRequest,
  attempt: () => Promise<T>,
): Promise<T> {
  const address = `address:${request.ip}`;
  const exhausted = ctx.failedAuth.exhausted(address);
  if (exhausted) throw rateLimited(exhausted, ctx.clock(), 'failed authentications');
  try {
    return await attempt();
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) await ctx.failedAuth.take(address);
    throw error;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** See guardBeforeBody. */
    guard?: (caller: Caller) => unknown;
    /** See guardBeforeBody: the check of what the route's one path id (`:tableId`, `:jobId`, …) names. */
    idGuard?: (ctx: AppContext, caller: Caller, id: string) => Promise<unknown>;
  }
  interface FastifyRequest {
    caller: Caller | null;
    /** Marks the request answered for the server's close (a hijacked route, which has no onSend, calls it). */
    handled: (() => void) | null;
  }
}

/**
 * Route options that run `guard` (the route's audience, scope and role check) on the caller before the
 * body is read: app.ts's authentication hook, which resolves the caller before any route's body is parsed,
 * runs it there. A caller the route refuses gets its 401 or 403, never a 400 or 413 about a body it sent.
 * The handler runs its guard again, on the same resolved caller, for the caller's type.
 *
 * `named` (a route of one table, job, request…: its one path id): then the checks of what the id names,
 * for the guarded caller, in the same hook: 404 when there is no such thing, 403 when the caller may not
 * act on it (its environment, and whatever else the route refuses by it alone). §7.2's order:
 * authentication, authorization, then the body.
 */
export function guardBeforeBody<C>(
  guard: (caller: Caller) => C,
  named?: (ctx: AppContext, caller: C, id: string) => Promise<unknown>,
): { config: Pick<FastifyContextConfig, 'guard' | 'idGuard'> } {
  if (named === undefined) return { config: { guard } };
  const idGuard = (ctx: AppContext, caller: Caller, id: string) => named(ctx, guard(caller), id);
  return { config: { guard, idGuard } };
}
