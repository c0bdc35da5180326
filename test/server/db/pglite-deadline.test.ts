// The PGlite handle runs the database in a worker thread: a statement past the deadline is stopped by
// ending the worker, the caller gets QueryDeadlineError, the open transaction is lost, everything
// committed survives (a new worker reopens the same private data directory), and the request thread
// stays free meanwhile. The private directory is gone after close.
import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { QueryDeadlineError } from '../../../src/server/db/pglite.js';

const HOSTILE = "SELECT length(lpad('a', 268000000)) FROM generate_series(1, 100)";
const savedTmp = process.env.TMPDIR;
let tmp: string;
let db: Db;

/**
 * The empty cluster the server keeps in `<temp folder>/gds-cache-<uid>` (src/server/db/index.ts), copied into
 * `to`'s own (0700) when this machine has one: a fresh temp folder would otherwise make it again by initdb
 * (3-4 s), which is not what this file checks. A copy that does not verify is made again, as without it.
 */
async function bringClusterCache(to: string): Promise<void> {
  const name = `gds-cache-${process.getuid?.() ?? 0}`;
  const from = join(tmpdir(), name);
  await mkdir(join(to, name), { mode: 0o700 });
  for (const file of await readdir(from).catch(() => []))
    if (/^pglite-.*-empty-cluster\.tar\.gz(\.sha256)?$/.test(file))
      await copyFile(join(from, file), join(to, name, file));
}

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'gds-deadline-'));
  await bringClusterCache(tmp);
  process.env.TMPDIR = tmp; // the private data directory goes here, so the test can see it go
  db = await openDb({ queryTimeoutMs: 1000 });
  await db.exec('CREATE TABLE kept (x int); INSERT INTO kept VALUES (1)');
});

afterAll(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  await rm(tmp, { recursive: true, force: true });
});

describe('PGlite with a deadline', () => {
  it('stops a statement at the deadline while the request thread keeps running', async () => {
    const events: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        events.push('timer');
        resolve();
      }, 100),
    );
    const hostile = db.query(HOSTILE).catch((error: unknown) => {
      events.push('hostile');
      return error;
    });
    await timer;
    const error = await hostile;
    expect(events).toEqual(['timer', 'hostile']);
    expect(error).toBeInstanceOf(QueryDeadlineError);
    expect((error as QueryDeadlineError).message).toMatch(/deadline of 1 s/);
    expect(await db.query('SELECT x FROM kept')).toEqual([{ x: 1 }]);
  });

  it('loses the open transaction and keeps what was committed', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO kept VALUES (2)');
    });
    const failed = db.transaction(async (tx) => {
      await tx.query('INSERT INTO kept VALUES (3)');
      await tx.query(HOSTILE);
    });
    await expect(failed).rejects.toBeInstanceOf(QueryDeadlineError);
    expect(await db.query('SELECT x FROM kept ORDER BY x')).toEqual([{ x: 1 }, { x: 2 }]);
    await db.exec('INSERT INTO kept VALUES (4)');
    expect(await db.query('SELECT count(*)::int AS n FROM kept')).toEqual([{ n: 3 }]);
  });

  it('keeps the usual errors as they were (code included) and the transaction usable after a savepoint', async () => {
    const error = await db.query('INSERT INTO missing VALUES (1)').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '42P01' });
    const n = await db.transaction(async (tx) => {
      await tx.query('SAVEPOINT s');
      await tx.query('SELECT 1/0').catch(() => tx.query('ROLLBACK TO SAVEPOINT s'));
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM kept'))[0]?.n;
    });
    expect(n).toBe(3);
  });

  it('removes its private data directory on close', async () => {
    expect((await readdir(tmp)).filter((name) => name.startsWith('gds-pglite-'))).toHaveLength(1);
    await db.close();
    expect((await readdir(tmp)).filter((name) => name.startsWith('gds-pglite-'))).toEqual([]);
  });
});
