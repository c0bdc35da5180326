// A test process ended before its clean-up (vitest killed, Ctrl-C) leaves its PostgreSQL databases behind; the
// next test process drops them (dropLeftTestDatabases, run once a process by createPostgresDatabase), and only
// them: a database of a running process, a young one, and one still connected to are kept.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropLeftTestDatabases, LEFT_DATABASE_AGE_MS } from './server.js';
import { needs, noPostgres } from './skip.js';

const adminUrl = process.env.GDS_TEST_DATABASE_URL ?? '';
const made: string[] = [];

async function withAdmin<T>(fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/** Makes a database named as createPostgresDatabase names them, for process `pid`, made `age` ms ago. */
async function database(pid: number, age: number): Promise<string> {
  // The name's time is unique to the millisecond; the tests here make theirs one after another.
  const name = `gds_test_${pid}_${(Date.now() - age - made.length).toString(36)}`;
  made.push(name);
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name}`));
  return name;
}

const exists = (name: string) =>
  withAdmin(
    async (admin) =>
      (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );

afterAll(async () => {
  if (noPostgres !== undefined) return;
  await withAdmin(async (admin) => {
    for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
});

describe('the databases test processes left', () => {
  it('are dropped when their process has ended, and only then', needs(noPostgres), async () => {
    // A process that has ended: its id names no process (until the machine reuses it).
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    const endedPid = Number(ended.stdout);
    expect(endedPid).toBeGreaterThan(1);
    const old = LEFT_DATABASE_AGE_MS + 60_000;
    const left = await database(endedPid, old);
    const running = await database(process.pid, old);
    const young = await database(endedPid, 60_000);
    const connected = await database(endedPid, old);
    const url = new URL(adminUrl);
    url.pathname = `/${connected}`;
    const holder = new pg.Client({ connectionString: url.toString() });
    await holder.connect();
    try {
      const dropped = await dropLeftTestDatabases(adminUrl);
      expect(dropped).toContain(left);
      expect(dropped).not.toContain(running);
      expect(dropped).not.toContain(young);
      expect(dropped).not.toContain(connected);
      expect(await exists(left)).toBe(false);
      for (const kept of [running, young, connected]) expect(await exists(kept)).toBe(true);
    } finally {
      await holder.end();
    }
  });

  it('are not looked for on a PostgreSQL of another machine, whose process ids are not this one’s', async () => {
    expect(await dropLeftTestDatabases('postgres://postgres@db.example.invalid:5432/gds_test')).toEqual([]);
  });
});
