// `gds list` over more tables than one page (100 first, then 1,000 a page), in a real process: every table
// once, in the service's order, under --json, piped and on a terminal, and -L cut where asked. From the second page on the
// process runs with a lean V8 heap (output.ts, leanHeapForStreaming): what it prints must not change.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, ensureBuilt, runCli, runInTerminal } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { copyTable } from '../helpers/table-copies.js';

const COPIES = 1_450;
let server: TestServer;
let dir: string;
let expected: Array<{ id: string; name: string }>;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-list-pages-'));
  await copyTable(server, server.table('customers').id, COPIES, 'page');
  const all = await server.request('GET', '/api/tables', { token: server.user('OWNER').accessToken });
  expected = (all.body as { tables: Array<{ id: string; name: string }> }).tables;
});

afterAll(async () => {
  await server?.close();
});

/** The CLI as the workspace's owner, its configuration in this file's own folder. */
const gds = (args: string[]): Promise<CliResult> =>
  runCli(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    },
  });

describe('gds list over several pages', () => {
  it('--json: one line per table, every table once, in the service’s order', async () => {
    expect(expected.length).toBeGreaterThan(1_100); // three pages: 100, 1,000 and the rest
    const r = await gds(['list', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; name: string });
    expect(rows.map((row) => row.id)).toEqual(expected.map((t) => t.id));
  });

  it('piped: one tab-separated row per table, in order', async () => {
    const r = await gds(['list']);
    expect(r.code).toBe(0);
    const names = r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split('\t')[1]);
    expect(names).toEqual(expected.map((t) => t.name));
  });

  it('-L past the first page keeps exactly that many, and --jq .id answers every table', async () => {
    const few = await gds(['list', '-L', '1050', '--json']);
    expect(few.code).toBe(0);
    expect(
      few.stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: string }).id),
    ).toEqual(expected.slice(0, 1050).map((t) => t.id));
    const ids = await gds(['list', '--jq', '.id']);
    expect(ids.code).toBe(0);
    expect(ids.stdout.trimEnd().split('\n')).toEqual(expected.map((t) => t.id));
  });

  it('on a terminal: one header, then every table in order, each id whole, page after page', async () => {
    const onTerminal = async (args: string[]) => {
      const [command, argv] = cliCommand(args);
      const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
      const { result } = runInTerminal(line, {
        GDS_CONFIG_DIR: join(dir, 'config'),
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
        NO_COLOR: '1',
      });
      const r = await result;
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.split(/\r?\n/).filter((l) => l !== '');
    };
    const [header, ...rows] = await onTerminal(['list']);
    expect(header).toMatch(/^ID\s+NAME/);
    expect(rows.map((row) => row.split(/\s+/)[0])).toEqual(expected.map((t) => t.id));
    const few = await onTerminal(['list', '-L', '1050']);
    expect(few[0]).toBe(`Showing 1050 of ${expected.length} tables`);
    expect(few.slice(2).map((row) => row.split(/\s+/)[0])).toEqual(expected.slice(0, 1050).map((t) => t.id));
  });
});
