// A transaction in flight on a PostgreSQL test server's database: a second connection that holds a table's
// row lock (as a certify or a submission writing it does) until the test commits, so that a request's
// writing transaction is seen waiting on it.
import pg from 'pg';
import type { TestServer } from './server.js';

export interface RowHolder {
  /** The connection, in a transaction holding the row: run the writes to commit with the lock here. */
  client: pg.Client;
  /** Resolves once `sessions` other sessions of the database wait on a lock (the requests under test). */
  waitForBlocked(sessions?: number): Promise<void>;
  end(): Promise<void>;
}

export async function holdTableRow(server: TestServer, tableId: string): Promise<RowHolder> {
  const [current] = await server.sql<{ db: string }>('SELECT current_database() AS db');
  const url = new URL(process.env.GDS_TEST_DATABASE_URL ?? '');
  url.pathname = `/${current?.db ?? ''}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT id FROM gds.tables WHERE id = $1 FOR UPDATE', [tableId]);
  return {
    client,
    async waitForBlocked(sessions = 1) {
      for (let waited = 0; ; waited++) {
        const blocked = await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        if ((blocked.rows[0]?.n ?? 0) >= sessions) return;
        if (waited > 600) throw new Error('no request waited on the table row');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    end: () => client.end(),
  };
}
