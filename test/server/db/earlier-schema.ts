// A database of the schema before a migration, as an upgrade finds it: migrated up to (not including)
// `version`, holding the workspace `ws_a` and its user `usr_a` that the rows a test arranges belong to.
import type { Db } from '../../../src/server/db/handle.js';
import { migrate, MIGRATIONS } from '../../../src/server/db/migrations.js';

export const T0 = '2026-01-01T00:00:00.000Z';

export async function schemaBefore(db: Db, version: number): Promise<void> {
  await migrate(
    db,
    MIGRATIONS.filter((m) => m.version < version),
  );
  await db.query(`INSERT INTO gds.workspaces (id, name, created_at) VALUES ('ws_a', 'a', $1)`, [T0]);
  await db.query(
    `INSERT INTO gds.users (id, email, display_name, created_at) VALUES ('usr_a', 'a@example.com', 'A', $1)`,
    [T0],
  );
}
