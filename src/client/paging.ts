// Async iteration over the two paging styles of the API: numbered pages and cursors.
import { CursorLoopError } from './errors.js';

export interface NumberedPage<T> {
  items: T[];
  /** The page size the service applied, when it says (it may be lower than asked). */
  limit?: number;
  /** Total number of items, when the service says. */
  total?: number;
}

/**
 * Every item of a 1-based numbered list, one request per page, in order. Stops after an empty or
 * short page, or once `total` items have been seen.
 */
export async function* walkNumberedPages<T>(
  fetchPage: (page: number, limit: number) => Promise<NumberedPage<T>>,
  limit: number,
): AsyncGenerator<T, void, undefined> {
  let seen = 0;
  for (let page = 1; ; page += 1) {
    const { items, limit: applied, total } = await fetchPage(page, limit);
    yield* items;
    seen += items.length;
    if (items.length === 0 || items.length < (applied ?? limit)) return;
    if (total !== undefined && seen >= total) return;
  }
}

export interface CursorPage<T> {
  items: T[];
  /** Absent, null or empty on the last page. */
  nextCursor?: string | null | undefined;
}

/**
 * Every page of a cursor-paged list, in order: asks for the first page without a cursor, then follows each
 * page's `nextCursor` until a page has none (absent, null or empty). Each page is yielded before the next is
 * asked for, and nothing more is asked once the consumer stops. A cursor the service already gave would
 * loop forever (the listing is broken, not merely long): after yielding the page that repeats it, the walk
 * fails with a CursorLoopError naming `list` and the cursor, which the CLI reports as `pagination_loop`.
 */
export async function* cursorPages<P extends { nextCursor?: string | null | undefined }>(
  list: string,
  fetchPage: (cursor: string | undefined) => Promise<P>,
): AsyncGenerator<P, void, undefined> {
  const followed = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    const next = page.nextCursor;
    if (next === undefined || next === null || next === '') return;
    if (followed.has(next)) throw new CursorLoopError(list, next);
    followed.add(next);
    cursor = next;
  }
}

/** Every item of a cursor-paged list (cursorPages, item by item). */
export async function* walkCursorPages<T>(
  list: string,
  fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>,
): AsyncGenerator<T, void, undefined> {
  for await (const page of cursorPages(list, fetchPage)) yield* page.items;
}
