// Test servers start on a database that already holds the service's schema: a copy of a PGlite data
// directory, or a PostgreSQL database made from a template, each migrated once per set of migrations (their
// digest names it) rather than by every server of every test file. Migrating took a server's start-up 0.4 s
// of CPU, and 2 s for the first server of a test process. The copy holds the seeded data too (the seed's 222
// statements took 0.5 s of CPU a PGlite server, and as many round trips to PostgreSQL): seeded once per
// version of the server's code, at a fixed time long past, and moved to each server's start by
// `moveSeededTimes`. Every server thus has the same seeded ids (each in a database of its own); its signing
// key and tokens are its own.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, statfs, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { Db, Queryable } from '../../src/server/db/handle.js';
import { openDb } from '../../src/server/db/index.js';
import { migrate, MIGRATIONS } from '../../src/server/db/migrations.js';
import { seedIfEmpty } from '../../src/server/seed.js';

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

/** Where test databases go unless /dev/shm has this much room: a copy is about 40 MB while its server runs. */
const SHM_ROOM = 4 * 1024 ** 3;
let shm: Promise<boolean> | undefined;

/**
 * The folder templates and copies go in: /dev/shm (memory) where it has SHM_ROOM free, else the temp
 * folder. On a disk, copying a template's 1,170 files took 0.1-1.0 s of system CPU a server (the more the
 * busier the machine), and PostgreSQL's writes cost a journaled file system's too; in memory 0.06 s.
 */
async function databasesRoot(): Promise<string> {
  shm ??= statfs('/dev/shm').then(
    async (found) => {
      if (found.bavail * found.bsize < SHM_ROOM) return false;
      await removeAbandoned('/dev/shm');
      return true;
    },
    () => false,
  );
  return (await shm) ? '/dev/shm' : tmpdir();
}

/**
 * The folder test servers' in-memory databases and gate sandboxes unpack their clusters in (the server's
 * `scratchDir`): the one test databases go in. Unpacking the empty cluster's 1,170 files took 0.9-1.2 s of CPU
 * in the temp folder on ext4 (two thirds of it the system's), 0.4 s in /dev/shm.
 */
export function scratchDir(): Promise<string> {
  return databasesRoot();
}

/** Copies and clusters a killed test process left in memory (each is removed as it closes): none lives a day. */
async function removeAbandoned(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    if (!name.startsWith('gds-test-db-') && !name.startsWith('gds-pglite-')) continue;
    const folder = join(root, name);
    const found = await lstat(folder).catch(() => undefined);
    if (found?.isDirectory() && found.uid === process.getuid?.() && Date.now() - found.mtimeMs > 86_400_000)
      await rm(folder, { recursive: true, force: true });
  }
}

/** `<root>/gds-test-databases-<uid>`, 0700 and the user's own: nothing another user planted is started. */
async function privateFolder(): Promise<string> {
  const folder = join(await databasesRoot(), `gds-test-databases-${process.getuid?.() ?? 0}`);
  await mkdir(folder, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const stat = await lstat(folder);
  if (!stat.isDirectory() || (stat.mode & 0o077) !== 0 || stat.uid !== (process.getuid?.() ?? stat.uid))
    throw new Error(`${folder} is not a private folder of this user: remove it`);
  return folder;
}

const exists = (path: string) =>
  lstat(path).then(
    () => true,
    () => false,
  );

const pgliteTemplates = new Map<string, Promise<string>>();

/**
 * The PGlite data directory `<private folder>/<name>`, made once by `make` (a rename makes it whole at once;
 * a racing maker's is dropped).
 */
function pgliteTemplate(name: string, make: (dataDir: string) => Promise<void>): Promise<string> {
  let made = pgliteTemplates.get(name);
  if (made === undefined) {
    made = (async () => {
      const folder = await privateFolder();
      const template = join(folder, name);
      if (await exists(template)) return template;
      const making = await mkdtemp(join(folder, 'making-'));
      try {
        await make(join(making, 'data'));
        await rename(join(making, 'data'), template).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
        });
      } finally {
        await rm(making, { recursive: true, force: true });
      }
      return template;
    })();
    made.catch(() => pgliteTemplates.delete(name));
    pgliteTemplates.set(name, made);
  }
  return made;
}

/** A copy of the template at `dataDir`, made again when it is gone. */
async function copyOf(
  template: () => Promise<string>,
): Promise<{ dataDir: string; remove(): Promise<void> }> {
  let source = await template();
  // Test files share a process (vitest.config.ts): one that pointed TMPDIR elsewhere may have made it there
  // and removed it with its folder.
  if (!(await exists(source))) {
    pgliteTemplates.clear();
    source = await template();
  }
  const folder = await mkdtemp(join(await databasesRoot(), 'gds-test-db-'));
  const dataDir = join(folder, 'data');
  await copyDirectory(source, dataDir);
  // Its time of last use: a seeded template of other code unused for an hour is removed (seededPglite).
  const now = new Date();
  await utimes(source, now, now).catch(() => undefined);
  return { dataDir, remove: () => rm(folder, { recursive: true, force: true }) };
}

/** GNU cp leaves the zeros of PostgreSQL's preallocated WAL segment unwritten: a third less to write. */
async function copyDirectory(from: string, to: string): Promise<void> {
  await run('cp', process.platform === 'linux' ? ['-a', '--sparse=always', from, to] : ['-R', from, to]);
}

/** The migrated PGlite data directory. */
async function migratedPglite(): Promise<string> {
  return pgliteTemplate(`pglite-${await migrationsDigest()}`, async (dataDir) => {
    const db = await openDb({ dataDir });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
  });
}

/** A PGlite data directory of its own holding the migrated schema, and how to remove it. */
export function migratedPgliteCopy(): Promise<{ dataDir: string; remove(): Promise<void> }> {
  return copyOf(migratedPglite);
}

/** When the seeded templates' data was written: every time the seed writes is within a second of it. */
const SEEDED_AT = Date.UTC(2000, 0, 1);

/**
 * The seed reads its clock at most this many times (a millisecond a reading): its data, moved to a server's
 * start, ends within this long of it, and the server writes nothing of its own before then (startTestServer).
 */
export const SEED_SPAN_MS = 64;

/** Seeds `workspaces` into `db` at SEEDED_AT, a millisecond a clock reading, within SEED_SPAN_MS. */
async function seedAtSeededTime(db: Db, workspaces: number): Promise<void> {
  // A millisecond a reading, as time passes while the server seeds: what it writes in turn stays in turn.
  let at = SEEDED_AT;
  await seedIfEmpty(db, () => at++, workspaces);
  if (at - SEEDED_AT > SEED_SPAN_MS)
    throw new Error(`the seed read its clock ${at - SEEDED_AT} times: raise SEED_SPAN_MS to more than that`);
}

let seedDigest: Promise<string> | undefined;

/** Names what the seed writes: the migrations, and the code of the server, core and contract it runs. */
function seededDigest(): Promise<string> {
  seedDigest ??= (async () => {
    const hash = createHash('sha256').update(await migrationsDigest());
    const src = new URL('../../src/', import.meta.url);
    for (const layer of ['server', 'core', 'contract']) {
      const files = (await readdir(new URL(layer, src), { recursive: true })).sort();
      for (const file of files.filter((name) => name.endsWith('.ts')))
        hash.update(file).update(await readFile(new URL(`${layer}/${file}`, src)));
    }
    return hash.digest('hex').slice(0, 16);
  })();
  seedDigest.catch(() => (seedDigest = undefined));
  return seedDigest;
}

/** The migrated PGlite data directory with `workspaces` seeded into it (as the server seeds), at SEEDED_AT. */
async function seededPglite(workspaces: number): Promise<string> {
  return pgliteTemplate(`pglite-seeded-${await seededDigest()}-${workspaces}`, async (dataDir) => {
    await removeUnused(await privateFolder());
    await copyDirectory(await migratedPglite(), dataDir);
    const db = await openDb({ dataDir });
    try {
      await seedAtSeededTime(db, workspaces);
    } finally {
      await db.close();
    }
  });
}

/** Seeded templates (40 MB each) of code changed since, none copied within the hour: each edit makes one. */
async function removeUnused(folder: string): Promise<void> {
  for (const name of await readdir(folder)) {
    if (!name.startsWith('pglite-seeded-')) continue;
    const template = join(folder, name);
    const unused = await stat(template).then(
      (found) => Date.now() - found.mtimeMs > 3_600_000,
      () => false,
    );
    if (unused) await rm(template, { recursive: true, force: true });
  }
}

/**
 * A PGlite data directory of its own holding the migrated schema and the seeded data of `workspaces` (as the
 * server's `workspaces` option), and how to remove it. Its times are SEEDED_AT's until `moveSeededTimes`.
 */
export function seededPgliteCopy(workspaces = 1): Promise<{ dataDir: string; remove(): Promise<void> }> {
  return copyOf(() => seededPglite(workspaces));
}

/**
 * Moves the times of the seeded data (every timestamp of the gds schema before SEEDED_AT's next day, and the
 * time in the note of a seeded certification) to `to`, as if the server had seeded at `to`. Run before any
 * request: what the server itself wrote at start is dated now and stays as it is.
 */
export async function moveSeededTimes(db: Queryable, to: number): Promise<void> {
  const note = 'Seeded as certified at ';
  await db.exec(`DO $$
    DECLARE
      c record;
      shift interval := interval '${Math.round(to - SEEDED_AT)} milliseconds';
      seeded timestamptz := '${new Date(SEEDED_AT + 86_400_000).toISOString()}';
    BEGIN
      -- Replica mode: contract_versions' immutability trigger does not fire (no key is changed).
      PERFORM set_config('session_replication_role', 'replica', true);
      FOR c IN SELECT table_name, column_name FROM information_schema.columns
                WHERE table_schema = 'gds' AND data_type = 'timestamp with time zone'
                  AND table_name <> 'schema_migrations'
      LOOP
        EXECUTE format('UPDATE gds.%I SET %I = %I + $1 WHERE %I < $2',
                       c.table_name, c.column_name, c.column_name, c.column_name) USING shift, seeded;
      END LOOP;
      UPDATE gds.audit_log
         SET details = jsonb_set(details, '{note}', to_jsonb('${note}' || to_char(
               (substr(details->>'note', ${note.length + 1})::timestamptz + shift) AT TIME ZONE 'UTC',
               'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')))
       WHERE details->>'note' LIKE '${note}2000-%';
    END $$`);
}

/**
 * Takes the advisory lock of the database `name` (held by `admin`'s session until it ends), and makes the
 * database unless it is there: created (`create` is what follows CREATE DATABASE's name) and filled by `fill`
 * under a name of its own, then renamed. Answers whether it made it.
 */
async function makeOnce(
  admin: pg.Client,
  adminUrl: string,
  name: string,
  create: string,
  fill: (db: Db) => Promise<void>,
): Promise<boolean> {
  await admin.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [name]);
  const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount !== 0) return false;
  const making = `${name}_making_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${making} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${making}${create}`);
  const url = new URL(adminUrl);
  url.pathname = `/${making}`;
  const db = await openDb({ databaseUrl: url.toString() });
  try {
    await fill(db);
  } finally {
    await db.close();
  }
  await admin.query(`ALTER DATABASE ${making} RENAME TO ${name}`);
  return true;
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
        await makeOnce(admin, adminUrl, name, '', migrate);
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

/** Seeded template databases unused for this long are dropped when another is made (each edit makes one). */
const UNUSED_MS = 3_600_000;
const SEEDED_PREFIX = 'gds_test_seeded_';

/**
 * Creates the database `name` on the PostgreSQL of `adminUrl` holding the migrated schema and the seeded data
 * of `workspaces` at SEEDED_AT (as `seededPgliteCopy`), from a template seeded once per version of the server's
 * code. The template's advisory lock is held until its comment says when it was last copied: a template is
 * made once, and dropped as unused (copied last over UNUSED_MS ago) only while no test process copies it.
 */
export async function createSeededPostgresDatabase(
  adminUrl: string,
  name: string,
  workspaces: number,
): Promise<void> {
  const template = `${SEEDED_PREFIX}${await seededDigest()}_${workspaces}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const migrated = await migratedPostgresTemplate(adminUrl);
    const made = await makeOnce(admin, adminUrl, template, ` TEMPLATE ${migrated}`, async (db) => {
      await seedAtSeededTime(db, workspaces);
    });
    if (made) await dropUnusedSeeded(admin, template);
    await admin.query(`COMMENT ON DATABASE ${template} IS '${Date.now()}'`);
    // Its comment now says it is in use, so no test process drops it (dropUnusedSeeded takes the lock, then
    // reads the comment): the lock is let go before the copy, which other test processes' copies of the same
    // template then run beside (CREATE DATABASE shares its template) instead of queueing behind (4.2 s of
    // waiting over 15 copies of 1.3-1.6 s each, load 22).
    await admin.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [template]);
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  } finally {
    await admin.end();
  }
}

/** Seeded templates other than `kept` copied last over UNUSED_MS ago, each taken under its own lock. */
async function dropUnusedSeeded(admin: pg.Client, kept: string): Promise<void> {
  const { rows } = await admin.query<{ name: string; used: string | null }>(
    `SELECT datname AS name, shobj_description(oid, 'pg_database') AS used FROM pg_database
      WHERE starts_with(datname, $1) AND datname <> $2 AND datname NOT LIKE '%\\_making\\_%'`,
    [SEEDED_PREFIX, kept],
  );
  for (const { name, used } of rows) {
    if (Date.now() - Number(used ?? 0) <= UNUSED_MS) continue;
    const key = [name];
    const { rows: locked } = await admin.query<{ got: boolean }>(
      'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS got',
      key,
    );
    if (!locked[0]?.got) continue;
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', key);
    }
  }
}
