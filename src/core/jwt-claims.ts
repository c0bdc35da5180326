// The claims of a JWT read WITHOUT verifying it: hints for gds itself (clock skew, what a token is for, the
// tables it names), never a decision the service does not make again with the signature checked.

/** The payload of `token` as an object; empty when it is not a JWT or its payload is not a JSON object. */
export function unverifiedClaims(token: string | undefined): Record<string, unknown> {
  const payload = token?.split('.')[1];
  if (payload === undefined) return {};
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * What an integration access token is for, from its claims (`aud`, `env`, `scope`), and the id of the token
 * it belongs to (`tid`: the id `tokens issue` answers, which every refresh keeps): each when present.
 */
export function integrationClaims(accessToken: string): {
  id?: string;
  audience?: string;
  env?: string;
  scopes?: string[];
} {
  const { tid, aud, env, scope } = unverifiedClaims(accessToken);
  const audience = Array.isArray(aud) && aud.length === 1 ? (aud[0] as unknown) : aud;
  return {
    ...(typeof tid === 'string' && /^[\w-]{1,200}$/.test(tid) ? { id: tid } : {}),
    ...(typeof audience === 'string' ? { audience } : {}),
    ...(typeof env === 'string' ? { env } : {}),
    ...(typeof scope === 'string' ? { scopes: scope.split(' ').filter((s) => s !== '') } : {}),
  };
}
