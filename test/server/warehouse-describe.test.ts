// describeWarehouseObject, read on every push, status and baseline: the columns of one relation, read as one
// relation. A dbt project puts its models in one schema (2,000 models, 20,000 columns); reading the whole
// schema's columns for each made `gds apply` and `npm run server -- --dbt` quadratic in the project's size.
// The rows the database returns are counted here (no timing: the figures are in `npm run bench dbt-plan`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { scratchDir } from '../helpers/migrated-database.js';
import { describeWarehouseObject } from '../../src/server/warehouse.js';

let db: Db;
const TABLES = 60;

beforeAll(async () => {
  db = await openDb({ scratchDir: await scratchDir() });
  await db.exec('CREATE SCHEMA analytics');
  for (let i = 0; i < TABLES; i++)
    await db.exec(`CREATE TABLE analytics.t_${i} (id integer NOT NULL, label text, amount numeric(12,2))`);
  await db.exec('CREATE TABLE analytics."T_1" ("Id" bigint)');
});

afterAll(async () => {
  await db?.close();
});

/** The Queryable, counting the rows its queries return. */
function counting(): { q: Queryable; rows: () => number } {
  let rows = 0;
  const q: Queryable = {
    async query<T>(sql: string, params?: unknown[]) {
      const result = await db.query<T>(sql, params);
      rows += result.length;
      return result;
    },
    exec: (sql: string) => db.exec(sql),
  };
  return { q, rows: () => rows };
}

describe('describeWarehouseObject in a schema of many tables', () => {
  it("reads only the relation's own columns", async () => {
    const { q, rows } = counting();
    const columns = await describeWarehouseObject(q, 'analytics.t_1');
    expect(columns?.map((c) => c.name)).toEqual(['id', 'label', 'amount']);
    expect(columns?.[0]).toMatchObject({ type: 'integer', required: true });
    expect(columns?.[2]).toMatchObject({ type: 'numeric', precision: 12, scale: 2 });
    expect(rows()).toBe(3);
  });

  it('names the relation exactly (case, no pattern), and a missing one is null', async () => {
    expect((await describeWarehouseObject(db, 'analytics.T_1'))?.map((c) => c.name)).toEqual(['Id']);
    expect(await describeWarehouseObject(db, 'analytics.t_%')).toBeNull();
    expect(await describeWarehouseObject(db, 'analytics.nope')).toBeNull();
    expect(await describeWarehouseObject(db, 'elsewhere.t_1')).toBeNull();
  });
});
