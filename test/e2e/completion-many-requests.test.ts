// TAB completion of `gds recertification dismiss` in a workspace of 2,000 open recertification requests (a
// team's size: a request for each of 2,000 models): gds asks the service for one page of the open requests
// whose id starts with what was typed (GET /api/recertification-requests?prefix=), never the whole queue. A
// service from before `prefix` refuses it, or ignores it and answers other ids: the whole list is then read,
// as before. gds runs in the test process (`gds __complete`); a proxy in front of the server counts what it
// asks and how many requests each answer carries.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { REQUEST_CANDIDATES } from '../../src/cli/completion-values.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { RewritingProxy } from '../helpers/rewriting-proxy.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import type { TestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';
import { startTestServer } from './test-server.js';

const OPEN = 2_000;
const PATH = '/api/recertification-requests';
let server: TestServer;
let proxy: RewritingProxy | undefined;
let dir: string;
/** The open requests' ids, in code-point order. */
let ids: string[];
/**
 * What reached the service's request list through the proxy: each request's query, the requests answered and
 * whether the answer carried a total (counting every match costs the service more than the page).
 */
const asked: Array<{ url: URL; requests: number; total?: boolean }> = [];
/** How the proxy answers a request with `prefix`: passed on, refused (400) or passed on without it. */
let service: 'current' | 'refuses prefix' | 'ignores prefix' = 'current';

beforeAll(async () => {
  server = await startTestServer();
  await copyTable(server, server.table('customers').id, OPEN, 'req');
  // One OPEN request a copy, its id as the service makes them (`rcr_` and 16 hex digits).
  await server.sql(
    `INSERT INTO gds.recertification_requests
       (id, workspace_id, table_id, cause, status, details, created_at, last_seen_at, signal_count)
     SELECT 'rcr_' || substr(md5(id), 1, 16), workspace_id, id, 'manual', 'OPEN', '{}'::jsonb, created_at, created_at, 1
       FROM gds.tables WHERE id ~ '^tbl_req_[0-9]+$'`,
  );
  ids = (
    await server.sql<{ id: string }>(
      `SELECT id FROM gds.recertification_requests WHERE status = 'OPEN' ORDER BY id COLLATE "C"`,
    )
  ).map((row) => row.id);
  expect(ids.length).toBeGreaterThanOrEqual(OPEN);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-completion-requests-'));
  proxy = await startRewritingProxy(server.url, {
    // Requests are sent one at a time: an answer is that of the request asked last.
    rewrite: (text) => {
      const last = asked.at(-1);
      if (last !== undefined) {
        try {
          const body = JSON.parse(text) as { requests?: unknown[]; total?: number };
          last.requests = body.requests?.length ?? 0;
          last.total = body.total !== undefined;
        } catch {
          // not JSON: no requests
        }
      }
      return text;
    },
    intercept: (request, response) => {
      const url = new URL(request.url ?? '/', server.url);
      const list = url.pathname.endsWith(PATH) && url.searchParams.has('prefix');
      if (list && service === 'refuses prefix') {
        // A service from before `prefix` knows neither it nor `total`.
        const allowed = ['tableId', 'all', 'limit', 'cursor'];
        const unknown = [...url.searchParams.keys()].filter((name) => !allowed.includes(name));
        response.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: {
              code: 'invalid_query',
              message: `Unknown query parameters: ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`,
              details: { unknown, allowed },
            },
          }),
        );
        return true;
      }
      if (list && service === 'ignores prefix') {
        url.searchParams.delete('prefix');
        request.url = `${url.pathname}${url.search}`;
      }
      if (url.pathname.endsWith(PATH)) asked.push({ url, requests: 0 });
      return false;
    },
  });
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let cache = 0;
beforeEach(() => {
  asked.length = 0;
  service = 'current';
  cache += 1;
});

/** The request ids `gds __complete line -- recertification dismiss <word>` offers (each line's first field). */
async function complete(word: string): Promise<string[]> {
  const result = await runInProcess(['__complete', 'line', '--', 'recertification', 'dismiss', word], {
    env: {
      HOME: dir,
      XDG_CACHE_HOME: join(dir, `cache-${cache}`),
      GDS_CONFIG_DIR: join(dir, 'config'),
      SERVICE_API_URL: proxy?.url ?? '',
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      // The test server shares a loaded machine: TAB's 2 s for the service is not what is tested here.
      GDS_COMPLETION_TIMEOUT_MS: '60000',
    },
  });
  expect(result).toMatchObject({ code: 0, stderr: '' });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t')[0] ?? '')
    .sort();
}

/** The open requests' ids starting with `word`, any case. */
const starting = (word: string) => ids.filter((id) => id.startsWith(word.toLowerCase()));

describe(`completing a recertification request among ${OPEN.toLocaleString('en')} open ones`, () => {
  it('asks for one page of the ids starting with what was typed, and offers them', async () => {
    const word = ids[1_000]?.slice(0, 6) ?? '';
    expect(starting(word).length).toBeGreaterThan(0);
    expect(starting(word).length).toBeLessThan(REQUEST_CANDIDATES);
    expect(await complete(word.toUpperCase())).toEqual(starting(word));
    expect(asked).toHaveLength(1);
    expect(asked[0]?.url.searchParams.get('prefix')).toBe(word.toUpperCase());
    expect(asked[0]?.requests).toBe(starting(word).length);
  });

  it('offers the first page of many matches, and a page of the list on an empty word', async () => {
    // Every id starts with `rcr_`: the first 100 of them by id.
    expect(await complete('rcr_')).toEqual(ids.slice(0, REQUEST_CANDIDATES));
    const offered = await complete('');
    expect(offered).toHaveLength(REQUEST_CANDIDATES);
    expect(asked).toHaveLength(2);
    expect(asked.every(({ requests }) => requests <= REQUEST_CANDIDATES)).toBe(true);
    // No total asked for: counting every open request would cost more than the page, TAB's 2 s past some size.
    expect(asked.map(({ url, total }) => ({ total: url.searchParams.get('total'), counted: total }))).toEqual(
      [
        { total: 'false', counted: false },
        { total: 'false', counted: false },
      ],
    );
  });

  it('reads the whole list, as before, from a service that refuses prefix', async () => {
    service = 'refuses prefix';
    const word = ids[7]?.slice(0, 6) ?? '';
    expect(await complete(word)).toEqual(starting(word));
    // The refused request never reached the service: the one that did is the whole list.
    expect(asked.map(({ url }) => url.search)).toEqual(['']);
    expect(asked[0]?.requests).toBeGreaterThanOrEqual(OPEN);
  });

  it('reads the whole list, as before, from a service that ignores prefix', async () => {
    service = 'ignores prefix';
    const word = ids.at(-1)?.slice(0, 6) ?? '';
    expect(await complete(word)).toEqual(starting(word));
    // Its page of the oldest requests held other ids: the whole list was then read.
    expect(asked.map(({ url }) => url.search)).toEqual([`?limit=${REQUEST_CANDIDATES}&total=false`, '']);
    expect(asked[1]?.requests).toBeGreaterThanOrEqual(OPEN);
  });
});
