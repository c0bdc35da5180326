// A Mode B record's timestamp written without a zone (2026-03-01T10:00:00) is a time at UTC for the gates,
// whose transactions run in UTC. The certified view over the records reads it the same way, whatever the
// TimeZone of the session reading the view: the rows a reader gets are the rows the checks passed.
import { describe, expect, it } from 'vitest';
import { runGate1 } from '../../../src/server/gates/gate1-runner.js';
import { storeGate1Version } from '../../../src/server/gates/gate1-store.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { loadGateTable } from '../../../src/server/gates/table.js';
import { publishCertifiedView } from '../../../src/server/certification/view.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { seededGateTables } from '../gates/seeded-gate-tables.js';

const SEEN_AT = [
  '2026-03-01T10:00:00',
  '2026-03-01 10:00',
  '2026-03-01T10:00:00Z',
  '2026-03-01T11:00:00+01:00',
  '2026-03-01 10:00:00 UTC',
];

const RULES = `customPredicates:
  - name: seen_at_ten_utc
    sql: "seen_at = '2026-03-01T10:00:00Z'::timestamptz"
    severity: HARD_FAIL
`;

/** Reader zones on either side of UTC. */
const READERS = ['America/New_York', 'Asia/Tokyo'];

describe.each(ENGINES)('a Mode B record’s timestamp without a zone on $engine', (engine) => {
  let contacts: GateTable;

  const opened = useEngineDb(engine, async (db) => {
    const seeded = (await seededGateTables(db, '{}')).contacts;
    // crm_contacts gains a timestamp column, its records one value each (with a zone or not), and the rules.
    await db.query(
      `UPDATE gds.tables SET columns = columns || '[{"name": "seen_at", "type": "timestamp", "required": false}]'
        WHERE id = $1`,
      [seeded.id],
    );
    const records = await db.query<{ id: string }>(
      'SELECT id FROM gds.records WHERE table_id = $1 ORDER BY seq',
      [seeded.id],
    );
    expect(records.length).toBeGreaterThanOrEqual(SEEN_AT.length);
    for (const [index, record] of records.entries()) {
      await db.query(
        `UPDATE gds.records SET data = data || jsonb_build_object('seen_at', $3::text)
        WHERE table_id = $1 AND id = $2`,
        [seeded.id, record.id, SEEN_AT[index % SEEN_AT.length]],
      );
    }
    await storeGate1Version(db, {
      tableId: seeded.id,
      content: RULES,
      createdBy: 'test',
      createdAt: new Date().toISOString(),
    });
    contacts = await loadGateTable(db, seeded.workspaceId, seeded.id);
  });

  it('the checks read it as a time at UTC', needs(engine.skip), async () => {
    const proof = await runGate1(opened(), contacts, { clock: Date.now });
    expect(proof.results.find((r) => r.name === 'seen_at_ten_utc')).toMatchObject({
      passed: true,
      failingRows: 0,
    });
  });

  it.each(READERS)(
    'the certified view, read in %s, gives every record the time the checks passed',
    needs(engine.skip),
    async (zone) => {
      const view = await opened().transaction((tx) => publishCertifiedView(tx, contacts));
      const read = await opened().transaction(async (tx) => {
        await tx.query(`SELECT set_config('TimeZone', $1, true)`, [zone]);
        return tx.query<{ seen: string; n: number }>(
          `SELECT to_char(seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS seen, count(*)::int AS n
             FROM ${view} GROUP BY 1`,
        );
      });
      const [records] = await opened().query<{ n: number }>(
        'SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1',
        [contacts.id],
      );
      expect(read).toEqual([{ seen: '2026-03-01T10:00:00Z', n: records?.n }]);
    },
  );
});
