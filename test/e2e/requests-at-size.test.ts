// How many requests a command makes as the workspace grows. A command whose answer does not grow (a table of the
// open recertification requests, a token for many tables) makes as many for 40 of them as for 3, where it made one
// a request or one a table; one that lists everything (the review queue) reads 1,000 a page after its first 100.
// gds runs in the test process with GDS_DEBUG=1, whose `→ ` lines on stderr are the requests it sent; the
// workspace is grown in SQL between the two counts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';
import { startTestServer } from './test-server.js';

/** The two sizes counted at. */
const FEW = 3;
const MANY = 40;

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-requests-at-size-'));
  // CERTIFIED copies of customers: many_1 … many_40.
  await copyTable(server, server.table('customers').id, MANY, 'many');
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** gds as the OWNER, with what it printed and the requests it sent (method and path, the base URL left out). */
async function gds(args: string[]) {
  const result = await runInProcess(args, {
    env: {
      HOME: dir,
      GDS_CONFIG_DIR: join(dir, 'config'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      GDS_DEBUG: '1',
    },
  });
  const requests = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('gds: → '))
    .map((line) =>
      line
        .slice('gds: → '.length)
        .replace(/ \(token .*\)$/, '')
        .replace(server.url, ''),
    );
  return { ...result, requests };
}

describe('gds recertification list', () => {
  /** Requests filed so far: one OPEN request a copy, each merged by 25 nightly signals besides its first. */
  let filed = 0;
  const NIGHTS = 25;

  async function fileRequests(upTo: number) {
    for (; filed < upTo;) {
      filed += 1;
      const applied = await server.request('PUT', `/api/tables/tbl_many_${filed}/gate1`, {
        token: server.user('OWNER').cliToken,
        body: {
          content: 'customPredicates:\n  - name: has_id\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
        },
      });
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      const requestId: string = applied.body.recertificationRequestId;
      await server.sql(
        `INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
         SELECT 'rcs_night_${filed}_' || n, $1, 'manual', jsonb_build_object('trigger', 'night ' || n), NULL,
                now() + n * interval '1 second'
           FROM generate_series(1, ${NIGHTS}) AS n`,
        [requestId],
      );
      await server.sql(
        `UPDATE gds.recertification_requests SET signal_count = signal_count + ${NIGHTS} WHERE id = $1`,
        [requestId],
      );
    }
  }

  it(`${FEW} and ${MANY} requests with earlier signals: the table is one request, --json one and a read a 1,000 signals`, async () => {
    for (const size of [FEW, MANY]) {
      await fileRequests(size);
      const table = await gds(['recertification', 'list']);
      expect(table.code, table.stderr).toBe(0);
      const rows = table.stdout.trim().split('\n');
      expect(rows).toHaveLength(size);
      // Each row's Signals (the request's count) and Latest (its newest signal), as the list carries them.
      for (const row of rows)
        expect(row).toMatch(new RegExp(`\\t${NIGHTS + 1}\\t.*trigger: night ${NIGHTS}\\b`));
      expect(table.requests).toEqual(['GET /api/recertification-requests?limit=100']);

      // --json prints every signal of each request: those before the latest 20 of them all in one read.
      const json = await gds(['recertification', 'list', '--json']);
      expect(json.code, json.stderr).toBe(0);
      const listed = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { signals: unknown[] });
      expect(listed.map((request) => request.signals.length)).toEqual(Array(size).fill(NIGHTS + 1));
      // A page of 1,000 signals a read: 78 for 3 requests, 1,040 for 40 (it made 1 + 3 and 1 + 40 requests).
      const reads = Math.ceil((size * (NIGHTS + 1)) / 1000);
      expect(json.requests.map((request) => request.replace(/\?.*$/, ''))).toEqual([
        'GET /api/recertification-requests',
        ...Array<string>(reads).fill('GET /api/recertification-signals'),
      ]);
    }
  });
});

describe('gds tokens issue', () => {
  it(`a token for ${FEW} and for ${MANY} tables by name: their names in one request`, async () => {
    for (const size of [FEW, MANY]) {
      const names = Array.from({ length: size }, (_, i) => `many_${i + 1}`);
      const issued = await gds([
        'tokens',
        'issue',
        '--name',
        `loader-${size}`,
        '--env',
        'dev',
        ...names.flatMap((name) => ['--table', `${name}:read`]),
        '--json',
      ]);
      expect(issued.code, issued.stderr).toBe(0);
      expect(issued.requests).toEqual([
        `GET /api/tables?${names.map((name) => `name=${name}`).join('&')}&limit=1000`,
        'POST /api/integration/tokens',
      ]);
      // The token grants every table named, each by its id.
      const [held] = await server.sql<{ tableIds: Record<string, string> }>(
        'SELECT table_ids AS "tableIds" FROM gds.integration_tokens WHERE name = $1',
        [`loader-${size}`],
      );
      expect(Object.values(held?.tableIds ?? {}).sort()).toEqual(names.map((name) => `tbl_${name}`).sort());
    }
  });
});

describe('a table name no table holds', () => {
  /** What `gds status <typo>` asked for after the name and the id (the suggestion's reads), and suggested. */
  async function typo(name: string) {
    const r = await gds(['status', name, '--json']);
    expect(r.code).toBe(5);
    expect(r.requests.slice(0, 2)).toEqual([
      `GET /api/tables?name=${name}`,
      `GET /api/tables/${name}/status`,
    ]);
    const error = (
      JSON.parse(r.stderr.split('\n').find((line) => line.startsWith('{')) ?? '{}') as {
        error?: { details?: { didYouMean?: string } };
      }
    ).error;
    return { reads: r.requests.slice(2), didYouMean: error?.details?.didYouMean };
  }

  it('suggests the nearest name from one page of the list; past 1,000 tables, from those starting as it does', async () => {
    // This file's workspace so far: fewer than 1,000 tables, every name in the list's first page.
    expect(await typo('custmers')).toEqual({
      reads: ['GET /api/tables?limit=1000&total=false'],
      didYouMean: 'customers',
    });
    await copyTable(server, server.table('customers').id, 2_000, 'wide');
    expect(await typo('wide_1999x')).toEqual({
      reads: [
        'GET /api/tables?limit=1000&total=false',
        // wide_ begins 2,000 names, more than a page: then those wide_1999 begins.
        'GET /api/tables?prefix=wide_&limit=1000&total=false',
        'GET /api/tables?prefix=wide_1999&limit=1000&total=false',
      ],
      didYouMean: 'wide_1999',
    });
  });
});

describe('gds review', () => {
  /** Copies of customers waiting for review, each with its open notification, as `gate submit` files it. */
  async function submitted(prefix: string, count: number) {
    await copyTable(server, server.table('customers').id, count, prefix, { state: `'PENDING_REVIEW'` });
    await server.sql(
      `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
       SELECT 'ntf_' || id, workspace_id, id, 'STEWARD', 'gate_submitted', 'Table ' || name || ' was submitted.',
              '{}'::jsonb, created_at
         FROM gds.tables WHERE id LIKE $1 ORDER BY created_at`,
      [`tbl_${prefix}_%`],
    );
  }

  it('the queue of 3 tables is one request; of 2,000, its first 100 and then 1,000 a page', async () => {
    await submitted('rva', FEW);
    const few = await gds(['review', '--json']);
    expect(few.code, few.stderr).toBe(0);
    expect(few.stdout.trim().split('\n')).toHaveLength(FEW);
    expect(few.requests).toEqual(['GET /api/notifications?limit=100']);

    await submitted('rvb', 2_000 - FEW);
    const many = await gds(['review', '--json']);
    expect(many.code, many.stderr).toBe(0);
    const ids = many.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { tableId: string }).tableId);
    expect(new Set(ids).size).toBe(2_000);
    expect(many.requests.map((request) => request.replace(/&cursor=.*$/, '&cursor=…'))).toEqual([
      'GET /api/notifications?limit=100',
      'GET /api/notifications?limit=1000&cursor=…',
      'GET /api/notifications?limit=1000&cursor=…',
    ]);
  });
});
