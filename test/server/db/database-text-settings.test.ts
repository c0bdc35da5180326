// The server reads timestamps, dates, intervals and float8 values through node-postgres, which parses them from
// PostgreSQL's text output in its default styles. A database whose defaults print them otherwise (`ALTER
// DATABASE … SET DateStyle = 'SQL, DMY'`, an en_GB initdb, IntervalStyle = 'sql_standard', extra_float_digits
// = 0) made every timestamp the server read come back null, every interval empty and every float8 rounded:
// sign-in, tokens and lists failed on such a database. Each connection the server opens now sets the styles
// the driver reads, whatever the database's defaults.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type RunningServer } from '../../../src/server/app.js';
import { openDb } from '../../../src/server/db/index.js';
import { createPostgresDatabase, postgresTestUrl, type ReadyInfo } from '../../helpers/server.js';
import { startServerProcess, waitFor } from '../../helpers/server-process.js';
import { needs } from '../../helpers/skip.js';

const target = postgresTestUrl();
const skip = 'skip' in target ? target.skip : undefined;

const OTHER_STYLES: Array<[string, string]> = [
  ['DateStyle', 'SQL, DMY'],
  ['IntervalStyle', 'sql_standard'],
  ['extra_float_digits', '0'],
];

async function databaseOfOtherStyles(seeded?: number) {
  const database = await createPostgresDatabase(seeded === undefined ? {} : { seeded });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const name = new URL(database.url).pathname.slice(1);
  for (const [setting, value] of OTHER_STYLES)
    await admin.query(`ALTER DATABASE "${name}" SET ${setting} = '${value}'`);
  await admin.end();
  return database;
}

describe('a PostgreSQL whose defaults print values in other styles', () => {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let running: RunningServer | undefined;

  beforeAll(async () => {
    if (skip !== undefined) return;
    database = await databaseOfOtherStyles(1);
  });

  afterAll(async () => {
    await running?.close();
    await database?.drop();
  });

  it(
    'the server’s database reads timestamps, dates, intervals and float8 as they are',
    needs(skip),
    async () => {
      const db = await openDb({ databaseUrl: database!.url });
      try {
        const [row] = await db.query<{ at: unknown; day: unknown; span: unknown; third: unknown }>(
          `SELECT '2026-01-02 03:04:05+00'::timestamptz AS at, '2026-01-02'::date AS day,
                interval '1 day 2 hours' AS span, (1::float8 / 3) AS third`,
        );
        expect(row?.at).toEqual(new Date('2026-01-02T03:04:05Z'));
        expect(row?.day).toBeInstanceOf(Date);
        expect((row?.day as Date).getDate()).toBe(2);
        expect((row?.day as Date).getMonth()).toBe(0);
        expect(row?.span).toMatchObject({ days: 1, hours: 2 });
        expect(row?.third).toBe(1 / 3);
      } finally {
        await db.close();
      }
    },
  );

  it('answers with the audit log’s times as they are', needs(skip), async () => {
    running = await createServer({ port: 0, databaseUrl: database!.url, contractCheck: true });
    const owner = running.ready.users.find((user) => user.role === 'OWNER');
    const headers = { authorization: `Bearer ${owner?.accessToken}` };
    const audit = await fetch(`${running.url}/api/workspace/audit-log`, { headers });
    expect(audit.status).toBe(200);
    const { entries } = (await audit.json()) as { entries: Array<{ createdAt: string }> };
    expect(entries.length).toBeGreaterThan(0);
    // Before, a timestamp the driver could not read was null, written out as the epoch.
    for (const entry of entries) expect(Date.parse(entry.createdAt)).toBeGreaterThan(0);
    expect(running.contract?.violations ?? []).toEqual([]);
  });
});

describe('a server process on PostgreSQL setting its connections’ styles', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gds-text-styles-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // The SET was once queued behind by the pool's first query on each connection: node-postgres deprecates a
  // query sent while another runs (a DeprecationWarning on the server's stderr; an error from pg 9).
  it('answers on every connection with no warning on its stderr', needs(skip), async () => {
    const database = await databaseOfOtherStyles(1);
    const readyFile = join(dir, 'ready.json');
    const server = startServerProcess([
      '--database-url',
      database.url,
      '--port',
      '0',
      '--ready-file',
      readyFile,
    ]);
    try {
      await waitFor(() => {
        if (server.child.exitCode !== null) throw new Error(`the server exited: ${server.output.stderr}`);
        return existsSync(readyFile) && server.output.stdout.includes('whole tokens');
      }, 'the ready file');
      const ready = JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
      const owner = ready.users.find((user) => user.role === 'OWNER');
      const headers = { authorization: `Bearer ${owner?.accessToken}` };
      // More requests at once than the pool has connections: each of its five is opened.
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => fetch(`${ready.baseUrl}/api/workspace/audit-log`, { headers })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
      for (const answer of answers) {
        const { entries } = (await answer.json()) as { entries: Array<{ createdAt: string }> };
        for (const entry of entries) expect(Date.parse(entry.createdAt)).toBeGreaterThan(0);
      }
    } finally {
      server.signal('SIGTERM');
      await server.closed;
      await database.drop();
    }
    expect(server.output.stderr).not.toMatch(/warning/i);
  });
});
