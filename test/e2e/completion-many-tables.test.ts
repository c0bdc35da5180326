// TAB completion of a table in a workspace of thousands of tables: gds asks the service for one page of the
// tables whose name or id starts with what was typed (GET /api/tables?prefix=), never the whole list, and a
// job id from the newest tables, one page of the list newest first (GET /api/tables?order=newest). A service
// from before `prefix` refuses it: the whole list is then read, as before; one from before `order`: the list
// oldest first, through every page within a time budget. gds runs in the test process (`gds __complete`); a proxy in front of the server counts what it asks
// and how many tables each answer carries.
import { createServer, request as forward } from 'node:http';
import type { Server } from 'node:http';
import { mkdtemp, readdir, rm, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dynamicValues, TABLE_CANDIDATES } from '../../src/cli/completion-values.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';
import { startTestServer } from './test-server.js';

const COPIES = 3_000;
let server: TestServer;
let proxy: Server;
let proxyUrl: string;
let dir: string;
/** What reached the service through the proxy: each request's path and query, and the tables answered. */
const asked: Array<{ url: URL; tables: number }> = [];
/** A service from before `prefix` (or `order`): the proxy answers a request with it as such a service does. */
let beforePrefix = false;
let beforeOrder = false;

beforeAll(async () => {
  server = await startTestServer();
  await copyTable(server, server.table('customers').id, COPIES, 'wide');
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-completion-many-'));
  const target = new URL(server.url);
  proxy = createServer((req, res) => {
    const url = new URL(req.url ?? '/', target);
    const refused = [beforePrefix && 'prefix', beforeOrder && 'order'].find(
      (parameter) => parameter && url.pathname.endsWith('/api/tables') && url.searchParams.has(parameter),
    );
    if (refused) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 'invalid_query',
            message: `Unknown query parameters: ${refused}. Allowed: state, name, limit, cursor, total.`,
            details: { unknown: [refused], allowed: ['state', 'name', 'limit', 'cursor', 'total'] },
          },
        }),
      );
      return;
    }
    const upstream = forward(
      url,
      { method: req.method, headers: { ...req.headers, host: target.host } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          let tables = 0;
          try {
            tables = (JSON.parse(body.toString('utf8')) as { tables?: unknown[] }).tables?.length ?? 0;
          } catch {
            // not JSON: no tables
          }
          asked.push({ url, tables });
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(body);
        });
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${target.pathname}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let cache = 0;
beforeEach(() => {
  asked.length = 0;
  beforePrefix = false;
  beforeOrder = false;
  cache += 1;
});

/** gds's environment: the service through the proxy, answers kept under `cacheDir`, TAB's wait `waitMs`. */
const completionEnv = (cacheDir: string, waitMs: number) => ({
  HOME: dir,
  XDG_CACHE_HOME: join(dir, cacheDir),
  GDS_CONFIG_DIR: join(dir, 'config'),
  SERVICE_API_URL: proxyUrl,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
  GDS_COMPLETION_TIMEOUT_MS: String(waitMs),
});

/** `gds __complete ARGS` as the shells run it: the values it offers (each line's first field). */
async function complete(args: string[], cacheDir = `cache-${cache}`): Promise<string[]> {
  // The test server shares a loaded machine: TAB's 2 s for the service is not what is tested here.
  const result = await runInProcess(['__complete', ...args], { env: completionEnv(cacheDir, 60_000) });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[0] ?? '');
}

const tableLists = () => asked.filter(({ url }) => url.pathname.endsWith('/api/tables'));
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** wide_1…wide_3000 whose name starts with `prefix`, in the service's order. */
const wideNames = (prefix: string) =>
  Array.from({ length: COPIES }, (_, i) => `wide_${i + 1}`)
    .filter((name) => name.startsWith(prefix))
    .sort(byCodePoint);

describe(`completing a table among ${COPIES.toLocaleString('en')} tables`, () => {
  it('asks for one page of the names starting with what was typed, and offers them', async () => {
    expect(await complete(['tables', 'WIDE_123'])).toEqual(wideNames('wide_123'));
    expect(tableLists()).toHaveLength(1);
    expect(tableLists()[0]?.url.searchParams.get('prefix')).toBe('WIDE_123');
    expect(asked.every(({ tables }) => tables <= TABLE_CANDIDATES)).toBe(true);
  });

  it('offers the first page of many matches, by name, and of ids by id', async () => {
    // wide_12, wide_120…wide_129, wide_1200…wide_1299: 111, of which the first 100.
    expect(wideNames('wide_12')).toHaveLength(111);
    expect(await complete(['line', '--', 'status', 'wide_12'])).toEqual(
      wideNames('wide_12').slice(0, TABLE_CANDIDATES),
    );
    const ids = await complete(['line', '--', 'gate', 'run', 'tbl_wide_29']);
    expect(ids).toEqual(
      wideNames('wide_29')
        .map((name) => `tbl_${name}`)
        .slice(0, TABLE_CANDIDATES),
    );
    expect(tableLists()).toHaveLength(2);
    expect(asked.every(({ tables }) => tables <= TABLE_CANDIDATES)).toBe(true);
  });

  it('uses an answer again for the same prefix only, and forgets old ones', async () => {
    expect(await complete(['tables', 'wide_2999'], 'cache-shared')).toEqual(['wide_2999']);
    expect(await complete(['tables', 'wide_2999'], 'cache-shared')).toEqual(['wide_2999']);
    expect(tableLists()).toHaveLength(1);
    // Another prefix is asked for, not filtered from the answer to the first.
    expect(await complete(['tables', 'wide_1000'], 'cache-shared')).toEqual(['wide_1000']);
    expect(tableLists()).toHaveLength(2);
    // One answer is kept for each start typed: those no completion uses any more are removed as one is written.
    const folder = join(dir, 'cache-shared/gds/complete');
    expect(await readdir(folder)).toHaveLength(2);
    const past = new Date(Date.now() - 60_000);
    for (const file of await readdir(folder)) await utimes(join(folder, file), past, past);
    expect(await complete(['tables', 'wide_1001'], 'cache-shared')).toEqual(['wide_1001']);
    expect(await readdir(folder)).toHaveLength(1);
  });

  it('offers tables, the first page of them, on an empty word', async () => {
    const offered = await complete(['line', '--', 'status', '']);
    expect(offered.length).toBeGreaterThan(0);
    expect(offered.length).toBeLessThanOrEqual(2 * TABLE_CANDIDATES); // names and ids
    expect(tableLists()).toHaveLength(1);
    expect(asked.every(({ tables }) => tables <= TABLE_CANDIDATES)).toBe(true);
  });

  it('reads the whole list, as before, from a service that refuses prefix', async () => {
    beforePrefix = true;
    expect(await complete(['tables', 'wide_123'])).toEqual(wideNames('wide_123'));
    // The refused request never reached the service: the one that did is the whole list.
    expect(tableLists().map(({ url }) => url.search)).toEqual(['']);
    expect(tableLists()[0]?.tables).toBeGreaterThan(COPIES);
  });

  it('completes a job id from the newest tables: one page of the list newest first, then their jobs', async () => {
    // Oldest first, the newest tables are on the list's last page, past the first 1,000.
    await server.sql(
      `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, created_by, created_at, started_at, finished_at)
       SELECT 'job_newest_wide', workspace_id, id, 'gate2', 'SUCCEEDED', $1, now(), now(), now()
         FROM gds.tables WHERE id = 'tbl_wide_${COPIES}'`,
      [server.user('OWNER').userId],
    );
    const offered = await complete(['line', '--', 'gate', 'status', '']);
    expect(offered).toContain('job_newest_wide');
    const lists = tableLists();
    expect(lists.map(({ url }) => url.search)).toEqual(['?order=newest&limit=10&total=false']);
    expect(lists[0]?.tables).toBe(10);
    const jobLists = asked.filter(({ url }) => url.pathname.endsWith('/gate-jobs'));
    expect(jobLists).toHaveLength(10);
    expect(jobLists.some(({ url }) => url.pathname.endsWith(`/tbl_wide_${COPIES}/gate-jobs`))).toBe(true);
    expect(asked).toHaveLength(1 + jobLists.length);
  });

  it('from a service before order, reads every page of the list oldest first, then the jobs of ten', async () => {
    beforeOrder = true;
    const offered = await complete(['line', '--', 'gate', 'status', '']);
    expect(offered).toContain('job_newest_wide');
    // The refused request never reached the service.
    const lists = tableLists();
    expect(lists.length).toBeGreaterThan(COPIES / 1_000);
    expect(lists.every(({ url }) => url.searchParams.get('limit') === '1000')).toBe(true);
    expect(lists.reduce((sum, { tables }) => sum + tables, 0)).toBeGreaterThan(COPIES);
    const jobLists = asked.filter(({ url }) => url.pathname.endsWith('/gate-jobs'));
    expect(jobLists).toHaveLength(10);
    expect(jobLists.some(({ url }) => url.pathname.endsWith(`/tbl_wide_${COPIES}/gate-jobs`))).toBe(true);
    expect(asked).toHaveLength(lists.length + jobLists.length);
  });

  // A clock that moves a second at each look: the budget (half of TAB's wait) is spent after a few pages.
  const jobsWithinTwoSeconds = (cacheDir: string) => {
    let clock = Date.now();
    return dynamicValues('jobs', '', {
      flags: {},
      version: '0.0.0-test',
      env: completionEnv(cacheDir, 4_000),
      now: () => (clock += 1_000),
    });
  };

  it('offers the job of the newest table of a list longer than its time reads, whole', async () => {
    // Every table a job, so that the newest of any part of the list read has some.
    await server.sql(
      `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, created_by, created_at, started_at, finished_at)
       SELECT 'job_' || id, workspace_id, id, 'gate2', 'SUCCEEDED', $1, now(), now(), now()
         FROM gds.tables WHERE id LIKE 'tbl_wide_%' AND id <> 'tbl_wide_${COPIES}'`,
      [server.user('OWNER').userId],
    );
    const offered = await jobsWithinTwoSeconds(`cache-${cache}`);
    expect(offered.map(({ value }) => value)).toContain('job_newest_wide');
    expect(offered.every(({ description }) => !description?.includes(' tables)'))).toBe(true);
    expect(tableLists()).toHaveLength(1);
  });

  it('from a service before order, stops reading the list past its budget, and says so beside the jobs', async () => {
    beforeOrder = true;
    const offered = await jobsWithinTwoSeconds(`cache-${cache}`);
    expect(offered.map(({ value }) => value)).not.toContain('job_newest_wide');
    const lists = tableLists();
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.length).toBeLessThan(COPIES / 1_000);
    const read = lists.reduce((sum, { tables }) => sum + tables, 0);
    expect(offered.length).toBeGreaterThan(0);
    for (const { description } of offered)
      expect(description).toContain(`of the first ${read.toLocaleString('en')} tables`);
  });
});
