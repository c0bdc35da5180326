// `gds records import`, and `gds records export | gds records import` against the reference server (gds in
// the test process, runInProcess, but for the pipe and the runs that are killed): a 10,000-row table of hard
// values round-trips exactly (NDJSON through a pipe, CSV through a file, bulk creation); a SIGKILL in the middle
// of an import (of its first 5,000 rows) and `--resume` leave every row once on the server; rows that do not
// fit are reported one by one while the others go in; --dry-run sends nothing.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { createModeBTable, fillRows, storedRows, wideRow } from '../helpers/records.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startTestServer } from './test-server.js';
import { passThrough } from '../helpers/pass-through.js';

const ROWS = 10_000;
let server: TestServer;
let source: string;
let dir: string;
let env: Record<string, string>;
const targets: Record<string, string> = {};

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ rateLimit: 1_000_000 }), ensureBuilt()]);
  source = await createModeBTable(server, 'wide_source');
  await fillRows(server, source, ROWS);
  for (const name of [
    'copy_pipe',
    'copy_csv',
    'copy_bulk',
    'copy_killed',
    'copy_errors',
    'copy_dry',
    'copy_refused',
    'copy_stdin',
  ]) {
    targets[name] = await createModeBTable(server, name);
  }
  const issued = await server.issueToken('OWNER', {
    name: 'roundtrip',
    env: 'dev',
    scopes: [source, ...Object.values(targets)].map((tableId) => ({
      tableId,
      permissions: ['read', 'write'] as Array<'read' | 'write'>,
    })),
  });
  dir = await mkdtemp(join(tmpdir(), 'gds-import-'));
  env = {
    SERVICE_TOKEN: issued.tokens.accessToken,
    SERVICE_API_URL: server.url,
    XDG_STATE_HOME: join(dir, 'state'),
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await server.close();
});

const gds = (args: string[], input?: string) =>
  runInProcess(['records', ...args], { env, ...(input === undefined ? {} : { input }) });

const dataOf = async (tableId: string) => (await storedRows(server, tableId)).map((r) => r.data);

// The source table never changes: its rows are read, and exported as NDJSON, once for every test that needs them.
let sourceRows: Promise<Array<Record<string, unknown>>> | undefined;
const sourceData = () => (sourceRows ??= dataOf(source));
let sourceExport: Promise<string> | undefined;
/** wide_source exported by `gds records export -o` into a file (the file's path). */
const exportedSource = () =>
  (sourceExport ??= (async () => {
    const file = join(dir, 'wide.ndjson');
    const r = await gds(['export', 'wide_source', '-o', file]);
    expect(r.code, r.stderr).toBe(0);
    return file;
  })());

// The imports that are killed and resumed read the first half of wide_source: the kill still lands with as many
// batches acknowledged before it (2,500 rows) and as many left after, at half the rows to write.
const KILLED_ROWS = 5_000;
let halfExport: Promise<string> | undefined;
/** The first KILLED_ROWS lines of exportedSource(), in a file of their own (the file's path). */
const exportedHalf = () =>
  (halfExport ??= (async () => {
    const lines = (await readFile(await exportedSource(), 'utf8')).split('\n');
    const file = join(dir, 'half.ndjson');
    await writeFile(file, `${lines.slice(0, KILLED_ROWS).join('\n')}\n`);
    return file;
  })());
const halfData = async () => (await sourceData()).slice(0, KILLED_ROWS);

/**
 * The lock a killed import leaves behind is taken over once it is stale, 5 s after its holder last refreshed it
 * (services/records-import-lock.ts): dated here as it is once that time has passed, so that the next import
 * takes it at once. records-input.test.ts waits it out in real time (an import killed while running).
 */
async function ageLocks(stateDir: string): Promise<number> {
  const refreshed = new Date(Date.now() - 60_000);
  const locks = (await readdir(stateDir)).filter((name) => name.endsWith('.lock'));
  for (const name of locks) await utimes(join(stateDir, name), refreshed, refreshed);
  return locks.length;
}

/** A shell line running the CLI under test with these arguments (every word quoted). */
const shellWords = (args: string[]) => {
  const [command, argv] = cliCommand(args);
  return [command, ...argv].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
};

/**
 * A proxy to the server that forwards the first `writes` requests that write (every request but GET) and
 * holds the next one unanswered, never forwarded: a process killed while it waits on that request leaves no
 * write in flight at the server, so what the server holds after the kill is all it will ever get from it.
 */
async function holdingProxy(writes: number) {
  let forwarded = 0;
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const target = new URL(server.url);
  const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' && forwarded >= writes) {
      held();
      return;
    }
    if (req.method !== 'GET') forwarded += 1;
    passThrough(server.url, req, res, { onError: () => res.destroy() });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    /** Resolves once a write is held. */
    holding,
    close: () => {
      proxy.closeAllConnections();
      return new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

describe('gds records export | gds records import', () => {
  it('round-trips 10,000 rows exactly through a pipe (NDJSON, upsert on a key)', async () => {
    const line = `${shellWords(['records', 'export', 'wide_source'])} | ${shellWords(['records', 'import', 'copy_pipe', '-f', '-', '--key', 'sku'])}`;
    const child = spawn('sh', ['-c', line], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Imported 10,000 rows of <stdin>');
    expect(await dataOf(targets.copy_pipe ?? '')).toEqual(await sourceData());
  }, 300_000);

  it('round-trips through a CSV file, and through bulk creation without a key', async () => {
    const file = join(dir, 'wide.csv');
    expect((await gds(['export', 'wide_source', '--format', 'csv', '-o', file])).code).toBe(0);
    const csv = await gds(['import', 'copy_csv', '-f', file, '--key', 'sku', '--json']);
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('');
    const summary = JSON.parse(csv.stderr.trim()).summary;
    expect(summary).toMatchObject({
      rows: ROWS,
      sent: ROWS,
      inserted: ROWS,
      updated: 0,
      refused: 0,
      batches: 1,
    });
    expect(await dataOf(targets.copy_csv ?? '')).toEqual(await sourceData());

    const ndjson = await exportedSource();
    const bulk = await gds(['import', 'copy_bulk', '-f', ndjson, '--ignore-ids', '--json']);
    expect(bulk.code, bulk.stderr).toBe(0);
    expect(JSON.parse(bulk.stderr.trim()).summary).toMatchObject({
      mode: 'bulk',
      inserted: ROWS,
      batches: 10,
    });
    expect(await dataOf(targets.copy_bulk ?? '')).toEqual(await sourceData());

    // Imported again on its key, the same file changes nothing and adds nothing.
    const again = await gds(['import', 'copy_csv', '-f', file, '--key', 'sku', '--json']);
    expect(JSON.parse(again.stderr.trim()).summary).toMatchObject({ inserted: 0, updated: ROWS });
    expect(await dataOf(targets.copy_csv ?? '')).toEqual(await sourceData());
  }, 300_000);
});

describe('an import killed and resumed', () => {
  it('leaves every row once on the server: the acknowledged batches skipped, the one in flight sent again', async () => {
    const file = await exportedHalf();
    const args = ['records', 'import', 'copy_killed', '-f', file, '--key', 'sku', '--batch-size', '250'];
    const [command, argv] = cliCommand(args);
    const child = spawn(command, argv, { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = collect(child);
    const stateDir = join(dir, 'state', 'gds', 'imports');
    for (;;) {
      const names = await readdir(stateDir).catch(() => [] as string[]);
      const name = names.find((n) => n.endsWith('.json'));
      const state =
        name === undefined ? null : await readFile(join(stateDir, name), 'utf8').then(JSON.parse, () => null);
      if (state !== null && state.done >= 2_500) break;
      if (child.exitCode !== null) throw new Error('the import ended before it could be killed');
      await sleep(5);
    }
    child.kill('SIGKILL');
    expect((await ended).signal).toBe('SIGKILL');
    // A kill can land between writing the state's temporary file and renaming it over the state: plant
    // such a leftover so that the run below has to clear it, whenever the kill happened to land.
    const stateName = (await readdir(stateDir)).find((n) => n.endsWith('.json'));
    expect(stateName).toBeDefined();
    await writeFile(join(stateDir, `${stateName}.0badf00d.tmp`), '{"version":1,"do');
    expect(await ageLocks(stateDir)).toBe(1);
    const partial = (await dataOf(targets.copy_killed ?? '')).length;
    expect(partial).toBeGreaterThanOrEqual(2_500);
    expect(partial).toBeLessThan(KILLED_ROWS);

    const fresh = await gds([
      'import',
      'copy_killed',
      '-f',
      file,
      '--key',
      'sku',
      '--batch-size',
      '250',
      '--json',
    ]);
    expect(fresh.code).toBe(2);
    expect(JSON.parse(fresh.stderr.trim()).error.code).toBe('import_interrupted');

    const resumed = await gds([
      'import',
      'copy_killed',
      '-f',
      file,
      '--key',
      'sku',
      '--batch-size',
      '250',
      '--resume',
      '--json',
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stderr.trim()).summary;
    expect(summary.resumedFrom).toBeGreaterThanOrEqual(2_500);
    expect(summary.sent).toBeGreaterThanOrEqual(KILLED_ROWS);
    expect(await dataOf(targets.copy_killed ?? '')).toEqual(await halfData());
    expect(await readdir(stateDir)).toEqual([]);
  }, 300_000);
});

describe('rows that do not fit', () => {
  const lines = [
    JSON.stringify(wideRow(1)),
    JSON.stringify({ ...wideRow(2), qty: 'many' }),
    '{"sku": "SKU-X", "label": "no',
    JSON.stringify({ ...wideRow(3), colour: 'red' }),
    '',
    JSON.stringify({ label: 'no key' }),
    '[1, 2]',
    JSON.stringify(wideRow(4)),
  ];

  it('are reported one NDJSON line each on stdout under --json, the others imported, exit 7', async () => {
    const file = join(dir, 'errors.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await gds(['import', 'copy_errors', '-f', file, '--key', 'sku', '--json']);
    expect(r.code).toBe(7);
    const refused = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(refused.map((e) => [e.row, e.line, e.error.code])).toEqual([
      [2, 2, 'invalid_record'],
      [3, 3, 'invalid_json'],
      [4, 4, 'invalid_record'],
      [5, 6, 'missing_key'],
      [6, 7, 'invalid_record'],
    ]);
    expect(refused[0].error.message).toContain('qty');
    expect(refused[2].error.message).toContain('colour');
    expect(await dataOf(targets.copy_errors ?? '')).toEqual([wideRow(1), wideRow(4)]);
    const stderr = r.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(stderr[0].summary).toMatchObject({ rows: 7, sent: 2, refused: 5 });
    expect(stderr[1].error.code).toBe('rows_refused');
  });

  it('--dry-run reports them and sends nothing', async () => {
    const file = join(dir, 'errors.ndjson');
    const r = await gds(['import', 'copy_dry', '-f', file, '--key', 'sku', '--dry-run']);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain('row 2 (line 2): The row does not fit table copy_dry');
    expect(r.stderr).toContain('Checked 7 rows');
    expect(await dataOf(targets.copy_dry ?? '')).toEqual([]);
    const unknown = await gds(
      ['import', 'copy_dry', '-f', '-', '--format', 'csv', '--dry-run'],
      'sku,shoe\nA,1\n',
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('shoe');
  });
});

describe('a row the service refuses', () => {
  it('is reported and left out of its batch, the rows before and after it in the same request go in', async () => {
    // Without --key: bulk-update, one batch; row 3 updates a record that does not exist (404 from the
    // service, which no check before sending sees): the batch is sent again without it.
    const rows = [wideRow(1), wideRow(2), { id: 'rec_missing', ...wideRow(3) }, wideRow(4), wideRow(5)];
    const file = join(dir, 'refused.ndjson');
    await writeFile(file, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
    const r = await gds(['import', 'copy_refused', '-f', file, '--json']);
    expect(r.code).toBe(7);
    const refused = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(refused.map((e) => [e.row, e.line, e.error.code])).toEqual([[3, 3, 'record_not_found']]);
    expect(
      (await dataOf(targets.copy_refused ?? '')).sort((a, b) => String(a.sku).localeCompare(String(b.sku))),
    ).toEqual([wideRow(1), wideRow(2), wideRow(4), wideRow(5)]);
    const stderr = r.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    // Said once, while there is time to stop: rows of another table's ids would cost a request each.
    expect(stderr[0].warning.message).toContain('updates record rec_missing');
    expect(stderr[0].warning.message).toContain('--ignore-ids');
    const summary = stderr.find((line) => line.summary !== undefined);
    expect(summary.summary).toMatchObject({
      rows: 5,
      sent: 4,
      inserted: 4,
      refused: 1,
      batches: 1,
      requests: 3,
    });
  });
});

describe('an import from stdin killed and resumed', () => {
  it('skips the acknowledged rows only when the same rows are piped in again (checked by digest), leaving every row once', async () => {
    const text = await readFile(await exportedHalf(), 'utf8');
    const stdinEnv = { ...env, XDG_STATE_HOME: join(dir, 'state-stdin') };
    const stateDir = join(dir, 'state-stdin', 'gds', 'imports');
    const args = ['import', 'copy_stdin', '-f', '-', '--key', 'sku', '--batch-size', '250'];
    const importing = (more: string[], input: string) =>
      runInProcess(['records', ...args, ...more, '--json'], { env: stdinEnv, input });
    // The killed process talks to the server through a proxy that holds its eleventh batch: killed while it
    // waits on that one, it has no batch in flight, and the rows on the server stay as they are after it.
    const proxy = await holdingProxy(10);
    const [command, argv] = cliCommand(['records', ...args]);
    const child = spawn(command, argv, {
      env: cliEnv({ ...stdinEnv, SERVICE_API_URL: proxy.url }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.on('error', () => undefined); // killed while its stdin is still being written
    child.stdin.end(text);
    const ended = collect(child);
    let holding = false;
    void proxy.holding.then(() => (holding = true));
    for (;;) {
      const names = await readdir(stateDir).catch(() => [] as string[]);
      const name = names.find((n) => n.endsWith('.json'));
      const state =
        name === undefined ? null : await readFile(join(stateDir, name), 'utf8').then(JSON.parse, () => null);
      if (holding && state !== null && state.done >= 2_500) break;
      if (child.exitCode !== null) {
        throw new Error(`the import ended before it could be killed: ${(await ended).stderr}`);
      }
      await sleep(5);
    }
    child.kill('SIGKILL');
    expect((await ended).signal).toBe('SIGKILL');
    await proxy.close();
    expect(await ageLocks(stateDir)).toBe(1);
    const partial = (await dataOf(targets.copy_stdin ?? '')).length;
    expect(partial).toBeGreaterThanOrEqual(2_500);
    expect(partial).toBeLessThan(KILLED_ROWS);

    // Without --resume it says an import was interrupted.
    const fresh = await importing([], text);
    expect(fresh.code).toBe(2);
    expect(JSON.parse(fresh.stderr.trim().split('\n').at(-1) ?? '').error.code).toBe('import_interrupted');

    // Other rows (the first one changed), or fewer than it had read: refused, and nothing sent.
    const lines = text.split('\n');
    const changed = [JSON.stringify({ ...JSON.parse(lines[0] ?? ''), label: 'changed' }), ...lines.slice(1)];
    for (const other of [changed.join('\n'), `${lines.slice(0, 100).join('\n')}\n`]) {
      const refused = await importing(['--resume'], other);
      expect(refused.code, refused.stderr).toBe(2);
      const error = JSON.parse(refused.stderr.trim().split('\n').at(-1) ?? '').error;
      expect(error.code).toBe('resume_input_differs');
      expect(error.message).toContain('Nothing was sent');
      expect((await dataOf(targets.copy_stdin ?? '')).length).toBe(partial);
    }

    // The same rows: a warning says what is checked, the acknowledged rows are skipped, every row is there once.
    const resumed = await importing(['--resume'], text);
    expect(resumed.code, resumed.stderr).toBe(0);
    const said = resumed.stderr
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(said[0].warning.message).toContain('must be the interrupted run');
    const summary = said.at(-1).summary;
    expect(summary.resumedFrom).toBeGreaterThanOrEqual(2_500);
    expect(summary.rows).toBe(KILLED_ROWS);
    expect(await dataOf(targets.copy_stdin ?? '')).toEqual(await halfData());
    expect(await readdir(stateDir)).toEqual([]);
  }, 300_000);
});
