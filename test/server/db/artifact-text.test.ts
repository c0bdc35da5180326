// Migration 64: every table keeps its artifact's text beside the jsonb (`artifact_text`, computed by the
// database at each write), which the held-tables page reads. A database of the schema before it gets the text
// of every table it holds; later writes keep it equal; the page gives the same artifact and file name.
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from '../../../src/server/db/migrations.js';
import { environmentTablePage } from '../../../src/server/governance/tables.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

const T0 = '2026-01-01T00:00:00.000Z';

/** Text a jsonb round-trip must keep: quotes, a backslash, a newline, text beyond ASCII, a pair of surrogates. */
const tricky = {
  fileName: 'orders "v2" \\ é.yml',
  table: 'orders',
  source: 'analytics_dev.orders',
  decisionContext: 'Line one\nline two: «ça» 🚀 \u0007',
  columns: [
    { name: 'id', type: ' BIGINT ', required: true, min: 1.5, max: 1e3 },
    { name: 'naïve "quoted"', references: 'customers.id' },
  ],
};

async function arrange(db: ReturnType<ReturnType<typeof useEngineDb>>): Promise<void> {
  await db.query(`INSERT INTO gds.workspaces (id, name, created_at) VALUES ('ws_a', 'a', $1)`, [T0]);
  await db.query(
    `INSERT INTO gds.users (id, email, display_name, created_at) VALUES ('usr_a', 'a@example.com', 'A', $1)`,
    [T0],
  );
  const insert = (id: string, at: string, artifact: unknown) =>
    db.query(
      `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, source,
                               owner_id, columns, created_at, updated_at, artifact)
       VALUES ($1, 'ws_a', $1, $1, 'MODE_A', 'CERTIFIED', 'ENFORCING', 'dev', 'analytics_dev.orders', 'usr_a',
               '[{"name":"id"}]', $2, $2, $3)`,
      [id, at, artifact === null ? null : JSON.stringify(artifact)],
    );
  await insert('tbl_1', T0, tricky);
  await insert('tbl_2', '2026-01-01T00:00:01.000Z', null);
}

describe.each(ENGINES)('the artifact kept as text ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await migrate(
      opened,
      MIGRATIONS.filter((m) => m.version < 64),
    );
    await arrange(opened);
    await migrate(opened);
  });

  it(
    'gives a database of the schema before it the text of each artifact it holds',
    needs(engine.skip),
    async () => {
      const rows = await db().query<{ id: string; text: string | null; same: boolean }>(
        `SELECT id, artifact_text AS text, artifact_text IS NOT DISTINCT FROM artifact::text AS same
           FROM gds.tables ORDER BY id`,
      );
      expect(rows.map((r) => [r.id, r.same])).toEqual([
        ['tbl_1', true],
        ['tbl_2', true],
      ]);
      expect(JSON.parse(rows[0]?.text ?? 'null')).toEqual(tricky);
      expect(rows[1]?.text).toBeNull();
    },
  );

  it(
    'reads the same artifact and file name through the held-tables page, and follows each write',
    needs(engine.skip),
    async () => {
      const page = async () =>
        (await environmentTablePage(db(), { workspaceId: 'ws_a', environment: 'dev', limit: 10 })).tables;
      const [first, second] = await page();
      expect(first?.table.artifact).toEqual(tricky);
      expect(first?.artifactFile).toBe(tricky.fileName);
      expect(second?.table.artifact).toBeNull();
      expect(second?.artifactFile).toBeNull();
      expect(second?.table.columns).toEqual([{ name: 'id' }]);

      const replaced = { ...tricky, fileName: 'orders.yml', columns: [{ name: 'id' }] };
      await db().query(`UPDATE gds.tables SET artifact = $2 WHERE id = $1`, [
        'tbl_1',
        JSON.stringify(replaced),
      ]);
      await db().query(`UPDATE gds.tables SET artifact = $2 WHERE id = $1`, [
        'tbl_2',
        JSON.stringify(tricky),
      ]);
      const [after, other] = await page();
      expect(after?.table.artifact).toEqual(replaced);
      expect(after?.artifactFile).toBe('orders.yml');
      expect(other?.table.artifact).toEqual(tricky);
      expect(other?.table.columns).toEqual([]);
      await db().query(`UPDATE gds.tables SET artifact = NULL WHERE id = 'tbl_1'`);
      expect((await page())[0]?.table.artifact).toBeNull();
    },
  );
});
