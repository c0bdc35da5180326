// The server on PostgreSQL outlives the end of its connections: PostgreSQL ends them on a restart, a
// failover or pg_terminate_backend (SQLSTATE 57P01). An idle connection's end was an unheard 'error' event
// on the pool, which ends a Node process; a connection ended inside a transaction failed its ROLLBACK, and
// that error hid the first one while the dead connection went back to the pool.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { createPostgresDatabase } from '../../helpers/server.js';
import { needs, noPostgres } from '../../helpers/skip.js';

let db: Db;
let url: string;
let drop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (noPostgres !== undefined) return;
  const database = await createPostgresDatabase();
  ({ url, drop } = database);
  db = await openDb({ databaseUrl: url });
});

afterAll(async () => {
  await db?.close();
  await drop?.();
});

/** Ends every connection to the test database but the caller's, as an administrator would. */
async function terminateConnections(): Promise<number> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const rows = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

describe('connections PostgreSQL ends', () => {
  it(
    'an idle connection ended: the process lives on and the next query reconnects',
    needs(noPostgres),
    async () => {
      await Promise.all([db.query('SELECT pg_sleep(0.05)'), db.query('SELECT pg_sleep(0.05)')]);
      expect(await terminateConnections()).toBeGreaterThan(0);
      // Give the pool the moment in which it hears of the end (the event that ended the process).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await db.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    },
  );

  it(
    'a connection ended inside a transaction: the transaction fails, nothing goes unheard, and the pool goes on',
    needs(noPostgres),
    async () => {
      const failed = db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        await terminateConnections();
        await tx.query('SELECT 2');
      });
      await expect(failed).rejects.toThrow(/terminat|connection/i);
      for (let i = 0; i < 6; i += 1) expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    },
  );
});
