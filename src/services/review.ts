// `gds review`: the steward's queue (the tables `gate submit` handed over, oldest first), and a steward's
// decision on each, through the same calls as `gds certify` and `gds reject`.
import type { ApiClient } from '../client/index.js';
import type { QueueEntry } from '../client/areas/notifications.js';

export type { QueueEntry };
export type ReviewClient = Pick<ApiClient, 'notifications'>;

/** Largest page the service serves of the queue, and the first page's size (the first line comes soon). */
const MAX_QUEUE_PAGE = 1000;
const FIRST_QUEUE_PAGE = 100;

/**
 * The queue page by page (the first page carries the queue's `total`): 100 entries, then 1,000 a page, as the
 * table list is read; a queue of 2,000 submitted tables is 3 requests, not 20. Each table once: one submitted
 * again while the pages are read has its new entry after the pages already read, and is not listed twice.
 */
export async function* reviewQueuePages(
  client: ReviewClient,
): AsyncGenerator<{ rows: QueueEntry[]; total?: number }, void, undefined> {
  const listed = new Set<string>();
  for await (const page of client.notifications.queuePages([FIRST_QUEUE_PAGE, MAX_QUEUE_PAGE])) {
    const rows = page.entries.filter((entry) => !listed.has(entry.tableId));
    for (const entry of rows) listed.add(entry.tableId);
    yield { rows, ...(page.total === undefined ? {} : { total: page.total }) };
  }
}

const WHAT: Record<string, string> = {
  definition: 'definition',
  gate1: 'gate1.yml',
  data: 'data',
  contract: 'contract',
};

/**
 * The Gate 1 proof in a few words: `passed`, `failed: a, b`, or `no proof stored`; and when the table moved
 * since (certify is then blocked), `…, stale (data v3→v4 since): submit it again to certify`.
 */
export function proofSummary(entry: QueueEntry): string {
  const proof = entry.proof;
  if (proof === null) return 'no proof stored';
  const result = proof.passed ? 'passed' : `failed: ${proof.failedPredicates.join(', ')}`;
  // An older service sends no `fresh`: nothing can be said of it.
  if (proof.fresh !== false) return result;
  const moved = proof.changedSince.map((c) => `${WHAT[c.what] ?? c.what} v${c.from}→v${c.to}`).join(', ');
  return `${result}, stale (${moved} since): submit it again to certify`;
}

/** What changed since the last certified version: `never certified`, `nothing since v2`, `gate1.yml v1→v2 since v2`. */
export function changesSummary(entry: QueueEntry): string {
  const since = entry.sinceCertified;
  if (since === null) return 'never certified';
  if (since.tableVersion === null) return `certified v${since.version}; what changed since is not known`;
  if (since.changed.length === 0) return `nothing since v${since.version}`;
  const parts = since.changed.map(
    (c) => `${WHAT[c.what] ?? c.what} ${c.from === null ? '?' : `v${c.from}`}→v${c.to}`,
  );
  return `${parts.join(', ')} since v${since.version}`;
}

/** The open recertification requests in a few words: `none`, `2 (drift, manual)`. */
export function requestsSummary(entry: QueueEntry): string {
  const open = entry.openRecertificationRequests;
  return open.length === 0 ? 'none' : `${open.length} (${open.map((r) => r.cause).join(', ')})`;
}
