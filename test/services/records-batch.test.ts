// The batch of `gds records import` held as the request body's bytes (src/services/records-batch.ts): the body
// is the JSON the service reads, whatever items were pushed, dropped (the service refused one) or re-sent.
import { describe, expect, it } from 'vitest';
import { BatchBuffer } from '../../src/services/records-batch.js';

const parse = (batch: BatchBuffer): unknown => JSON.parse(Buffer.from(batch.body().bytes).toString('utf8'));

describe('a batch of rows as one JSON body', () => {
  it('is the rows in order, with multi-byte text, and an empty batch is an empty array', () => {
    const batch = new BatchBuffer('{"rows":[', 10);
    expect(parse(batch)).toEqual({ rows: [] });
    const rows = [
      { sku: 'A', label: 'emoji 🚀 ünïcödé' },
      { sku: 'B', label: 'line\nbreak, "quoted"' },
      { sku: 'C' },
    ];
    rows.forEach((row, index) => batch.push(JSON.stringify(row), { row: index + 1, line: index + 2 }));
    expect(parse(batch)).toEqual({ rows });
    expect(batch.length).toBe(3);
    expect(batch.byteLength).toBe(batch.body().bytes.length);
    expect(batch.place(1)).toEqual({ row: 2, line: 3 });
    expect(batch.place(3)).toBeUndefined();
  });

  it('stays valid when a row is pushed after the body was taken, and after clear', () => {
    const batch = new BatchBuffer('{"rows":[', 10);
    batch.push('{"n":1}', { row: 1 });
    expect(parse(batch)).toEqual({ rows: [{ n: 1 }] });
    batch.push('{"n":2}', { row: 2 });
    expect(parse(batch)).toEqual({ rows: [{ n: 1 }, { n: 2 }] });
    batch.clear();
    expect(parse(batch)).toEqual({ rows: [] });
    batch.push('{"n":3}', { row: 3 });
    expect(parse(batch)).toEqual({ rows: [{ n: 3 }] });
    expect(batch.place(0)).toEqual({ row: 3 });
  });

  it('drops the first, a middle and the last item, keeping the others and their rows, lines and ids', () => {
    const batch = new BatchBuffer('{"records":[', 10);
    for (let i = 1; i <= 6; i += 1) {
      const id = i % 2 === 0 ? `rec_${i}` : undefined;
      const data = { n: i, text: 'ü'.repeat(i) };
      batch.push(JSON.stringify(id === undefined ? { data } : { id, data }), {
        row: i,
        line: i * 10,
        ...(id === undefined ? {} : { id }),
      });
    }
    expect(batch.creates).toBe(true);
    batch.body(); // taken and refused: the item is dropped and the rest sent again
    batch.remove(batch.indexOfId('rec_4'));
    batch.remove(0);
    batch.remove(batch.length - 1);
    expect(parse(batch)).toEqual({
      records: [
        { id: 'rec_2', data: { n: 2, text: 'üü' } },
        { data: { n: 3, text: 'üüü' } },
        { data: { n: 5, text: 'üüüüü' } },
      ],
    });
    expect([0, 1, 2].map((i) => batch.place(i))).toEqual([
      { row: 2, line: 20, id: 'rec_2' },
      { row: 3, line: 30 },
      { row: 5, line: 50 },
    ]);
    expect(batch.indexOfId('rec_6')).toBe(-1);
    batch.remove(1);
    batch.remove(1);
    expect(batch.creates).toBe(false);
    batch.remove(0);
    expect(parse(batch)).toEqual({ records: [] });
  });

  it('grows past its first megabyte and holds no more items than its capacity', () => {
    const batch = new BatchBuffer('{"rows":[', 3);
    const big = 'x'.repeat(700_000);
    batch.push(JSON.stringify({ big }), { row: 1 });
    batch.push(JSON.stringify({ big }), { row: 2 });
    batch.push(JSON.stringify({ small: 1 }), { row: 3 });
    expect(batch.full).toBe(true);
    expect(() => batch.push('{}', { row: 4 })).toThrow();
    expect(parse(batch)).toEqual({ rows: [{ big }, { big }, { small: 1 }] });
  });
});
