// A steward clears the queue from a terminal or a script: `gds recertification dismiss` takes several
// ids, or --table <id or name> for every open request of a table; a request that cannot be dismissed does
// not stop the others; `gds recertification list --all` shows dismissed and resolved requests too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runAs } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let customers: string;
let orders: string;

const gds = (args: string[]): Promise<CliResult> => runAs(server, 'STEWARD', dir, args);

const lines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

let round = 0;
/** Applies other rules to a CERTIFIED table: the service files (or updates) its manual request. */
async function fileRequest(tableId: string): Promise<string> {
  round += 1;
  const applied = await server.request('PUT', `/api/tables/${tableId}/gate1`, {
    token: server.user('OWNER').cliToken,
    body: {
      content: `customPredicates:\n  - name: r${round}\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n`,
    },
  });
  expect(applied.status).toBe(200);
  return applied.body.recertificationRequestId as string;
}

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dismiss-'));
  customers = server.table('customers').id;
  orders = server.table('orders').id;
  await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = ANY($1)`, [[customers, orders]]);
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('gds recertification dismiss', () => {
  it('dismisses several ids at once: one NDJSON line each', async () => {
    const a = await fileRequest(customers);
    const b = await fileRequest(orders);
    // The same cause on the same table again: the open request counts it, no second request.
    expect(await fileRequest(customers)).toBe(a);
    const r = await gds(['recertification', 'dismiss', a, b, '--reason', 'rules tidy-up', '--json']);
    expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(lines(r.stdout)).toEqual([
      expect.objectContaining({ id: a, status: 'DISMISSED', count: 2 }),
      expect.objectContaining({ id: b, status: 'DISMISSED', count: 1 }),
    ]);
  });

  it('--table <name> dismisses every open request of that table and says so', async () => {
    const c = await fileRequest(customers);
    const r = await gds(['recertification', 'dismiss', '--table', 'customers']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`✓ Dismissed ${c} (manual) on customers (${customers}).\n`);
    const again = await gds(['recertification', 'dismiss', '--table', customers]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('nothing to dismiss');
    // Under --json every line of stderr is JSON: nothing dismissed is no line at all.
    const json = await gds(['recertification', 'dismiss', '--table', customers, '--json']);
    expect(json).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('one unknown id among several: the others are dismissed, then exit 5 naming it', async () => {
    const d = await fileRequest(orders);
    const r = await gds(['recertification', 'dismiss', 'rcr_nope', d, '--json']);
    expect(r.code).toBe(5);
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ id: d, status: 'DISMISSED' })]);
    const { error } = JSON.parse(r.stderr.trim()) as { error: { message: string; details: unknown } };
    expect(error.message).toContain('rcr_nope');
    expect(error.details).toMatchObject({ dismissed: 1, failed: ['rcr_nope'] });
  });

  it('without an id or --table: exit 2, nothing sent', async () => {
    const r = await gds(['recertification', 'dismiss']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--table');
  });

  it('gds recertification list --all shows the dismissed requests; the default lists only open ones', async () => {
    const all = await gds(['recertification', 'list', '--all', '--table', 'orders', '--json']);
    expect(all.code, all.stderr).toBe(0);
    const listed = lines(all.stdout);
    expect(listed.length).toBeGreaterThanOrEqual(2);
    expect(new Set(listed.map((l) => l.status))).toEqual(new Set(['DISMISSED']));
    const open = await gds(['recertification', 'list', '--table', 'orders', '--json']);
    expect(open.code).toBe(0);
    expect(open.stdout).toBe('');
  });
});
