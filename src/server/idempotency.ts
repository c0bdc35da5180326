// Requests applied once per `Idempotency-Key`: the recertification signal and the Gate 1 submission (the
// steward's handoff). The key is claimed in the request's own transaction, so a request that failed or was cut
// off left no key, and two at once with one key wait for each other; sent again with its key, a request gets
// its first answer (the route adds `Idempotent-Replayed: true`) and nothing is applied twice. The same key with
// another request is 422 `idempotency_key_reused`.
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from '../core/idempotency-key.js';
import type { Queryable } from './db/handle.js';
import { badRequest, HttpError } from './errors.js';

/** How long an idempotency key is kept: a request sent again within it is answered, not applied again. */
export const IDEMPOTENCY_KEY_DAYS = 7;

/** The tables keeping each keyed route's keys (workspace_id, key, request_hash, response, created_at). */
export type KeyTable = 'gds.recertify_signals' | 'gds.gate_submission_keys';

/** Reads the `Idempotency-Key` header: undefined when absent, 400 when not a short printable string. */
export function idempotencyKeyOf(header: unknown): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !isIdempotencyKey(header)) {
    throw badRequest(
      'invalid_idempotency_key',
      `Idempotency-Key must be ${IDEMPOTENCY_KEY_RULE} (e.g. a hash of the request).`,
      { header: 'Idempotency-Key' },
    );
  }
  return header;
}

/** The hash a key is bound to: what the request asks, in a stable form. */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

export interface Keyed {
  table: KeyTable;
  workspaceId: string;
  key: string;
  hash: string;
  /** What the key is sent with, for the refusal: "signal", "submission". */
  what: string;
}

/**
 * Applies `apply` once for the key: the first time (the key claimed in `tx`, `apply`'s answer stored with it),
 * or the stored answer of the earlier request with this key (`replayed`). 422 when the key was sent with
 * another request.
 */
export async function applyOnce<T>(
  tx: Queryable,
  keyed: Keyed,
  now: number,
  apply: () => Promise<T>,
): Promise<{ response: T; replayed: boolean }> {
  await tx.query(`DELETE FROM ${keyed.table} WHERE created_at < $1`, [
    new Date(now - IDEMPOTENCY_KEY_DAYS * 86_400_000).toISOString(),
  ]);
  const [claimed] = await tx.query(
    `INSERT INTO ${keyed.table} (workspace_id, key, request_hash, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING RETURNING key`,
    [keyed.workspaceId, keyed.key, keyed.hash, new Date(now).toISOString()],
  );
  if (!claimed) {
    const seen = await answerOf<T>(tx, keyed);
    if (seen === null) throw reused(keyed);
    return { response: seen, replayed: true };
  }
  const response = await apply();
  await tx.query(`UPDATE ${keyed.table} SET response = $3 WHERE workspace_id = $1 AND key = $2`, [
    keyed.workspaceId,
    keyed.key,
    JSON.stringify(response),
  ]);
  return { response, replayed: false };
}

/**
 * The stored answer of the earlier request with this key (null when there is none yet); 422 when that request
 * was another. Read before costly work (a full scan), outside the transaction that claims the key.
 */
export async function answerOf<T>(q: Queryable, keyed: Keyed): Promise<T | null> {
  const [seen] = await q.query<{ request_hash: string; response: T | null }>(
    `SELECT request_hash, response FROM ${keyed.table} WHERE workspace_id = $1 AND key = $2`,
    [keyed.workspaceId, keyed.key],
  );
  if (seen === undefined) return null;
  if (seen.request_hash !== keyed.hash) throw reused(keyed);
  return seen.response;
}

const reused = (keyed: Keyed) =>
  new HttpError(
    422,
    'idempotency_key_reused',
    `This Idempotency-Key was sent with another ${keyed.what}: give each ${keyed.what} its own key.`,
    { header: 'Idempotency-Key' },
  );
