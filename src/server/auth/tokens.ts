// Access tokens: JWTs signed with the service key, 60 minutes, one audience each. Verification pins
// the algorithm, so `alg: none` and any other algorithm fail like a bad signature does.
import { errors, jwtVerify, SignJWT } from 'jose';
import type { Audience } from '../../core/scopes.js';
import { SESSION_AUDIENCE } from '../../core/scopes.js';
import type { Clock } from '../clock.js';
import { unauthorized } from '../errors.js';
import { newId } from '../ids.js';
import type { SigningKeys } from './keys.js';
import { SIGNING_ALG } from './keys.js';

export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;

export interface SessionClaims {
  audience: typeof SESSION_AUDIENCE;
  userId: string;
  workspaceId: string;
  /** The sign-in (refresh-token family) this token was issued under: revoking it ends the token too. */
  sessionId?: string;
  /** The token's own id (`jti`), by which it alone can be revoked. */
  tokenId?: string;
}

export interface IntegrationClaims {
  audience: Audience;
  userId: string;
  workspaceId: string;
  tokenId: string;
  scopes: string[];
  env: string;
  /**
   * DATA-API: the table id each granted slug named when the token was issued (`tables:<slug>:…` scopes keep
   * the spec's strings; a later table reusing the slug is not the granted one).
   */
  tableIds: Record<string, string>;
}

export type AccessClaims = SessionClaims | IntegrationClaims;

export interface SignedToken {
  token: string;
  expiresAt: string;
}

export class TokenSigner {
  constructor(
    private readonly keys: SigningKeys,
    /** The issuer (the server's base URL), known once it listens. */
    private readonly issuer: () => string,
    private readonly clock: Clock,
  ) {}

  async sign(claims: AccessClaims): Promise<SignedToken> {
    const now = this.clock();
    const exp = now + ACCESS_TOKEN_TTL_MS;
    const payload: Record<string, unknown> = { ws: claims.workspaceId };
    if (claims.audience === SESSION_AUDIENCE && claims.sessionId !== undefined)
      payload.sid = claims.sessionId;
    if (claims.audience !== SESSION_AUDIENCE) {
      Object.assign(payload, { scope: claims.scopes.join(' '), env: claims.env, tid: claims.tokenId });
      if (Object.keys(claims.tableIds).length > 0) payload.tbl = claims.tableIds;
    }
    const token = await new SignJWT(payload)
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.keys.kid, typ: 'at+jwt' })
      .setIssuer(this.issuer())
      .setSubject(claims.userId)
      .setAudience(claims.audience)
      .setJti(newId('jti'))
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(Math.floor(exp / 1000))
      .sign(this.keys.privateKey);
    return { token, expiresAt: new Date(Math.floor(exp / 1000) * 1000).toISOString() };
  }

  /** The claims of a valid token; any failure is a 401 that says what to do. */
  async verify(token: string): Promise<AccessClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.keys.publicKey, {
        algorithms: [SIGNING_ALG],
        issuer: this.issuer(),
        currentDate: new Date(this.clock()),
        requiredClaims: ['sub', 'aud', 'exp', 'ws'],
      }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        throw unauthorized('token_expired', 'The access token has expired; refresh it or sign in again.');
      }
      throw unauthorized(
        'invalid_token',
        'The access token is not valid (bad signature, algorithm or claims).',
      );
    }
    const audience = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    const [aud] = audience;
    const base = { userId: String(payload.sub), workspaceId: String(payload.ws) };
    if (audience.length !== 1)
      throw unauthorized('invalid_token', 'An access token carries exactly one audience.');
    if (aud === SESSION_AUDIENCE) {
      return {
        audience: SESSION_AUDIENCE,
        ...base,
        ...(typeof payload.sid === 'string' ? { sessionId: payload.sid } : {}),
        ...(typeof payload.jti === 'string' ? { tokenId: payload.jti } : {}),
      };
    }
    if ((aud === 'DATA-API' || aud === 'MANAGEMENT') && typeof payload.tid === 'string') {
      return {
        audience: aud,
        ...base,
        tokenId: payload.tid,
        scopes: typeof payload.scope === 'string' && payload.scope ? payload.scope.split(' ') : [],
        env: typeof payload.env === 'string' ? payload.env : '',
        tableIds: stringRecord(payload.tbl),
      };
    }
    throw unauthorized('invalid_token', 'The access token has an unknown audience.');
  }
}

/** A claim that maps strings to strings; anything else reads as empty (no table bound). */
function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}
