// Migration 67: the steward's queue is read by seq, the order notifications were filed in. A database of the
// schema before it holds notifications keyed by (created_at, id): they keep that order, and a notification
// filed after the upgrade comes after every one of them.
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS } from '../../../src/server/db/migrations.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-02T00:00:00.000Z';

describe.each(ENGINES)('notifications filed before migration 67 ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await migrate(
      opened,
      MIGRATIONS.filter((m) => m.version < 67),
    );
    await opened.query(`INSERT INTO gds.workspaces (id, name, created_at) VALUES ('ws_a', 'a', $1)`, [T0]);
    // Inserted in another order than their key's.
    for (const [id, createdAt] of [
      ['ntf_c', T1],
      ['ntf_b', T0],
      ['ntf_a', T0],
    ] as const)
      await opened.query(
        `INSERT INTO gds.notifications (id, workspace_id, recipient_role, kind, message, created_at)
         VALUES ($1, 'ws_a', 'STEWARD', 'gate_submitted', 'm', $2)`,
        [id, createdAt],
      );
    await migrate(opened);
  });

  it('numbers them in (created_at, id) order; a later one comes after them', needs(engine.skip), async () => {
    await db().query(
      `INSERT INTO gds.notifications (id, workspace_id, recipient_role, kind, message, created_at)
       VALUES ('ntf_later', 'ws_a', 'STEWARD', 'gate_submitted', 'm', $1)`,
      [T0],
    );
    const rows = await db().query<{ id: string }>('SELECT id FROM gds.notifications ORDER BY seq');
    expect(rows.map((row) => row.id)).toEqual(['ntf_a', 'ntf_b', 'ntf_c', 'ntf_later']);
  });
});
