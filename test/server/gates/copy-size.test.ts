// On PGlite a Gate run copies the table's rows into a sandbox unless they are past 32 MB on disk, when the
// checks run in place instead (snapshot.ts). The size is the table's with its partitions': a plain table
// has no partition tree at all (pg_partition_tree lists no row for it), which once made every table's size
// 0, so that even a table of millions of rows was copied whole. Both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/index.js';
import { openDb } from '../../../src/server/db/index.js';
import { relationBytes } from '../../../src/server/gates/snapshot.js';
import { createPostgresDatabase } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

const engines = [
  { engine: 'PGlite', postgres: false, skip: undefined },
  { engine: 'PostgreSQL', postgres: true, skip: noPostgres },
];

describe.each(engines)('the size a copy is judged by, on $engine', ({ postgres, skip }) => {
  let db: Db;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (skip !== undefined) return;
    if (postgres) {
      const database = await createPostgresDatabase();
      drop = database.drop;
      db = await openDb({ databaseUrl: database.url });
    } else {
      db = await openDb({});
    }
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

  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const tableSize = async (name: string) =>
    Number((await db.query<{ n: string }>(`SELECT pg_table_size($1::regclass)::text AS n`, [name]))[0]?.n);

  it('counts a plain table (which has no partition tree)', needs(skip), async () => {
    const bytes = await relationBytes(db, 'w.plain');
    expect(bytes).toBeGreaterThan(500_000);
    expect(bytes).toBe(await tableSize('w.plain'));
  });

  it("counts a partitioned table's partitions, each once", needs(skip), async () => {
    const bytes = await relationBytes(db, 'w.split');
    expect(bytes).toBeGreaterThan(500_000);
    expect(bytes).toBe((await tableSize('w.split_low')) + (await tableSize('w.split_high')));
  });
});
