// Tests that run on both database engines the server takes: PGlite (embedded) and PostgreSQL (skipped
// without GDS_TEST_DATABASE_URL). `describe.each(ENGINES)` with `useEngineDb` gives each block a fresh
// database of its engine, arranged by `setup`, closed (and a PostgreSQL one dropped) after the block.
import { afterAll, beforeAll } from 'vitest';
import type { Db } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { scratchDir } from './migrated-database.js';
import type { TestServer, TestServerOptions } from './server.js';
import { createPostgresDatabase, startTestServer } from './server.js';
import { noPostgres } from './skip.js';

export interface Engine {
  engine: 'PGlite' | 'PostgreSQL';
  postgres: boolean;
  /** Why this engine's tests skip (pass to `needs`), or undefined when it is there. */
  skip: string | undefined;
}

export const ENGINES: Engine[] = [
  { engine: 'PGlite', postgres: false, skip: undefined },
  { engine: 'PostgreSQL', postgres: true, skip: noPostgres },
];

/** A fresh database of `engine` for the enclosing describe block; call the returned function in tests. */
export function useEngineDb(
  engine: Pick<Engine, 'postgres' | 'skip'>,
  setup: (db: Db) => Promise<void>,
  timeoutMs?: number,
): () => Db {
  let db: Db | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    if (engine.postgres) {
      const database = await createPostgresDatabase();
      drop = database.drop;
      db = await openDb({ databaseUrl: database.url });
    } else {
      db = await openDb({ scratchDir: await scratchDir() });
    }
    await setup(db);
  }, timeoutMs);
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });
  return () => {
    if (!db) throw new Error('the database of this block was not opened');
    return db;
  };
}

/**
 * A test server on `engine`'s database for the enclosing describe block (`options` besides the database),
 * closed after the block; call the returned function in tests.
 */
export function useEngineServer(
  engine: Pick<Engine, 'postgres' | 'skip'>,
  options: Omit<TestServerOptions, 'database'> = {},
): () => TestServer {
  let server: TestServer | undefined;
  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    server = await startTestServer({
      ...options,
      ...(engine.postgres ? { database: 'postgres' as const } : {}),
    });
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error('the server of this block was not started');
    return server;
  };
}
