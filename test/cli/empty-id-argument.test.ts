// An id argument given empty, as a script gives it when its variable is unset (`gds status "$TABLE_ID"`):
// exit 2 with a usage error naming the argument, before anything is sent. It went to the service as an empty
// name or path segment: `status ""` exited 7 with the service's "name must be given once, with a value",
// `records get t ""` 5 with "Record  does not exist", neither saying that the argument was empty.
// An id `.` or `..` likewise: a URL drops such a path segment with the one before it, so `gate cancel ..` was
// sent as POST /api/cancel (exit 5, "No endpoint POST /v1/api/cancel."), another endpoint than the command's.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAs } from '../helpers/run-in-process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-empty-id-'));
});

afterAll(async () => {
  await server?.close();
});

const gds = (args: string[]) => runAs(server, 'ADMIN', dir, args);

async function recordCount(tableId: string) {
  const [row] = await server.sql<{ n: number }>(
    'SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1',
    [tableId],
  );
  return row?.n;
}

describe('an empty id argument', () => {
  it.each([
    [['status', ''], 'tableId', 'status'],
    [['versions', 'list', ''], 'tableId', 'versions list'],
    [['delete', '', '--yes'], 'id', 'delete'],
    [['gate', 'result', ''], 'jobId', 'gate result'],
    [['recertification', 'dismiss', ''], 'requestId', 'recertification dismiss'],
    [['recertification', 'dismiss', 'rcr_0000000000000000', ''], 'requestId', 'recertification dismiss'],
  ])('gds %j: exit 2 naming <%s>, nothing on stdout', async (args, name, words) => {
    const r = await gds(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`The argument <${name}> is empty`);
    expect(r.stderr).toContain(`gds ${words} --help`);
  });

  it('records delete of an empty record id under --json: one error line, and the rows are all there', async () => {
    const table = server.table('customers').id;
    const before = await recordCount(table);
    const r = await gds(['records', 'delete', table, '', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    const error = JSON.parse(r.stderr.trim()) as { error: { code: string; message: string } };
    expect(error.error.code).toBe('empty_argument');
    expect(error.error.message).toContain('<id>');
    expect(await recordCount(table)).toBe(before);
  });
});

describe('an id argument . or ..', () => {
  it.each([
    [['gate', 'cancel', '..'], 'jobId'],
    [['gate', 'result', '.'], 'jobId'],
    [['recertification', 'dismiss', '..', '--json'], 'requestId'],
    [['recertification', 'dismiss', 'rcr_0000000000000000', '..'], 'requestId'],
  ])('gds %j: exit 2 naming <%s>, nothing sent', async (args, name) => {
    const r = await gds(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`The argument <${name}> is .`);
    expect(r.stderr).not.toContain('No endpoint');
  });

  it('records delete of record .. under --json: refused, and the rows are all there', async () => {
    const table = server.table('customers').id;
    const before = await recordCount(table);
    const r = await gds(['records', 'delete', table, '..', '--yes', '--json']);
    expect(r.code, r.stderr).toBe(2);
    expect((JSON.parse(r.stderr.trim()) as { error: { code: string } }).error.code).toBe('invalid_argument');
    expect(await recordCount(table)).toBe(before);
  });
});
