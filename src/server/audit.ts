// The audit trail: every action of the server writes an entry in the same transaction as the action.
import type { Clock } from './clock.js';
import type { Queryable } from './db/handle.js';
import { WhereClause } from './db/where.js';
import { decodeAuditCursor, encodeListCursor } from './list-cursor.js';
import { newId } from './ids.js';
import type { AuditEntry } from '../contract/types.js';

export interface AuditInput {
  workspaceId: string;
  userId: string | null;
  tableId?: string | null;
  action: string;
  resource: string;
  environmentLabel?: string | null;
  gateMode?: 'ENFORCING' | 'ADVISORY' | null;
  details?: Record<string, unknown>;
}

/**
 * The most an entry's details may take, serialized (a 64 KB evidence summary and its context fit). Larger
 * details are stored, and details stored larger before this bound existed are returned, as a marker.
 */
export const MAX_DETAILS_BYTES = 96 * 1024;
/** A page of the audit log stops before it would pass this many bytes (its nextCursor goes on from there). */
export const MAX_PAGE_BYTES = 4 * 1024 * 1024;

/** The marker that stands for details over MAX_DETAILS_BYTES. */
function truncatedDetails(bytes: number, keys: string[]): Record<string, unknown> {
  return {
    truncated: true,
    originalBytes: bytes,
    keys: keys.slice(0, 50),
    message: `The details of this entry were ${bytes} bytes, over the ${MAX_DETAILS_BYTES / 1024} KB an entry keeps; they are left out.`,
  };
}

function boundedDetails(details: Record<string, unknown>): string {
  const text = JSON.stringify(details);
  const bytes = Buffer.byteLength(text, 'utf8');
  return bytes <= MAX_DETAILS_BYTES ? text : JSON.stringify(truncatedDetails(bytes, Object.keys(details)));
}

/** A place in the log taken before its entry is known (`reserveAuditSlot`), for `recordAudit` to write at. */
export interface AuditSlot {
  readonly seq: string;
  readonly at: string;
}

/**
 * Takes the log's next place, and the time, for an entry written later in the same transaction (`recordAudit`
 * with the slot): an action whose entry needs what its effects return (the table a landing registered, the
 * move of its contract revision) still reads before the entries those effects write, cause before effect.
 */
export async function reserveAuditSlot(q: Queryable, clock: Clock): Promise<AuditSlot> {
  const [row] = await q.query<{ seq: string }>(
    `SELECT nextval(pg_get_serial_sequence('gds.audit_log', 'seq'))::text AS seq`,
  );
  if (!row) throw new Error('reserveAuditSlot: no seq');
  return { seq: row.seq, at: new Date(clock()).toISOString() };
}

/** Writes `entry` now, or at `slot` (its place and time in the log) when given. */
export async function recordAudit(
  q: Queryable,
  clock: Clock,
  entry: AuditInput,
  slot?: AuditSlot,
): Promise<void> {
  await q.query(
    `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
       gate_mode, details, created_at${slot ? ', seq' : ''})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10${slot ? ', $11::bigint' : ''})`,
    [
      newId('aud'),
      entry.workspaceId,
      entry.userId,
      entry.tableId ?? null,
      entry.action,
      entry.resource,
      entry.environmentLabel ?? null,
      entry.gateMode ?? null,
      entry.details ? boundedDetails(entry.details) : null,
      slot?.at ?? new Date(clock()).toISOString(),
      ...(slot ? [slot.seq] : []),
    ],
  );
}

/**
 * `recordAudit` of many entries in one statement (a signal of a whole dbt run), written in the order given,
 * all at one time.
 */
export async function recordAudits(
  q: Queryable,
  clock: Clock,
  entries: readonly AuditInput[],
): Promise<void> {
  if (entries.length === 0) return;
  const column = <T>(of: (entry: AuditInput) => T) => entries.map(of);
  await q.query(
    `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
       gate_mode, details, created_at)
     SELECT e.id, e.workspace_id, e.user_id, e.table_id, e.action, e.resource, e.environment_label,
            e.gate_mode, e.details::jsonb, $10::timestamptz
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                   $8::text[], $9::text[])
            WITH ORDINALITY AS e(id, workspace_id, user_id, table_id, action, resource, environment_label,
                                 gate_mode, details, n)
      ORDER BY e.n`,
    [
      column(() => newId('aud')),
      column((e) => e.workspaceId),
      column((e) => e.userId),
      column((e) => e.tableId ?? null),
      column((e) => e.action),
      column((e) => e.resource),
      column((e) => e.environmentLabel ?? null),
      column((e) => e.gateMode ?? null),
      column((e) => (e.details ? boundedDetails(e.details) : null)),
      new Date(clock()).toISOString(),
    ],
  );
}

export interface AuditQuery {
  limit: number;
  cursor?: string;
  eventType?: string;
  since?: string;
}

interface AuditRow {
  cursor_seq: string;
  id: string;
  user_id: string | null;
  table_id: string | null;
  action: string;
  resource: string;
  environment_label: string | null;
  gate_mode: 'ENFORCING' | 'ADVISORY' | null;
  details: Record<string, unknown> | null;
  details_bytes: number | null;
  details_keys: string[] | null;
  created_at: Date;
  user_email: string | null;
}

// Details over the bound (stored before it existed) never leave the database whole: only their size and keys.
const ENTRY_COLUMNS = `seq::text AS cursor_seq, id, user_id, table_id, action, resource, environment_label, gate_mode,
    CASE WHEN octet_length(details::text) > ${MAX_DETAILS_BYTES} THEN NULL ELSE details END AS details,
    CASE WHEN octet_length(details::text) > ${MAX_DETAILS_BYTES} THEN octet_length(details::text) END
      AS details_bytes,
    CASE WHEN octet_length(details::text) > ${MAX_DETAILS_BYTES} AND jsonb_typeof(details) = 'object'
      THEN ARRAY(SELECT jsonb_object_keys(details)) END AS details_keys,
    created_at, (SELECT u.email FROM gds.users u WHERE u.id = gds.audit_log.user_id) AS user_email`;

/** Newest first; `nextCursor` is the empty string on the last page (§4.4 types it a string). */
export async function listAudit(
  q: Queryable,
  workspaceId: string,
  query: AuditQuery,
): Promise<{ entries: AuditEntry[]; nextCursor: string }> {
  const where = new WhereClause();
  where
    .and(`workspace_id = ${where.param(workspaceId)}`)
    .given(
      query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor),
      (p) => `seq < ${p}::bigint`,
    )
    .given(query.eventType, (p) => `action = ${p}`);
  const rows =
    query.since === undefined
      ? await q.query<AuditRow>(
          `SELECT ${ENTRY_COLUMNS} FROM gds.audit_log WHERE ${where.sql}
            ORDER BY seq DESC LIMIT ${where.param(query.limit + 1)}`,
          where.params,
        )
      : await q.query<AuditRow>(
          // The workspace's seqs, each found through the primary key.
          `SELECT ${ENTRY_COLUMNS} FROM gds.audit_log WHERE seq = ANY($1::bigint[]) ORDER BY seq DESC`,
          [await sincePage(q, where, workspaceId, query.since, query.limit + 1, query.eventType)],
        );
  const entries: AuditEntry[] = [];
  let bytes = 0;
  let last: AuditRow | undefined;
  for (const row of rows.slice(0, query.limit)) {
    const entry = toEntry(row);
    bytes += Buffer.byteLength(JSON.stringify(entry), 'utf8') + 1;
    if (entries.length > 0 && bytes > MAX_PAGE_BYTES) break;
    entries.push(entry);
    last = row;
  }
  const more = rows.length > entries.length;
  return { entries, nextCursor: more && last ? encodeListCursor({ before: last.cursor_seq }) : '' };
}

/**
 * The seqs of a `since` page (`want` of them, newest first). created_at comes from each server's clock, which
 * another server's, or a clock set back, need not agree with, so the window is no range of seq. The page's
 * newest `want` entries by seq come first (a recent window fills the page with them, read as a page without
 * `since` is); only when some of them are older than since is the rest of the window read by time, below the
 * last of them (audit_log_by_time): the log behind the window is never read. With clocks that agree that is
 * the window's last page, and a window a page holds. `where`, the list's filters, takes the first read's
 * parameters after its own.
 */
async function sincePage(
  q: Queryable,
  where: WhereClause,
  workspaceId: string,
  since: string,
  want: number,
  eventType: string | undefined,
): Promise<string[]> {
  const newest = await q.query<{ seq: string; inside: boolean }>(
    `SELECT seq::text AS seq, created_at >= ${where.param(since)}::timestamptz AS inside FROM gds.audit_log
      WHERE ${where.sql} ORDER BY audit_log.seq DESC LIMIT ${where.param(want)}`,
    where.params,
  );
  const page = newest.filter((row) => row.inside).map((row) => row.seq);
  const last = newest.at(-1);
  if (page.length === want || newest.length < want || last === undefined) return page;
  // `seq + 0`: the window is read by time whatever the planner estimates, never by walking the seq indexes.
  const older = await q.query<{ seq: string }>(
    `WITH in_window AS MATERIALIZED (
       SELECT seq FROM gds.audit_log
        WHERE workspace_id = $1 AND created_at >= $2::timestamptz AND seq + 0 < $3::bigint
          ${eventType === undefined ? '' : 'AND action = $5'})
     SELECT seq::text AS seq FROM in_window ORDER BY in_window.seq DESC LIMIT $4`,
    [workspaceId, since, last.seq, want - page.length, ...(eventType === undefined ? [] : [eventType])],
  );
  return [...page, ...older.map((row) => row.seq)];
}

/** §2.4 types every field as a string: what does not apply to an event is the empty string, not null. */
function toEntry(row: AuditRow): AuditEntry {
  const entry: AuditEntry = {
    id: row.id,
    userId: row.user_id ?? '',
    // Beside the spec's fields, for people to read: the e-mail of userId, empty when there is none.
    userEmail: row.user_email ?? '',
    tableId: row.table_id ?? '',
    action: row.action,
    resource: row.resource,
    environmentLabel: row.environment_label ?? '',
    gateModeAtEvaluation: row.gate_mode ?? '',
    createdAt: new Date(row.created_at).toISOString(),
  };
  if (row.details_bytes !== null) entry.details = truncatedDetails(row.details_bytes, row.details_keys ?? []);
  else if (row.details) entry.details = row.details;
  return entry;
}
