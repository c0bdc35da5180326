// One database handle over either embedded PGlite (default; in memory or under a data dir) or a real
// PostgreSQL (`pg`, by URL). The service's own state and the warehouse schemas live in it.
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs one or more statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** PGlite data directory; in memory when absent. */
  dataDir?: string;
  /** A PostgreSQL connection string; wins over dataDir. */
  databaseUrl?: string;
}

export async function openDb(options: DbOptions): Promise<Db> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

async function openPglite(dataDir: string | undefined): Promise<Db> {
  const lite = dataDir
    ? await PGlite.create(dataDir)
    : await PGlite.create({ loadDataDir: await emptyCluster() });
  return {
    kind: 'pglite',
    async query<T>(sql: string, params?: unknown[]) {
      return (await lite.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await lite.exec(sql);
    },
    transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      return lite.transaction((tx) =>
        fn({
          query: async <R>(sql: string, params?: unknown[]) => (await tx.query<R>(sql, params)).rows,
          exec: async (sql: string) => void (await tx.exec(sql)),
        }),
      );
    },
    close: () => lite.close(),
  };
}

async function openPostgres(url: string): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: 5 });
  await pool.query('SELECT 1');
  return {
    kind: 'postgres',
    async query<T>(sql: string, params?: unknown[]) {
      return (await pool.query(sql, params)).rows as T[];
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async <R>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
          exec: async (sql: string) => void (await client.query(sql)),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/**
 * A freshly initialised, empty PGlite cluster as a tarball, made once per PGlite version and kept
 * in the temp dir. Loading it skips initdb: an in-memory server starts in under a second instead of
 * several, and its start-up peak memory halves (tests start one server per file).
 */
async function emptyCluster(): Promise<Blob> {
  const packageJson = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(await readFile(packageJson, 'utf8')) as { version: string };
  const path = join(tmpdir(), `gds-pglite-${version}-empty-cluster.tar.gz`);
  try {
    return new Blob([await readFile(path)]);
  } catch {
    const lite = await PGlite.create();
    const dump = await lite.dumpDataDir('gzip');
    await lite.close();
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, Buffer.from(await dump.arrayBuffer()));
    await rename(tmp, path).catch(() => rm(tmp, { force: true }));
    return dump;
  }
}
