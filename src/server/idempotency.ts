// Requests applied once per `Idempotency-Key`: the recertification signal and the Gate 1 submission (the
// steward's handoff). The key is claimed in the request's own transaction, so a request that failed or was cut
// off left no key, and two at once with one key wait for each other; sent again with its key, a request gets
// its first answer (the route adds `Idempotent-Replayed: true`) and nothing is applied twice. The same key with
// another request is 422 `idempotency_key_reused`.
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { IDEMPOTENCY_KEY_RULE, isIdempotencyKey } from '../core/idempotency-key.js';
import type { Clock } from './clock.js';
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

/** How long a request waits for another with its key still at work before 503: well under a proxy's minute. */
export const IN_FLIGHT_WAIT_MS = 20_000;
/** A request at work refreshes its mark this often; a mark left this long unrefreshed is a stopped server's. */
const IN_FLIGHT_HEARTBEAT_MS = 5_000;
export const IN_FLIGHT_STALE_MS = 30_000;
const IN_FLIGHT_POLL_MS = 200;

/** The tables marking keyed requests at work (workspace_id, key, request_hash, holder, heartbeat_at). */
export type InFlightTable = 'gds.gate_submission_scans';

/**
 * Runs `work` (a costly scan) for the key only when no other request with the key is at it: the key is marked
 * in `inFlight`, committed before `work` so every server process sees it, refreshed while `work` runs and
 * removed when it ends, however it ends. A request finding the key marked waits for that request's stored
 * answer (`replay`); when the mark goes without an answer (that request failed) or stops being refreshed (its
 * server stopped), it takes the mark and works itself; past IN_FLIGHT_WAIT_MS it is refused with 503
 * `request_in_progress` and a Retry-After (a client's retry gets the answer once it is stored). 422 when the
 * key is at work, or was answered, for another request.
 */
export async function whileInFlight<A, R>(
  db: Queryable,
  inFlight: InFlightTable,
  keyed: Keyed,
  clock: Clock,
  work: () => Promise<R>,
): Promise<{ replay: A } | { done: R }> {
  const waitingSince = clock();
  const holder = randomUUID();
  const where = 'workspace_id = $1 AND key = $2';
  for (;;) {
    const answered = await answerOf<A>(db, keyed);
    if (answered !== null) return { replay: answered };
    const now = clock();
    await db.query(`DELETE FROM ${inFlight} WHERE heartbeat_at < $1`, [
      new Date(now - IDEMPOTENCY_KEY_DAYS * 86_400_000).toISOString(),
    ]);
    const [claimed] = await db.query(
      `INSERT INTO ${inFlight} AS marked (workspace_id, key, request_hash, holder, heartbeat_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (workspace_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, holder = EXCLUDED.holder, heartbeat_at = EXCLUDED.heartbeat_at
         WHERE marked.heartbeat_at < $6
       RETURNING key`,
      [
        keyed.workspaceId,
        keyed.key,
        keyed.hash,
        holder,
        new Date(now).toISOString(),
        new Date(now - IN_FLIGHT_STALE_MS).toISOString(),
      ],
    );
    if (claimed) {
      const release = () =>
        db.query(`DELETE FROM ${inFlight} WHERE ${where} AND holder = $3`, [
          keyed.workspaceId,
          keyed.key,
          holder,
        ]);
      // The request holding the mark may have stored its answer and left between the read and the claim.
      const meanwhile = await answerOf<A>(db, keyed).catch(async (error: unknown) => {
        await release();
        throw error;
      });
      if (meanwhile !== null) {
        await release();
        return { replay: meanwhile };
      }
      const heartbeat = setInterval(() => {
        db.query(`UPDATE ${inFlight} SET heartbeat_at = $4 WHERE ${where} AND holder = $3`, [
          keyed.workspaceId,
          keyed.key,
          holder,
          new Date(clock()).toISOString(),
        ]).catch(() => undefined);
      }, IN_FLIGHT_HEARTBEAT_MS).unref();
      try {
        return { done: await work() };
      } finally {
        clearInterval(heartbeat);
        await release();
      }
    }
    const [marked] = await db.query<{ request_hash: string }>(
      `SELECT request_hash FROM ${inFlight} WHERE ${where}`,
      [keyed.workspaceId, keyed.key],
    );
    if (marked !== undefined && marked.request_hash !== keyed.hash) throw reused(keyed);
    const waited = clock() - waitingSince;
    if (waited >= IN_FLIGHT_WAIT_MS) throw inProgress(keyed, waited);
    await sleep(IN_FLIGHT_POLL_MS);
  }
}

const inProgress = (keyed: Keyed, waitedMs: number) => {
  const retryAfterSeconds = 5;
  return new HttpError(
    503,
    'request_in_progress',
    `A ${keyed.what} with this Idempotency-Key is still at work (waited ${Math.round(waitedMs / 1000)} s for it); ` +
      `nothing more was done. Send it again with the same key after ${retryAfterSeconds} s for its answer.`,
    { header: 'Idempotency-Key', retryAfterSeconds },
    { 'retry-after': String(retryAfterSeconds) },
  );
};
