// The cursor of the lists read by key (created_at, id): the table list and the recertification requests; of
// the table list by prefix, read by key (the name or id that matched, id); of the steward's queue, read by
// the sequence its notifications were filed in; of a table's records (the key of the last row served); and of
// the audit log (the seq of the last entry served, newest first). A cursor is base64url JSON of its key, and
// every cursor the service did not give is the same 400 `invalid_query` naming `cursor`.
import { badRequest } from './errors.js';
import { badCharacter } from '../core/text-rule.js';

export interface ListKey {
  /** created_at exactly as the list's query writes it (UTC, microseconds). */
  createdAt: string;
  id: string;
  /** The table list read newest first (`order=newest`) says so; oldest first (the default), nothing. */
  order?: 'newest';
}

/** The orders the table list is read in by key: oldest first (the default) or newest first. */
export const LIST_ORDERS = ['oldest', 'newest'] as const;
export type ListOrder = (typeof LIST_ORDERS)[number];

/** The key of a table list by prefix: the lowercased name (or the id) that matched, then the id. */
export interface MatchKey {
  matched: string;
  id: string;
}

/** The key of the steward's queue: a notification's seq (a bigint, as its decimal digits). */
export interface SeqKey {
  seq: string;
}

/** The key of a table's records listing: the last row's key as text (a seq, an id, a row id or an offset). */
export interface RecordsKey {
  after: string;
}

/** The key of the audit log, read newest first: the seq of the last entry served. */
export interface AuditKey {
  before: string;
}

export function encodeListCursor(key: ListKey | MatchKey | SeqKey | RecordsKey | AuditKey): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/**
 * A cursor's createdAt exactly as the lists write it, and a real instant: Date.parse takes strings
 * PostgreSQL's ::timestamptz refuses ("1", "2024-02-30"), which were 500s.
 */
function isCursorTimestamp(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value)) return false;
  const parsed = new Date(value);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString() === `${value.slice(0, 23)}Z`;
}

/**
 * The key a list cursor carries (base64url JSON of `{createdAt, id}`); 400 for anything else. With `order`
 * (the table list), a cursor of the other order is refused too: its key would start the page elsewhere.
 */
export function decodeListCursor(cursor: string, order?: ListOrder): ListKey {
  const fields = cursorFields(cursor);
  const { createdAt, id } = fields;
  if (!isCursorTimestamp(createdAt) || !isCursorText(id)) throw notACursor();
  if (order === undefined) return { createdAt, id };
  const given: ListOrder = fields.order === 'newest' ? 'newest' : 'oldest';
  if (fields.order !== undefined && fields.order !== 'newest') throw notACursor();
  if (given !== order) {
    throw badRequest(
      'invalid_query',
      `cursor is of the list ${given} first (order=${given}), not ${order} first: pass it with order=${given}, ` +
        `or start the ${order}-first list without a cursor.`,
      { parameter: 'cursor' },
    );
  }
  return order === 'newest' ? { createdAt, id, order } : { createdAt, id };
}

/** The key a cursor of a list by prefix carries (base64url JSON of `{matched, id}`); 400 for anything else. */
export function decodeMatchCursor(cursor: string): MatchKey {
  const { matched, id } = cursorFields(cursor);
  if (isCursorText(matched) && isCursorText(id)) return { matched, id };
  throw notACursor();
}

/** The key a cursor of the steward's queue carries (base64url JSON of `{seq}`); 400 for anything else. */
export function decodeSeqCursor(cursor: string): SeqKey {
  const { seq } = cursorFields(cursor);
  if (isCursorSeq(seq)) return { seq };
  throw notACursor();
}

/**
 * The key a records cursor carries (base64url JSON of `{after}`), text the database can hold; 400 for anything
 * else. What the key must be (a seq, a row id, an offset) is the listing's to check.
 */
export function decodeRecordsCursor(cursor: string): string {
  const { after } = cursorFields(cursor);
  if (isCursorText(after)) return after;
  throw notACursor();
}

/** The seq an audit log cursor carries (base64url JSON of `{before}`); 400 for anything else. */
export function decodeAuditCursor(cursor: string): string {
  const { before } = cursorFields(cursor);
  if (isCursorSeq(before)) return before;
  throw notACursor();
}

/** A bigint seq as its decimal digits (a longer number was the database's out-of-range error). */
export function isCursorSeq(value: unknown): value is string {
  return typeof value === 'string' && /^\d{1,19}$/.test(value) && BigInt(value) <= MAX_BIGINT;
}

const MAX_BIGINT = 2n ** 63n - 1n;

/** A text the database can hold (a NUL in a made-up cursor was a 500 on PGlite). */
function isCursorText(value: unknown): value is string {
  return typeof value === 'string' && badCharacter(value) === undefined;
}

function cursorFields(cursor: string): Record<string, unknown> {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (typeof value === 'object' && value !== null) return value as Record<string, unknown>;
  } catch {
    // not JSON: no fields
  }
  return {};
}

/** The answer to a cursor the service did not give, whatever the list. */
export function notACursor() {
  return badRequest(
    'invalid_query',
    'cursor is not a cursor this service gave: pass the nextCursor of a page.',
    {
      parameter: 'cursor',
    },
  );
}

/**
 * ` AND <columns> > <key>` (`<` for a list read newest first), the key's values the parameters after `params`;
 * without a key, no condition and `params` as they are. Two query texts rather than one with
 * `($n IS NULL OR (created_at, id) > ($n, $m))`: a generic plan (a prepared statement reused, a pooler's
 * server-side prepares, plan_cache_mode = force_generic_plan) cannot take that OR as an index condition, and
 * every page walked the list from its start (a late page of 100,000 tables read them all).
 */
export function afterKey<P>(
  params: P[],
  columns: string,
  key: ListKey | SeqKey | undefined,
  past: '>' | '<' = '>',
): { condition: string; params: Array<P | string> } {
  if (key === undefined) return { condition: '', params };
  const values: Array<[string, string]> =
    'seq' in key
      ? [[key.seq, 'bigint']]
      : [
          [key.createdAt, 'timestamptz'],
          [key.id, 'text'],
        ];
  const written = values.map(([, type], i) => `$${params.length + i + 1}::${type}`).join(', ');
  return {
    condition: ` AND ${columns} ${past} ${values.length === 1 ? written : `(${written})`}`,
    params: [...params, ...values.map(([value]) => value)],
  };
}

/**
 * A keyed list read with `LIMIT limit + 1`: the page (at most `limit` rows) and the key after which the next
 * page starts, or null on the last page. Without a limit, every row and no next page.
 */
export function keyedPage<Row extends { id: string; created_key: string }>(
  rows: Row[],
  limit: number | undefined,
): { page: Row[]; next: ListKey | null } {
  const more = limit !== undefined && rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return { page, next: more && last !== undefined ? { createdAt: last.created_key, id: last.id } : null };
}

/** As keyedPage, for a list ordered by what each row matched (a prefix list: `matched`, then the id). */
export function matchedPage<Row extends { id: string }>(
  rows: Row[],
  limit: number | undefined,
  matchedOf: (row: Row) => string,
): { page: Row[]; next: MatchKey | null } {
  const more = limit !== undefined && rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return { page, next: more && last !== undefined ? { matched: matchedOf(last), id: last.id } : null };
}
