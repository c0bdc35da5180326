// A server process starting on a PostgreSQL where another one holds the start-up lock (migrating, seeding,
// making the signing key) says once that it waits for it (ServerOptions.onStartUpWait; `npm run server` writes
// it on stderr) instead of waiting in silence, and comes up once the lock is let go. One that finds the lock
// free says nothing.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';
import type { RunningServer } from '../../src/server/app.js';
import { waitFor } from '../helpers/server-process.js';
import { createPostgresDatabase } from '../helpers/server.js';
import { needs, noPostgres } from '../helpers/skip.js';

describe('the start-up lock of a server on PostgreSQL', needs(noPostgres), () => {
  let database: { url: string; drop(): Promise<void> };
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    database = await createPostgresDatabase({ migrated: true });
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
    await database?.drop();
  });

  it('held by another process: the server says once that it waits, and starts when it is let go', async () => {
    const other = new pg.Client({ connectionString: database.url });
    await other.connect();
    let waits = 0;
    let started: RunningServer | undefined;
    try {
      await other.query(`SELECT pg_advisory_lock(hashtextextended('gds:start-up', 0))`);
      const starting = createServer({
        databaseUrl: database.url,
        port: 0,
        jobs: 'manual',
        onStartUpWait: () => (waits += 1),
      }).then((server) => {
        servers.push(server);
        started = server;
      });
      await waitFor(() => waits > 0, 'the server to say it waits for the start-up lock');
      expect(started).toBeUndefined();
      await other.query(`SELECT pg_advisory_unlock(hashtextextended('gds:start-up', 0))`);
      await starting;
    } finally {
      await other.end();
    }
    expect(waits).toBe(1);
    expect(started?.ready.workspaceId).toEqual(expect.any(String));
  });

  it('free: the server starts without a word about it', async () => {
    let waits = 0;
    const server = await createServer({
      databaseUrl: database.url,
      port: 0,
      jobs: 'manual',
      onStartUpWait: () => (waits += 1),
    });
    servers.push(server);
    expect(waits).toBe(0);
  });
});
