// A batch item's step answers a database failure as its single write answers it (src/server/errors.ts's one
// mapping): a unique-constraint race is 409 `conflict` naming the constraint, a deadlock 503
// `database_conflict`, a value the database refuses 400 `invalid_input`; same status, same body. The failure
// is raised by a trigger on the gate1.yml versions, as PostgreSQL would raise it under a real race.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { pushDevDefinition } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';

const GATE1 = 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: 0 }\n';

const FAILURES: Array<[string, string]> = [
  ['a unique-constraint race', "ERRCODE = '23505', CONSTRAINT = 'gate1_versions_pkey'"],
  ['a deadlock', "ERRCODE = '40P01'"],
  ['a value the database refuses', "ERRCODE = '22P02'"],
];

describe.each(ENGINES)('a batch item failing in the database ($engine)', (engine) => {
  const server = useEngineServer(engine);
  let tableId: string | undefined;

  const tableOnce = async () => {
    const s = server();
    if (tableId === undefined) {
      await s.sql('CREATE TABLE analytics_dev.batch_failures (id integer, label text)');
      const pushed = await pushDevDefinition(s, 'batch_failures', ['id', 'label']);
      expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
      tableId = pushed.body.tableId as string;
    }
    return tableId;
  };

  it.each(FAILURES)(
    '%s: the item’s step answers as PUT …/gate1 does',
    needs(engine.skip),
    async (_, raise) => {
      const s = server();
      const id = await tableOnce();
      const token = s.user('ADMIN').cliToken;
      await s.sql(`CREATE OR REPLACE FUNCTION gds.batch_failure() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'raised by the test' USING ${raise}; END $$`);
      await s.sql(
        'CREATE TRIGGER batch_failure BEFORE INSERT ON gds.gate1_versions FOR EACH ROW EXECUTE FUNCTION gds.batch_failure()',
      );
      try {
        const single = await s.request('PUT', `/api/tables/${id}/gate1`, {
          token,
          body: { content: GATE1 },
          headers: { 'if-match': '0' },
        });
        const batch = await s.request('POST', '/api/artifacts/batch', {
          token,
          body: { items: [{ tableId: id, gate1: { content: GATE1, version: 0 } }] },
        });
        expect(single.status).toBeGreaterThanOrEqual(400);
        expect(batch.status).toBe(200);
        expect(batch.body.results[0].gate1).toEqual({
          status: single.status,
          changed: false,
          error: single.body,
        });
      } finally {
        await s.sql('DROP TRIGGER batch_failure ON gds.gate1_versions');
      }
    },
  );
});
