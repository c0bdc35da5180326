// A batch item's step that fails in a way no mapping names (errors.ts answerOf: here an exception a trigger
// raises, SQLSTATE P0001) answers in the item's result as its single write does, 500 `internal_error`, and the
// batch goes on with the next item: the request as a whole is refused only for the caller or a body that is
// not a batch (openapi.yaml). It failed the whole batch with a 500, the items before it written but unreported
// (gds apply said every table of the batch failed) and the items after it unwritten.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { pushDevDefinition } from '../helpers/push.js';
import { needs } from '../helpers/skip.js';

const GATE1 = 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: 0 }\n';

describe.each(ENGINES)('a batch item failing unexpectedly ($engine)', (engine) => {
  // The single write's 500 is provoked on purpose, and a 500 is in no operation's contract: not checked here.
  const server = useEngineServer(engine, { contractCheck: false });

  it(
    'is that item’s 500, as PUT …/gate1 answers; the items after it are written',
    needs(engine.skip),
    async () => {
      const s = server();
      const ids: string[] = [];
      for (const name of ['unmapped_a', 'unmapped_b', 'unmapped_c']) {
        await s.sql(`CREATE TABLE analytics_dev.${name} (id integer, label text)`);
        const pushed = await pushDevDefinition(s, name, ['id', 'label']);
        expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
        ids.push(pushed.body.tableId as string);
      }
      const [failing, ...others] = ids as [string, ...string[]];
      const token = s.user('ADMIN').cliToken;
      await s.sql(`CREATE FUNCTION gds.batch_unmapped() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.table_id = '${failing}' THEN RAISE EXCEPTION 'raised by the test'; END IF;
        RETURN NEW;
      END $$`);
      await s.sql(
        'CREATE TRIGGER batch_unmapped BEFORE INSERT ON gds.gate1_versions FOR EACH ROW EXECUTE FUNCTION gds.batch_unmapped()',
      );
      try {
        const single = await s.request('PUT', `/api/tables/${failing}/gate1`, {
          token,
          body: { content: GATE1 },
          headers: { 'if-match': '0' },
        });
        expect(single.status).toBe(500);
        const batch = await s.request('POST', '/api/artifacts/batch', {
          token,
          body: { items: ids.map((tableId) => ({ tableId, gate1: { content: GATE1, version: 0 } })) },
        });
        expect(batch.status, JSON.stringify(batch.body)).toBe(200);
        expect(batch.body.results).toEqual([
          { index: 0, tableId: failing, gate1: { status: 500, changed: false, error: single.body } },
          ...others.map((tableId, i) => ({
            index: i + 1,
            tableId,
            gate1: { status: 200, changed: true, version: 1 },
          })),
        ]);
        const written = await s.sql<{ table_id: string }>(
          'SELECT table_id FROM gds.gate1_versions WHERE table_id = ANY($1) ORDER BY table_id',
          [ids],
        );
        expect(written.map((row) => row.table_id)).toEqual([...others].sort());
      } finally {
        await s.sql('DROP TRIGGER batch_unmapped ON gds.gate1_versions');
      }
    },
  );
});
