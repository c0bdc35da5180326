// What the service answers for an integration token (§4.1, §4.2), for tests that stand in for it: a MANAGEMENT
// token for dev with workspace:read:audit, its access token a JWT of those claims issued now (gds reads the
// token's id, audience, environment and scopes from them after a refresh).

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The answer to `POST /api/integration/refresh` (`{tokens}`) and to an issue (`issued`) of token `id`. */
export function integrationAnswers(id: string) {
  const claims = {
    tid: id,
    aud: 'MANAGEMENT',
    env: 'dev',
    scope: 'workspace:read:audit',
    iat: Math.floor(Date.now() / 1000),
  };
  const tokens = {
    accessToken: `${base64url({ alg: 'HS256' })}.${base64url(claims)}.c2lnbmF0dXJl`,
    refreshToken: `${id}.newRefreshSecret42`,
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    refreshExpiresAt: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  };
  const issued = {
    id,
    name: 'ci',
    clientToken: `tf_${id}ClientLabel`,
    audience: 'MANAGEMENT',
    env: 'dev',
    scopes: ['workspace:read:audit'],
    tokens,
  };
  return { tokens, issued };
}
