import { CLIENT_TOKEN_PREFIX } from './caller.js';

/** `tf_abcd…wxyz`: enough to tell tokens apart, never enough to use one. */
export function maskToken(token: string): string {
  const prefix = token.startsWith(CLIENT_TOKEN_PREFIX) ? CLIENT_TOKEN_PREFIX : token.slice(0, 4);
  return `${prefix}${token.slice(prefix.length, prefix.length + 4)}…${token.slice(-4)}`;
}
