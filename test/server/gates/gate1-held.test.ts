// newestGate1s reads only the versions the server has not read before, and keeps a bounded amount of text: a
// database stand-in answers the newest versions it holds and counts the tables each read asked for.
import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../../src/server/db/handle.js';
import { newestGate1s } from '../../../src/server/gates/gate1-store.js';

/** Versions by table (the last the newest), as gds.gate1_versions would hold them. */
function database(versions: Map<string, string[]>) {
  const asked: string[][] = [];
  const q: Queryable = {
    async query<T>(_sql: string, params?: unknown[]) {
      const ids = (params?.[0] ?? []) as string[];
      asked.push(ids);
      return ids.flatMap((id) => {
        const contents = versions.get(id) ?? [];
        return contents.length === 0
          ? []
          : [
              {
                table_id: id,
                version: contents.length,
                content: contents.at(-1),
                created_by: 'usr_1',
                created_at: '2026-01-01T00:00:00.000Z',
              },
            ];
      }) as T[];
    },
    exec: async () => undefined,
  };
  return { q, asked };
}

describe('newestGate1s', () => {
  it('reads a table again only when its row names a version not kept, and answers each newest', async () => {
    const versions = new Map([
      ['t1', ['one']],
      ['t2', ['two']],
      ['t3', []],
    ]);
    const { q, asked } = database(versions);
    const rows = (v1: number) => [
      { id: 't1', gate1Version: v1 },
      { id: 't2', gate1Version: 1 },
      { id: 't3', gate1Version: 0 },
    ];
    const first = await newestGate1s(q, rows(1));
    expect([...first.keys()]).toEqual(['t1', 't2']);
    expect(first.get('t1')).toMatchObject({ version: 1, content: 'one' });
    expect(asked).toEqual([['t1', 't2', 't3']]);

    const again = await newestGate1s(q, rows(1));
    expect(again).toEqual(first);
    expect(asked.at(-1)).toEqual(['t3']); // a table without a version is asked each time

    // Its row names version 2 before the version is there (another transaction's), then once it is.
    const early = await newestGate1s(q, rows(2));
    expect(early.get('t1')).toMatchObject({ version: 1, content: 'one' });
    expect(asked.at(-1)).toEqual(['t1', 't3']);
    versions.get('t1')?.push('one, again');
    const later = await newestGate1s(q, rows(2));
    expect(later.get('t1')).toMatchObject({ version: 2, content: 'one, again' });
    expect(asked.at(-1)).toEqual(['t1', 't3']);
    await newestGate1s(q, rows(2));
    expect(asked.at(-1)).toEqual(['t3']);
  });

  it('keeps at most 16 M characters of text, the oldest used leaving until half is left', async () => {
    const big = (n: number) => String(n % 10).repeat(1024 * 1024); // 1 M characters: 15 fit, not 16
    const ids = Array.from({ length: 16 }, (_, i) => `big${i}`);
    const { q, asked } = database(new Map(ids.map((id, i) => [id, [big(i)]])));
    const row = (i: number) => ({ id: `big${i}`, gate1Version: 1 });
    await newestGate1s(
      q,
      ids.slice(0, 15).map((_, i) => row(i)),
    );
    const read = asked.length;
    await newestGate1s(q, [row(0)]); // kept, and now the last to leave: big1 is the oldest used
    expect(asked.length).toBe(read);
    await newestGate1s(q, [row(15)]); // past 16 M: big1 to big9 leave, 8 M or less is left
    const again = await newestGate1s(q, [row(0), row(9), row(10), row(15)]);
    expect(asked.slice(read)).toEqual([['big15'], ['big9']]);
    expect(again.get('big9')?.content).toBe(big(9));
  });
});
