// `gds audit list`: entries of the workspace audit log (§4.4), newest first. One page by default;
// with `all`, every page through the client's cursor walker, each entry handed on as it arrives.
import type { ApiClient } from '../client/index.js';
import { MAX_AUDIT_PAGE } from '../client/areas/audit-log.js';
import type { AuditEntry } from '../contract/types.js';

export type AuditClient = Pick<ApiClient, 'auditLog'>;

export interface AuditListOptions {
  eventType?: string | undefined;
  /** ISO-8601 time: only entries created at or after it. */
  since?: string | undefined;
  /** Size of the one page (1-200); ignored with `all`. */
  limit?: number | undefined;
  /** Every entry, page after page. */
  all?: boolean | undefined;
  signal?: AbortSignal;
}

export interface AuditListResult {
  count: number;
  /** One page was asked and the service has more after it. */
  more: boolean;
}

/** Hands each entry to `onEntry` in the service's order (newest first) and says how many there were. */
export async function listAuditEntries(
  client: AuditClient,
  options: AuditListOptions,
  onEntry: (entry: AuditEntry) => void,
): Promise<AuditListResult> {
  const { eventType, since, signal } = options;
  let count = 0;
  if (options.all === true) {
    for await (const entry of client.auditLog.iterate({ eventType, since, ...(signal ? { signal } : {}) })) {
      onEntry(entry);
      count += 1;
    }
    return { count, more: false };
  }
  const page = await client.auditLog.page({ eventType, since, limit: options.limit }, { signal });
  for (const entry of page.entries) onEntry(entry);
  return { count: page.entries.length, more: Boolean(page.nextCursor) };
}

/**
 * Every entry (as `all` lists them), a page at a time as the service sends them, for a table printed page by
 * page.
 */
export async function* auditEntryPages(
  client: AuditClient,
  options: Pick<AuditListOptions, 'eventType' | 'since' | 'signal'>,
): AsyncGenerator<{ rows: AuditEntry[] }, void, undefined> {
  const { eventType, since, signal } = options;
  let rows: AuditEntry[] = [];
  for await (const entry of client.auditLog.iterate({ eventType, since, ...(signal ? { signal } : {}) })) {
    rows.push(entry);
    if (rows.length === MAX_AUDIT_PAGE) {
      yield { rows };
      rows = [];
    }
  }
  if (rows.length > 0) yield { rows };
}
