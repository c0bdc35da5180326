// The warehouse's columns as the server reads them (src/server/warehouse.ts, from pg_catalog), on PGlite and
// PostgreSQL: the same relations, columns, order, types, nullability and numeric storage that
// information_schema.columns gives, for every kind of column a warehouse table or view may have.
import { describe, expect, it } from 'vitest';
import { describeWarehouseObject, listWarehouseObjects } from '../../src/server/warehouse.js';
import { ENGINES, useEngineDb } from '../helpers/engines.js';
import { needs } from '../helpers/skip.js';

const SETUP = `
  CREATE SCHEMA wh;
  CREATE SCHEMA elsewhere;
  CREATE DOMAIN wh.money4 AS numeric(10,3);
  CREATE DOMAIN wh.positive AS integer NOT NULL CHECK (VALUE > 0);
  CREATE TYPE wh.mood AS ENUM ('ok', 'sad');
  CREATE TABLE wh.kinds (
    i integer NOT NULL, b bigint, s smallint, n numeric(12,2), n_free numeric, r real, d double precision,
    t text, v varchar(10), c char(3), flag boolean, day date, at timestamptz, at_local timestamp,
    m wh.money4, p wh.positive, ints integer[], feeling wh.mood, doc jsonb, u uuid, gone text
  );
  ALTER TABLE wh.kinds DROP COLUMN gone;
  CREATE TABLE wh."Mixed Case" ("Id" bigint NOT NULL, "label" text);
  CREATE VIEW wh.a_view AS SELECT i, n FROM wh.kinds;
  CREATE MATERIALIZED VIEW wh.a_matview AS SELECT i FROM wh.kinds;
  CREATE SEQUENCE wh.a_sequence;
  CREATE INDEX kinds_i ON wh.kinds (i);
  CREATE TABLE elsewhere.kinds (x integer);
`;

describe.each(ENGINES)('warehouse columns on $engine', (engine) => {
  const db = useEngineDb(engine, async (d) => {
    await d.exec(SETUP);
  });

  it(
    'lists every table and view of the schemas with the columns information_schema gives',
    needs(engine.skip),
    async () => {
      const expected = await db().query<{ source: string; name: string; data_type: string }>(
        `SELECT table_schema || '.' || table_name AS source, column_name AS name, data_type
         FROM information_schema.columns WHERE table_schema = 'wh'
        ORDER BY table_schema, table_name, ordinal_position`,
      );
      const objects = await listWarehouseObjects(db(), [{ id: 'con_1', schema: 'wh' }]);
      expect(objects.map((o) => o.source)).toEqual(['wh.Mixed Case', 'wh.a_view', 'wh.kinds']);
      expect(objects.every((o) => o.connectorId === 'con_1')).toBe(true);
      expect(objects.flatMap((o) => o.columns.map((c) => [o.source, c.name]))).toEqual(
        expected.map((e) => [e.source, e.name]),
      );
      expect(objects.find((o) => o.source === 'wh.kinds')?.columns.map((c) => c.type)).toEqual([
        'integer',
        'integer',
        'integer',
        'numeric',
        'numeric',
        'numeric',
        'numeric',
        'text',
        'text',
        'text',
        'boolean',
        'date',
        'timestamp',
        'timestamp',
        'numeric',
        'integer',
        'text',
        'text',
        'text',
        'text',
      ]);
    },
  );

  it(
    'describes one relation: required, integer sizes and a declared numeric precision',
    needs(engine.skip),
    async () => {
      const kinds = await describeWarehouseObject(db(), 'wh.kinds');
      const byName = new Map((kinds ?? []).map((c) => [c.name, c]));
      expect(byName.get('i')).toEqual({ name: 'i', type: 'integer', required: true, integerBytes: 4 });
      expect(byName.get('b')).toEqual({ name: 'b', type: 'integer', required: false, integerBytes: 8 });
      expect(byName.get('s')).toEqual({ name: 's', type: 'integer', required: false, integerBytes: 2 });
      expect(byName.get('n')).toEqual({
        name: 'n',
        type: 'numeric',
        required: false,
        precision: 12,
        scale: 2,
      });
      expect(byName.get('n_free')).toEqual({ name: 'n_free', type: 'numeric', required: false });
      expect(byName.get('m')).toEqual({
        name: 'm',
        type: 'numeric',
        required: false,
        precision: 10,
        scale: 3,
      });
      expect(byName.get('p')).toEqual({ name: 'p', type: 'integer', required: true, integerBytes: 4 });
      expect(byName.has('gone')).toBe(false);
      expect(await describeWarehouseObject(db(), 'wh.Mixed Case')).toEqual([
        { name: 'Id', type: 'integer', required: true, integerBytes: 8 },
        { name: 'label', type: 'text', required: false },
      ]);
      expect(await describeWarehouseObject(db(), 'wh.a_matview')).toBeNull();
      expect(await describeWarehouseObject(db(), 'wh.nothing')).toBeNull();
    },
  );
});
