// The reuse grace window of rotating refresh tokens (OAuth 2.0 Security BCP §4.14.2; Auth0's "reuse
// interval", Okta's "grace period"). A client that lost the answer to its refresh (killed, a dropped
// connection, a parallel refresh of the same token) presents the spent token again: within the window it
// gets the same answer again instead of a revoked family. The answer is kept sealed (AES-256-GCM) under a
// key derived (HKDF) from the spent token's secret, which the server never stores: the database alone,
// holding only the secret's SHA-256, cannot open it.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/handle.js';

/**
 * How long a spent refresh token is answered again with its successor (a server option, `--refresh-grace`).
 * Off by default: the spec makes refresh tokens single-use, a reused one 401 (§4.2, §5.7). With a grace, the
 * successor is answered only while it is itself unused, so a spent token never follows the chain.
 */
export const DEFAULT_REFRESH_GRACE_MS = 0;

const INFO = 'gds refresh-token successor v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

function keyFor(secret: string, tokenId: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, tokenId, INFO, 32));
}

/** `answer` sealed under the key of the spent token (`tokenId` and its `secret`). */
export function sealSuccessor(answer: unknown, secret: string, tokenId: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret, tokenId), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(answer), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** The sealed answer, or undefined when `secret` is not the one it was sealed under. */
export function openSuccessor<T>(sealed: string, secret: string, tokenId: string): T | undefined {
  const bytes = Buffer.from(sealed, 'base64url');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret, tokenId), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return JSON.parse(text.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/** Whether a token spent at `usedAt` is still inside the grace window at `now`. */
export function withinGrace(usedAt: Date, now: number, graceMs: number): boolean {
  return now - new Date(usedAt).getTime() < graceMs;
}

/**
 * The sealed successors of tokens spent longer ago than the grace window can no longer be answered again
 * (reuse then revokes), so they are dropped: an old spent token and a copy of the database together must
 * not open a live successor.
 */
export async function dropExpiredSeals(
  tx: Queryable,
  table: 'refresh_tokens' | 'session_refresh_tokens',
  now: number,
  graceMs: number,
): Promise<void> {
  await tx.query(
    `UPDATE gds.${table} SET successor_sealed = NULL WHERE successor_sealed IS NOT NULL AND used_at < $1`,
    [new Date(now - graceMs).toISOString()],
  );
}
