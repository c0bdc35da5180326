// `chunks:K@N` on a table with room for them reads K runs of N consecutive rows in storage
// order by TID range scans of the blocks around each run (no count, no numbering, no sort of the table),
// the first run from the first row, the last to the last row, the others spread evenly between; on a
// table too small for that, or a view, the rows are numbered once, as before (gate1-run.test.ts asserts
// those rows). The drawn rows are read back from the run's temporary table, on PGlite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import type { RowsSource } from '../../../src/server/gates/sample.js';
import { drawSample, parseSample } from '../../../src/server/gates/sample.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

const ROWS = 20_000;
const TARGET = 'pg_temp.__gds_test_sample';

/** The rows of `from` as drawSample sees a table of it (storage order, TABLESAMPLE possible). */
const tableRows = (from: string): RowsSource => ({
  from: `${from} AS b`,
  present: ['id', 'note'],
  order: ['b.ctid'],
  storageOrdered: true,
  sampleable: from,
  identity: 'b.ctid::text',
});

describe.each(ENGINES)('chunks:K@N on $engine', ({ postgres, skip }) => {
  const db = useEngineDb(
    { postgres, skip },
    async (db) => {
      await db.exec('CREATE SCHEMA w');
      // Rows in id order, so storage order is id order; the ids say which rows a run read.
      await db.query(
        `CREATE TABLE w.t AS SELECT g AS id, repeat('x', g % 40) AS note FROM generate_series(1, $1::int) AS g`,
        [ROWS],
      );
      await db.exec('CREATE VIEW w.v AS SELECT * FROM w.t');
    },
    300_000,
  );

  /** The ids drawSample keeps for `spec` over `from`, in id order, and the method it reports. */
  const draw = (spec: string, from: string, source?: Partial<RowsSource>) =>
    db().transaction(async (tx) => {
      const method = await drawSample(
        tx,
        TARGET,
        () => ({ ...tableRows(from), ...source }),
        parseSample(spec),
        'seed',
      );
      const rows = await tx.query<{ id: number }>(`SELECT id FROM ${TARGET} ORDER BY id`);
      return { method, ids: rows.map((r) => Number(r.id)) };
    });

  /** The ids as runs of consecutive ids: [first, last] of each. */
  const runsOf = (ids: number[]) => {
    const runs: Array<[number, number]> = [];
    for (const id of ids) {
      const run = runs.at(-1);
      if (run && id === run[1] + 1) run[1] = id;
      else runs.push([id, id]);
    }
    return runs;
  };

  it(
    '4 runs of 25 rows on 20,000: from the first row, to the last, spread evenly, by TID range scans',
    needs(skip),
    async () => {
      const { method, ids } = await draw('chunks:4@25', 'w.t');
      expect(method).toMatch(/TID range scans/);
      expect(ids).toHaveLength(100);
      const runs = runsOf(ids);
      expect(runs).toHaveLength(4);
      expect(runs.map(([first, last]) => last - first + 1)).toEqual([25, 25, 25, 25]);
      expect(runs[0]?.[0]).toBe(1);
      expect(runs[3]?.[1]).toBe(ROWS);
      // Evenly: the middle runs start near a third and two thirds of the way (within a few blocks).
      expect(Math.abs((runs[1]?.[0] ?? 0) - ROWS / 3)).toBeLessThan(ROWS / 20);
      expect(Math.abs((runs[2]?.[0] ?? 0) - (2 * ROWS) / 3)).toBeLessThan(ROWS / 20);
    },
  );

  it('one run is the first N rows', needs(skip), async () => {
    const { ids } = await draw('chunks:1@30', 'w.t');
    expect(ids).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });

  it(
    'runs covering a large share of the table: the rows are numbered instead, starts at exact positions',
    needs(skip),
    async () => {
      const { method, ids } = await draw('chunks:2@4000', 'w.t');
      expect(method).toMatch(/numbered once in storage order/);
      expect(runsOf(ids)).toEqual([
        [1, 4000],
        [ROWS - 3999, ROWS],
      ]);
    },
  );

  it('a view has no blocks to range over: its rows are numbered', needs(skip), async () => {
    const { method, ids } = await draw('chunks:4@25', 'w.v', {
      storageOrdered: false,
      sampleable: undefined,
      order: ['b.id'],
      identity: 'b::text',
    });
    expect(method).toMatch(/one sort of every row/);
    expect(runsOf(ids).map(([first]) => first)).toEqual([1, 6659, 13317, 19976]);
  });
});
