// The server on PostgreSQL outlives the end of its connections: PostgreSQL ends them on a restart, a
// failover or pg_terminate_backend (SQLSTATE 57P01). An idle connection's end was an unheard 'error' event
// on the pool, which ends a Node process; a connection ended inside a transaction failed its ROLLBACK, and
// that error hid the first one while the dead connection went back to the pool. And close() resolves once
// its connections are closed: a test that dropped the database right after it ended some of them, which the
// server then reported as lost.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

/**
 * What the server writes on stderr while `fn` runs (and up to its end), kept from the run's output. `fn` is
 * given what has been written so far.
 */
async function stderrOf(fn: (soFar: () => string) => Promise<void>): Promise<string> {
  let text = '';
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    text += String(chunk);
    return true;
  });
  try {
    await fn(() => text);
  } finally {
    write.mockRestore();
  }
  return text;
}

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
      const line = 'database: an idle connection ended (57P01); reconnecting\n';
      const said = await stderrOf(async (soFar) => {
        const ended = await terminateConnections();
        expect(ended).toBeGreaterThan(0);
        // The pool hears of each end (the event that once ended the process) when PostgreSQL's notice arrives:
        // each line waited for, however long a loaded machine takes (a query sent before the pool has heard
        // of an end would get that connection and fail).
        const heard = () => soFar().split(line).length - 1;
        await vi.waitFor(() => expect(heard()).toBe(ended), { timeout: 60_000, interval: 20 });
      });
      expect(said).toContain(line);
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

describe('close()', () => {
  it(
    'resolves once its connections are closed: the database dropped next ends none of them',
    needs(noPostgres),
    async () => {
      // Asked at once from a connection already open: pg's own end() resolved with some still open (in 7 of
      // 10 rounds), so the database's drop ended them.
      const admin = new pg.Client({ connectionString: process.env.GDS_TEST_DATABASE_URL });
      await admin.connect();
      try {
        for (let round = 0; round < 5; round += 1) {
          const database = await createPostgresDatabase();
          const closing = await openDb({ databaseUrl: database.url });
          // All five of the pool's connections open.
          await Promise.all([1, 2, 3, 4, 5].map(() => closing.query('SELECT pg_sleep(0.02)')));
          let open: unknown;
          const said = await stderrOf(async () => {
            await closing.close();
            open = (
              await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
                new URL(database.url).pathname.slice(1),
              ])
            ).rows;
            await database.drop();
          });
          expect(open).toEqual([{ n: 0 }]);
          expect(said).toBe('');
        }
      } finally {
        await admin.end();
      }
    },
  );
});
