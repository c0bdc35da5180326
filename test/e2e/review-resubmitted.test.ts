// `gds review` lists each waiting table once, even when one it already listed is submitted again while it
// reads the queue's next pages: the queue is read by the order submissions were filed in, so the new
// submission's entry comes after the key of the page already read and would be listed a second time (two
// NDJSON lines, two rows, or the walk offering the table twice). A forwarding proxy re-submits the table
// as gds asks for the second page; gds runs in the test process (runInProcess).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';
import { startTestServer } from './test-server.js';

/** More than the first page (100) holds. */
const WAITING = 150;

let server: TestServer;
let proxy: Server;
let dir: string;
/** Runs once, before the proxy forwards the first request for a page after the first. */
let beforeSecondPage: (() => Promise<void>) | undefined;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-review-resubmitted-'));
  const target = new URL(server.origin);
  proxy = createServer((req, res) => {
    const forward = () =>
      req.pipe(
        httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: req.url,
            method: req.method,
            headers: { ...req.headers, host: target.host },
          },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        ).on('error', () => res.destroy()),
      );
    const hook = beforeSecondPage;
    if (hook === undefined || !/\/api\/notifications\?.*cursor=/.test(req.url ?? '')) return forward();
    beforeSecondPage = undefined;
    hook().then(forward, () => res.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const submit = async (tableId: string) => {
  server.clock.advance(1000);
  const answer = await server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
    token: server.user('OWNER').accessToken,
    body: {},
  });
  expect(answer.status).toBe(201);
};

describe('gds review while a listed table is submitted again', () => {
  it('--json prints each waiting table once', async () => {
    const orders = server.table('orders').id;
    // orders first: the oldest entry, on the first page.
    await submit(orders);
    await copyTable(server, server.table('customers').id, WAITING, 'rsb', { state: `'PENDING_REVIEW'` });
    await server.sql(
      `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at)
       SELECT 'ntf_' || id, workspace_id, id, 'STEWARD', 'gate_submitted', 'Table ' || name || ' was submitted.',
              '{}'::jsonb, created_at
         FROM gds.tables WHERE id LIKE 'tbl_rsb_%' ORDER BY created_at, id`,
    );
    beforeSecondPage = () => submit(orders);
    const { port } = proxy.address() as AddressInfo;
    const review = await runInProcess(['review', '--json'], {
      env: {
        HOME: dir,
        GDS_CONFIG_DIR: join(dir, 'config'),
        SERVICE_API_URL: `http://127.0.0.1:${port}${new URL(server.url).pathname}`,
        SERVICE_TOKEN: server.user('STEWARD').cliToken,
      },
    });
    expect(review.code, review.stderr).toBe(0);
    expect(beforeSecondPage).toBeUndefined();
    const ids = review.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { tableId: string }).tableId);
    expect(ids.filter((id) => id === orders)).toHaveLength(1);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(WAITING + 1);
  });
});
