// Migrations apply once each, in order, and a database another build numbered differently is refused
// by name instead of being half-migrated.
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { scratchDir } from '../../helpers/migrated-database.js';
import { migrate, MIGRATIONS } from '../../../src/server/db/migrations.js';

let db: Db | undefined;

afterEach(async () => {
  await db?.close();
  db = undefined;
});

describe('migrate', () => {
  it('applies every migration once, and again changes nothing', async () => {
    db = await openDb({ scratchDir: await scratchDir() });
    await migrate(db);
    await migrate(db);
    const rows = await db.query<{ version: number }>(
      'SELECT version FROM gds.schema_migrations ORDER BY version',
    );
    expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
  });

  it('refuses a database whose migration of the same number has another name', async () => {
    db = await openDb({ scratchDir: await scratchDir() });
    await migrate(db);
    const last = MIGRATIONS.at(-1);
    await db.query('UPDATE gds.schema_migrations SET name = $2 WHERE version = $1', [
      last?.version,
      'something else',
    ]);
    await expect(migrate(db)).rejects.toThrow(/another build of the reference server made it/);
  });
});
