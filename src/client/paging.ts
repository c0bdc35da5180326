// Async iteration over the two paging styles of the API: numbered pages and cursors.

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
  nextCursor?: string | null;
}

/** Every item of a cursor-paged list, following `nextCursor` until the service gives none. */
export async function* walkCursorPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<CursorPage<T>>,
): AsyncGenerator<T, void, undefined> {
  const used = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const { items, nextCursor } = await fetchPage(cursor);
    yield* items;
    if (!nextCursor) return;
    // A cursor seen before would loop forever: the listing is broken, not merely long.
    if (used.has(nextCursor)) throw new Error(`The service returned cursor ${nextCursor} twice; stopping`);
    used.add(nextCursor);
    cursor = nextCursor;
  }
}
