// How a token is named where it may not appear whole: `tf_abcd…wxyz`, enough to tell tokens apart, never
// enough to use one. The service stores this hint of a client token (tokens list shows it); gds shows the
// same where it keeps a token instead of showing it (tokens issue --save-profile).

/** The prefix of an integration token's client token. */
export const CLIENT_TOKEN_PREFIX = 'tf_';

export function tokenHint(token: string): string {
  const prefix = token.startsWith(CLIENT_TOKEN_PREFIX) ? CLIENT_TOKEN_PREFIX : token.slice(0, 4);
  return `${prefix}${token.slice(prefix.length, prefix.length + 4)}…${token.slice(-4)}`;
}
