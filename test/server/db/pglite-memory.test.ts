// What the embedded database holds in memory: the service's database and each sandbox
// run with 16 MB of shared_buffers (their data lives in files: the page cache holds the rest), a private
// data directory is written from the empty cluster's tarball by streaming it, and a tarball that cannot
// be unpacked fails the start with a reason and leaves no directory behind. The RSS figures themselves are
// bench rows (`npm run bench embedded-memory`).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { openPgliteWorker } from '../../../src/server/db/pglite.js';
import { scratchDir } from '../../helpers/migrated-database.js';

let tmp: string;
let db: Db;

beforeAll(async () => {
  // Private data directories go in the scratch folder given (test/server/db/pglite-deadline: by default the
  // temp folder), so the test can see them.
  tmp = await mkdtemp(join(await scratchDir(), 'gds-test-db-'));
  db = await openDb({ scratchDir: tmp });
});

afterAll(async () => {
  await db.close();
  await rm(tmp, { recursive: true, force: true });
});

const sharedBuffers = async (on: Db) =>
  (await on.query<{ shared_buffers: string }>('SHOW shared_buffers'))[0]?.shared_buffers;

describe('the embedded database in memory', () => {
  it('runs the service database and its sandboxes with 16 MB of shared_buffers', async () => {
    expect(await sharedBuffers(db)).toBe('16MB');
    expect(db.sandbox).toBeDefined();
    expect(await db.sandbox?.((sandbox) => sharedBuffers(sandbox))).toBe('16MB');
    // The sandbox's cluster is unpacked beside the database's.
    expect((await readdir(tmp)).filter((name) => name.startsWith('gds-pglite-'))).toHaveLength(2);
  });

  it('starts from the unpacked empty cluster: a complete PostgreSQL data directory', async () => {
    const [dir] = (await readdir(tmp)).filter((name) => name.startsWith('gds-pglite-'));
    const files = await readdir(join(tmp, dir ?? 'none'));
    expect(files).toEqual(expect.arrayContaining(['PG_VERSION', 'base', 'global', 'pg_wal']));
    await db.exec('CREATE TABLE written (x int); INSERT INTO written VALUES (7)');
    expect(await db.query('SELECT x FROM written')).toEqual([{ x: 7 }]);
  });

  it('copies rows out and in through a file of its own: exact text rows, none, and a failed copy leaving nothing', async () => {
    await db.exec(`CREATE TABLE copied (id int, note text);
      INSERT INTO copied SELECT g, CASE WHEN g % 3 = 0 THEN NULL ELSE 'tab\there ' || g END FROM generate_series(1, 5000) g`);
    const copyOut = db.copyOut?.bind(db);
    const copyIn = db.copyIn?.bind(db);
    if (!copyOut || !copyIn) throw new Error('PGlite copies rows');
    const bytes = await copyOut('SELECT id, note FROM copied ORDER BY id');
    const lines = new TextDecoder().decode(bytes).split('\n');
    expect(lines).toHaveLength(5001);
    expect(lines.slice(0, 3)).toEqual(['1\ttab\\there 1', '2\ttab\\there 2', '3\t\\N']);
    expect(await copyOut('SELECT id FROM copied WHERE false')).toHaveLength(0);
    await expect(copyOut('SELECT no_such_column FROM copied')).rejects.toThrow(/no_such_column/);
    // The failed copy left no file behind: the next copy is its own rows only.
    expect(new TextDecoder().decode(await copyOut('SELECT id FROM copied WHERE id < 3 ORDER BY id'))).toBe(
      '1\n2\n',
    );
    const loaded = await db.sandbox?.(async (sandbox) => {
      await sandbox.exec('CREATE TABLE copied (id int, note text)');
      await sandbox.copyIn?.('copied', bytes);
      await expect(sandbox.copyIn?.('copied', new TextEncoder().encode('not a number\n'))).rejects.toThrow(
        /invalid input syntax/,
      );
      return sandbox.query<{ rows: number; nulls: number; sample: string }>(
        `SELECT count(*)::int AS rows, count(*) FILTER (WHERE note IS NULL)::int AS nulls,
                (SELECT note FROM copied WHERE id = 4) AS sample FROM copied`,
      );
    });
    expect(loaded).toEqual([{ rows: 5000, nulls: 1666, sample: 'tab\there 4' }]);
  });

  it('refuses a tarball it cannot unpack, saying so, and removes the directory it made', async () => {
    const before = (await readdir(tmp)).length;
    const broken = async () => new Uint8Array(Buffer.from('not a tarball at all'.repeat(100)));
    await expect(
      openPgliteWorker(undefined, broken, 30_000, { sandbox: true, scratchDir: tmp }),
    ).rejects.toThrow(/could not be unpacked|TAR_BAD_ARCHIVE|unexpected end|incorrect header/i);
    expect((await readdir(tmp)).length).toBe(before);
  });
});
