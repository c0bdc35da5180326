import { createHash, randomBytes } from 'node:crypto';

/** A random id with a readable prefix, e.g. `tbl_1f3a9c0d5e7b2a48`. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}

/** A random secret for tokens (URL-safe). */
export function newSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** How secrets are stored: never the secret itself. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
