// The walkers over any list size and page size: every item once, in order, with the fewest requests.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CursorLoopError } from '../../src/client/errors.js';
import { cursorPages, walkCursorPages, walkNumberedPages } from '../../src/client/paging.js';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const sizes = fc.record({ count: fc.integer({ min: 0, max: 700 }), limit: fc.integer({ min: 1, max: 100 }) });

describe('walkNumberedPages', () => {
  it('yields every item once, asking each page once and never past the total', async () => {
    await fc.assert(
      fc.asyncProperty(sizes, fc.boolean(), async ({ count, limit }, withTotal) => {
        const items = Array.from({ length: count }, (_, i) => i);
        const asked: number[] = [];
        const walked = await collect(
          walkNumberedPages(async (page, size) => {
            asked.push(page);
            const slice = items.slice((page - 1) * size, page * size);
            return withTotal ? { items: slice, limit: size, total: count } : { items: slice };
          }, limit),
        );
        expect(walked).toEqual(items);
        // Without a total, a list that fills its last page needs one more (empty) page to know it ended.
        const full = Math.ceil(count / limit);
        const expected = withTotal || count % limit !== 0 ? Math.max(full, 1) : full + 1;
        expect(asked).toEqual(Array.from({ length: expected }, (_, i) => i + 1));
      }),
    );
  });

  it('uses the page size the service applied when it is smaller than asked', async () => {
    const items = Array.from({ length: 120 }, (_, i) => i);
    const asked: number[] = [];
    const walked = await collect(
      walkNumberedPages(async (page) => {
        asked.push(page);
        return { items: items.slice((page - 1) * 50, page * 50), limit: 50 };
      }, 100),
    );
    expect(walked).toEqual(items);
    expect(asked).toEqual([1, 2, 3]);
  });
});

describe('walkCursorPages', () => {
  it('yields every item once, following each cursor once', async () => {
    await fc.assert(
      fc.asyncProperty(sizes, fc.constantFrom(null, undefined, ''), async ({ count, limit }, end) => {
        const items = Array.from({ length: count }, (_, i) => `e${i}`);
        const cursors: Array<string | undefined> = [];
        const walked = await collect(
          walkCursorPages('/api/x', async (cursor) => {
            cursors.push(cursor);
            const start = cursor === undefined ? 0 : Number(cursor.slice(1));
            const next = start + limit;
            return { items: items.slice(start, next), nextCursor: next < count ? `c${next}` : end };
          }),
        );
        expect(walked).toEqual(items);
        expect(cursors).toHaveLength(Math.max(1, Math.ceil(count / limit)));
        expect(new Set(cursors).size).toBe(cursors.length);
      }),
    );
  });

  it('fails with CursorLoopError on a cursor given twice, after yielding the page that repeated it', async () => {
    const chain = ['a', 'b', 'a'];
    const asked: Array<string | undefined> = [];
    const pages: number[] = [];
    const walk = async () => {
      for await (const page of cursorPages('/api/x', async (cursor) => {
        asked.push(cursor);
        const n = cursor === undefined ? 0 : chain.indexOf(cursor) + 1;
        return { n, nextCursor: chain[n] };
      })) {
        pages.push(page.n);
      }
    };
    const failure = await walk().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CursorLoopError);
    expect(failure).toMatchObject({ list: '/api/x', cursor: 'a' });
    expect(pages).toEqual([0, 1, 2]);
    expect(asked).toEqual([undefined, 'a', 'b']);
  });
});
