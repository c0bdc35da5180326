// Test servers start on a database that already holds the service's schema: a copy of a PGlite data
// directory, or a PostgreSQL database made from a template, each migrated once per set of migrations (their
// digest names it) rather than by every server of every test file. Migrating took a server's start-up 0.4 s
// of CPU, and 2 s for the first server of a test process. The server still runs its migrations (each is
// found applied) and seeds its data itself, with the test's clock.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { openDb } from '../../src/server/db/index.js';
import { migrate, MIGRATIONS } from '../../src/server/db/migrations.js';

const run = promisify(execFile);

let digest: Promise<string> | undefined;

/** Names the schema the migrations make, on this PGlite (whose data directory format is its version's). */
function migrationsDigest(): Promise<string> {
  digest ??= (async () => {
    const pkg = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
    const { version } = JSON.parse(await readFile(pkg, 'utf8')) as { version: string };
    return createHash('sha256').update(version).update(JSON.stringify(MIGRATIONS)).digest('hex').slice(0, 16);
  })();
  return digest;
}

/** `<tmp>/gds-test-databases-<uid>`, 0700 and the user's own: nothing another user planted is started. */
async function privateFolder(): Promise<string> {
  const folder = join(tmpdir(), `gds-test-databases-${process.getuid?.() ?? 0}`);
  await mkdir(folder, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const stat = await lstat(folder);
  if (!stat.isDirectory() || (stat.mode & 0o077) !== 0 || stat.uid !== (process.getuid?.() ?? stat.uid))
    throw new Error(`${folder} is not a private folder of this user: remove it`);
  return folder;
}

let pgliteTemplate: Promise<string> | undefined;

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

/** The migrated PGlite data directory, made once (a rename makes it whole at once; a racing maker's is dropped). */
function migratedPglite(): Promise<string> {
  pgliteTemplate ??= (async () => {
    const folder = await privateFolder();
    const template = join(folder, `pglite-${await migrationsDigest()}`);
    if (await exists(template)) return template;
    const making = await mkdtemp(join(folder, 'making-'));
    try {
      const db = await openDb({ dataDir: join(making, 'data') });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      await rename(join(making, 'data'), template).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      });
    } finally {
      await rm(making, { recursive: true, force: true });
    }
    return template;
  })();
  pgliteTemplate.catch(() => (pgliteTemplate = undefined));
  return pgliteTemplate;
}

/** A PGlite data directory of its own holding the migrated schema, and how to remove it. */
export async function migratedPgliteCopy(): Promise<{ dataDir: string; remove(): Promise<void> }> {
  let template = await migratedPglite();
  // Test files share a process (vitest.config.ts): one that pointed TMPDIR elsewhere may have made it there
  // and removed it with its folder.
  if (!(await exists(template))) {
    pgliteTemplate = undefined;
    template = await migratedPglite();
  }
  const folder = await mkdtemp(join(tmpdir(), 'gds-test-db-'));
  const dataDir = join(folder, 'data');
  // GNU cp leaves the zeros of PostgreSQL's preallocated WAL segment unwritten: a third less to write.
  await run(
    'cp',
    process.platform === 'linux' ? ['-a', '--sparse=always', template, dataDir] : ['-R', template, dataDir],
  );
  return { dataDir, remove: () => rm(folder, { recursive: true, force: true }) };
}

const templates = new Map<string, Promise<string>>();

/**
 * The migrated template database on the PostgreSQL of `adminUrl`, made once per digest: migrated under a
 * name of its own, then renamed, under an advisory lock so that test processes starting together make it once.
 */
export function migratedPostgresTemplate(adminUrl: string): Promise<string> {
  let made = templates.get(adminUrl);
  if (made === undefined) {
    made = (async () => {
      const name = `gds_test_template_${await migrationsDigest()}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
        const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (found.rowCount === 0) {
          const making = `${name}_making_${process.pid}`;
          await admin.query(`DROP DATABASE IF EXISTS ${making} WITH (FORCE)`);
          await admin.query(`CREATE DATABASE ${making}`);
          const url = new URL(adminUrl);
          url.pathname = `/${making}`;
          const db = await openDb({ databaseUrl: url.toString() });
          try {
            await migrate(db);
          } finally {
            await db.close();
          }
          await admin.query(`ALTER DATABASE ${making} RENAME TO ${name}`);
        }
      } finally {
        await admin.end();
      }
      return name;
    })();
    made.catch(() => templates.delete(adminUrl));
    templates.set(adminUrl, made);
  }
  return made;
}
