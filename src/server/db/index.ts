// One database handle over either embedded PGlite (default; in memory or under a data dir) or a real
// PostgreSQL (`pg`, by URL). The service's own state and the warehouse schemas live in it.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { DEFAULT_QUERY_TIMEOUT_MS } from '../defaults.js';
import { DEFAULT_EMBEDDED_ROW_LIMIT } from './embedded-limit.js';
import { openPgliteWorker, pgliteModule, QueryDeadlineError } from './pglite.js';

// The handle's types are in handle.ts, imported from there, so that pglite.ts and embedded-limit.ts need not
// import this module.
import type { Db, Queryable } from './handle.js';

/**
 * Runs `fn` as the only server process doing `name` on this database (one at a time); PGlite: just runs it.
 * `onWait` hears, once, that another process is doing it and this one waits for it.
 */
export function exclusively<T>(db: Db, name: string, fn: () => Promise<T>, onWait?: () => void): Promise<T> {
  return db.processLock ? db.processLock(name, fn, onWait) : fn();
}

export interface DbOptions {
  /** PGlite data directory; in memory when absent. */
  dataDir?: string;
  /** A PostgreSQL connection string; wins over dataDir. */
  databaseUrl?: string;
  /** Each statement's deadline; default DEFAULT_QUERY_TIMEOUT_MS. */
  queryTimeoutMs?: number;
  /** PGlite only: Db.rowLimit; default DEFAULT_EMBEDDED_ROW_LIMIT. */
  embeddedRowLimit?: number;
  /** PGlite only: where an in-memory database and the gate sandboxes unpack their clusters; default the temp folder. */
  scratchDir?: string;
  /** PGlite only: how often the database analyses its stale tables (Db.analyzeStale); default once a minute. */
  analyzeEveryMs?: number;
}

export async function openDb(options: DbOptions): Promise<Db> {
  const timeout = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeout) || timeout <= 0) throw new Error(`bad query timeout ${timeout}`);
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, timeout)
    : openPgliteWorker(options.dataDir, emptyCluster, timeout, {
        sandbox: true,
        rowLimit: options.embeddedRowLimit ?? DEFAULT_EMBEDDED_ROW_LIMIT,
        ...(options.scratchDir === undefined ? {} : { scratchDir: options.scratchDir }),
        ...(options.analyzeEveryMs === undefined ? {} : { analyzeEveryMs: options.analyzeEveryMs }),
      });
}

/** PostgreSQL's "canceling statement due to statement timeout" as the server's deadline error. */
function deadlineOf(timeoutMs: number) {
  return (error: unknown): never => {
    throw (error as { code?: string }).code === '57014' ? new QueryDeadlineError(timeoutMs) : error;
  };
}

/**
 * node-postgres parses timestamps, dates, intervals and float8 from PostgreSQL's default text styles. A database
 * whose defaults print them otherwise (`ALTER DATABASE … SET DateStyle = 'SQL, DMY'`, IntervalStyle =
 * 'sql_standard', extra_float_digits = 0) made every timestamp read null, every interval empty and every
 * float8 rounded; set on each connection, not as a startup option, which the database URL's own `options`
 * would replace and which poolers refuse. Set by the pool's `verify`, which the pool awaits before it hands a new
 * connection out: a query queued behind the SET is deprecated by node-postgres (a warning on the server's
 * stderr; an error from pg 9), and a SET that failed leaves the connection out, its query failing, rather than
 * reading timestamps as null.
 */
const DRIVER_TEXT_STYLES = `SET DateStyle = ISO; SET IntervalStyle = postgres; SET extra_float_digits = 1`;

async function openPostgres(url: string, queryTimeoutMs: number): Promise<Db> {
  // statement_timeout is set on every connection the pool opens: each statement has the deadline.
  const pool = new pg.Pool({
    connectionString: url,
    max: 5,
    statement_timeout: queryTimeoutMs,
    verify: (client, done) => {
      client.query(DRIVER_TEXT_STYLES).then(() => done(), done);
    },
  });
  // An idle connection that PostgreSQL ends (a restart, pg_terminate_backend, a failover) is reported here;
  // unheard, the 'error' event would end the whole server. The pool drops that connection and opens another.
  pool.on('error', (error: Error & { code?: string }) => {
    process.stderr.write(
      `database: an idle connection ended (${error.code ?? error.message}); reconnecting\n`,
    );
  });
  // pg's pool.end() resolves once it has asked each connection to end, before PostgreSQL has ended them:
  // close() waits for them (each is 'remove'd once its socket has closed), so that a database dropped or a
  // process ended right after it finds none of this server's connections still open.
  const open = new Set<pg.PoolClient>();
  let allClosed: (() => void) | undefined;
  pool.on('connect', (client) => open.add(client));
  pool.on('remove', (client) => {
    open.delete(client);
    if (open.size === 0) allClosed?.();
  });
  await pool.query('SELECT 1');
  const deadline = deadlineOf(queryTimeoutMs);
  return {
    kind: 'postgres',
    queryTimeoutMs,
    async query<T>(sql: string, params?: unknown[]) {
      return (await pool.query(sql, params).catch(deadline)).rows as T[];
    },
    async exec(sql: string) {
      await pool.query(sql).catch(deadline);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      // PostgreSQL ending this connection mid-transaction is an 'error' event on it as well as a failed query.
      const onLost = () => undefined;
      client.on('error', onLost);
      let released = false;
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async <R>(sql: string, params?: unknown[]) =>
            (await client.query(sql, params).catch(deadline)).rows as R[],
          exec: async (sql: string) => void (await client.query(sql).catch(deadline)),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A connection that broke mid-transaction cannot roll back: it is discarded, and the error kept.
        const broken = await client.query('ROLLBACK').then(
          () => undefined,
          (rollbackError: unknown) => rollbackError,
        );
        client.off('error', onLost);
        client.release(broken === undefined ? undefined : true);
        released = true;
        throw error;
      } finally {
        if (!released) {
          client.off('error', onLost);
          client.release();
        }
      }
    },
    async processLock<T>(name: string, fn: () => Promise<T>, onWait?: () => void) {
      // A connection of its own holds the lock while `fn` uses the pool's others; it waits without the
      // statement deadline (another process's start-up may take longer), and is closed afterwards rather
      // than returned to the pool, which ends the lock with its session (as it would if this process died).
      const client = await pool.connect();
      try {
        await client.query('SET statement_timeout = 0');
        const [tried] = (
          await client.query<{ taken: boolean }>(
            'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken',
            [`gds:${name}`],
          )
        ).rows;
        if (tried?.taken !== true) {
          onWait?.();
          await client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [`gds:${name}`]);
        }
        return await fn();
      } finally {
        client.release(true);
      }
    },
    async close() {
      const closed = new Promise<void>((resolve) => (allClosed = resolve));
      await pool.end();
      if (open.size > 0) await closed;
    },
  };
}

/**
 * A freshly initialised, empty PGlite cluster as a tarball, made once per PGlite version and cached.
 * Loading it skips initdb: an in-memory server starts in under a second instead of several, and its
 * start-up peak memory halves (tests start one server per file). The cache holds the service's whole
 * starting state, so it is trusted only in a folder that is the user's own (see `privateCacheDir`),
 * and only when its SHA-256 matches the one recorded beside it; otherwise the cluster is rebuilt.
 */
async function emptyCluster(): Promise<Uint8Array> {
  const packageJson = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(await readFile(packageJson, 'utf8')) as { version: string };
  const dir = await privateCacheDir();
  const name = `pglite-${version}-empty-cluster.tar.gz`;
  const cached = dir ? await readVerified(join(dir, name)) : undefined;
  if (cached) return cached;
  const { PGlite } = await import('@electric-sql/pglite'); // only the first start on this machine
  const lite = await PGlite.create({ pgliteWasmModule: await pgliteModule() });
  const dump = Buffer.from(await (await lite.dumpDataDir('gzip')).arrayBuffer());
  await lite.close();
  if (dir) await writeVerified(join(dir, name), dump);
  return dump;
}

/**
 * `<tmp>/gds-cache-<uid>`, created 0700, or undefined when it cannot be trusted: another user may
 * have made it first (in a shared temp folder), as a symlink, or left it open to others.
 */
async function privateCacheDir(): Promise<string | undefined> {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const dir = join(tmpdir(), `gds-cache-${uid}`);
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const stat = await lstat(dir).catch(() => undefined);
  const trusted = stat?.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  return trusted ? dir : undefined;
}

async function readNoFollow(path: string): Promise<Buffer> {
  const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await file.readFile();
  } finally {
    await file.close();
  }
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The file's bytes when they hash to the digest in `<path>.sha256`; undefined otherwise. */
async function readVerified(path: string): Promise<Buffer | undefined> {
  try {
    const [data, digest] = await Promise.all([readNoFollow(path), readNoFollow(`${path}.sha256`)]);
    return sha256(data) === digest.toString('utf8').trim() ? data : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the file and its digest atomically (0600); a failure only means no cache next time. */
async function writeVerified(path: string, data: Buffer): Promise<void> {
  const suffix = `${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(`${path}.${suffix}`, data, { mode: 0o600, flag: 'wx' });
    await rename(`${path}.${suffix}`, path);
    await writeFile(`${path}.sha256.${suffix}`, `${sha256(data)}\n`, { mode: 0o600, flag: 'wx' });
    await rename(`${path}.sha256.${suffix}`, `${path}.sha256`);
  } catch {
    await rm(`${path}.${suffix}`, { force: true });
    await rm(`${path}.sha256.${suffix}`, { force: true });
  }
}
