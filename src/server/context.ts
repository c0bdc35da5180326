// What every route module receives: the database, the clock, token signing and caller resolution.
import type { FastifyRequest } from 'fastify';
import type { Caller } from './auth/caller.js';
import type { Authenticator } from './auth/caller.js';
import type { SigningKeys } from './auth/keys.js';
import type { TokenSigner } from './auth/tokens.js';
import type { Clock } from './clock.js';
import type { Db } from './db/index.js';
import type { OwnNames } from './host-check.js';
import type { RateLimiter } from './rate-limit.js';

export interface AppContext {
  db: Db;
  clock: Clock;
  keys: SigningKeys;
  signer: TokenSigner;
  auth: Authenticator;
  limiter: RateLimiter;
  /** How long a spent refresh token is answered again with its successor instead of revoking its family. */
  refreshGraceMs: number;
  /** The server's base URL (known once it listens). */
  baseUrl: () => string;
  /** The server's own names and origins (known once it listens): Host and Origin checks. */
  names: () => OwnNames;
}

/** The request's caller: resolved by a hook (table endpoints) or on demand (everything else); 401 when none. */
export async function callerOf(ctx: AppContext, request: FastifyRequest): Promise<Caller> {
  return request.caller ?? ctx.auth.identify(request.headers.authorization);
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}
