// On PGlite a Gate run copies the table's rows into a sandbox unless they are past 32 MB on disk, when the
// checks run in place instead (snapshot.ts). The size is the table's with its partitions': a plain table
// has no partition tree at all (pg_partition_tree lists no row for it), which once made every table's size
// 0, so that even a table of millions of rows was copied whole. Both engines.
import { describe, expect, it } from 'vitest';
import { relationBytes } from '../../../src/server/gates/snapshot.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('the size a copy is judged by, on $engine', ({ postgres, skip }) => {
  const db = useEngineDb({ postgres, skip }, async (db) => {
    await db.exec(`
      CREATE SCHEMA w;
      CREATE TABLE w.plain (id int, note text);
      INSERT INTO w.plain SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
      CREATE TABLE w.split (id int, note text) PARTITION BY RANGE (id);
      CREATE TABLE w.split_low PARTITION OF w.split FOR VALUES FROM (0) TO (10000);
      CREATE TABLE w.split_high PARTITION OF w.split FOR VALUES FROM (10000) TO (30000);
      INSERT INTO w.split SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
    `);
  });

  const tableSize = async (name: string) =>
    Number((await db().query<{ n: string }>(`SELECT pg_table_size($1::regclass)::text AS n`, [name]))[0]?.n);

  it('counts a plain table (which has no partition tree)', needs(skip), async () => {
    const bytes = await relationBytes(db(), 'w.plain');
    expect(bytes).toBeGreaterThan(500_000);
    expect(bytes).toBe(await tableSize('w.plain'));
  });

  it("counts a partitioned table's partitions, each once", needs(skip), async () => {
    const bytes = await relationBytes(db(), 'w.split');
    expect(bytes).toBeGreaterThan(500_000);
    expect(bytes).toBe((await tableSize('w.split_low')) + (await tableSize('w.split_high')));
  });
});
