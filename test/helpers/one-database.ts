// Servers started, one after another or side by side, over one migrated database of an engine: a fresh
// PostgreSQL database (several server processes may share it), or a copy of the migrated PGlite template (one
// server at a time: PGlite is one process's).
import { createServer } from '../../src/server/app.js';
import { migratedPgliteCopy } from './migrated-database.js';
import { createPostgresDatabase } from './server.js';

export async function oneDatabase(postgres: boolean): Promise<{
  start(): ReturnType<typeof createServer>;
  remove(): Promise<void>;
}> {
  // Migrated (the first server seeds it): making an empty one (PGlite's initdb, the migrations) took seconds.
  const database = postgres ? await createPostgresDatabase({ migrated: true }) : undefined;
  const copy = postgres ? undefined : await migratedPgliteCopy();
  return {
    start: () =>
      createServer({
        port: 0,
        contractCheck: true,
        ...(database ? { databaseUrl: database.url } : { dataDir: copy?.dataDir }),
      }),
    async remove() {
      await database?.drop();
      await copy?.remove();
    },
  };
}
