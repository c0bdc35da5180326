// `gds records export -o FILE`: the file holds table rows, so it is the owner's alone (0600) whether it is new
// or replaced with --force, and so is the state file `FILE.gds-export` an interrupted export leaves. An export
// started with --force over an existing FILE and interrupted is resumed with --resume into that same FILE.
import { existsSync } from 'node:fs';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { testClient } from '../helpers/client.js';
import { tableReadToken, useScratchFolders } from '../helpers/export-files.js';
import { createModeBTable, fillRows } from '../helpers/records.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { ExportClient } from '../../src/services/records-export.js';
import { exportRecords } from '../../src/services/records-export.js';
import { startTestServer } from './test-server.js';

const ROWS = 250;
let server: TestServer;
let table: string;
let token: string;
const folders = useScratchFolders('gds-export-mode-');
const freshDir = folders.fresh;

beforeAll(async () => {
  server = await startTestServer({ rateLimit: 1_000_000 });
  table = await createModeBTable(server, 'export_mode');
  await fillRows(server, table, ROWS);
  token = await tableReadToken(server, 'export-mode', table);
});

afterAll(async () => {
  await server?.close();
});

const gds = (args: string[]) =>
  runInProcess(['records', 'export', table, ...args], {
    env: { SERVICE_TOKEN: token, SERVICE_API_URL: server.url },
  });

const mode = async (path: string) => (await stat(path)).mode & 0o777;

const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n').filter((l) => l !== '');

/** An export with --force into `file` that the connection drops after its first page of 100 rows. */
async function interruptedForceExport(file: string): Promise<void> {
  const client = testClient(server.url, token);
  let pages = 0;
  const dropping = {
    records: {
      list: (...args: Parameters<ExportClient['records']['list']>) => {
        pages += 1;
        if (pages > 1) return Promise.reject(new Error('connection reset'));
        return client.records.list(...args);
      },
    },
  } as unknown as ExportClient;
  await expect(
    exportRecords(dropping, table, { format: 'ndjson', output: file, force: true, pageSize: 100 }),
  ).rejects.toThrow('connection reset');
}

// The modes are gds's, whatever the runner's umask: under 077 a file created 0644 is 0600 all the same.
let umask: number;
beforeAll(() => {
  umask = process.umask(0);
});
afterAll(() => {
  process.umask(umask);
});

describe('gds records export -o FILE: the file and its state are 0600', () => {
  it('a new FILE is 0600', async () => {
    const file = join(await freshDir(), 'new.ndjson');
    const r = await gds(['-o', file]);
    expect(r.code).toBe(0);
    expect(await lines(file)).toHaveLength(ROWS);
    expect(await mode(file)).toBe(0o600);
  });

  it('a 0600 FILE replaced with --force stays 0600', async () => {
    const file = join(await freshDir(), 'kept.ndjson');
    await writeFile(file, 'old rows\n', { mode: 0o600 });
    await chmod(file, 0o600);
    const r = await gds(['-o', file, '--force']);
    expect(r.code).toBe(0);
    expect(await lines(file)).toHaveLength(ROWS);
    expect(await mode(file)).toBe(0o600);
  });

  it('an interrupted --force over an existing FILE leaves a 0600 state; --resume finishes that FILE', async () => {
    const folder = await freshDir();
    const file = join(folder, 'resumed.ndjson');
    await writeFile(file, 'old rows\n', { mode: 0o600 });
    await interruptedForceExport(file);
    // The old FILE is untouched until the export ends; the rows so far and the state wait beside it.
    expect(await readFile(file, 'utf8')).toBe('old rows\n');
    expect(await mode(`${file}.gds-export`)).toBe(0o600);
    expect(await mode(`${file}.part`)).toBe(0o600);

    const r = await gds(['-o', file, '--resume', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ rows: ROWS, resumedFrom: 100, output: file });
    const read = (await lines(file)).map((l) => JSON.parse(l) as { id: string });
    expect(new Set(read.map((row) => row.id)).size).toBe(ROWS);
    expect(await mode(file)).toBe(0o600);
    expect(existsSync(`${file}.gds-export`)).toBe(false);
    expect(await readdir(folder)).toEqual(['resumed.ndjson']);
  });
});
