// importRecords against a stand-in service that fails where a test says: what the state file lets a later
// `--resume` do after the run stopped at a given point.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImportClient } from '../../src/services/records-import.js';
import { importRecords } from '../../src/services/records-import.js';
import { RatePacer } from '../../src/client/rate-pacer.js';
import { ApiError, NetworkError } from '../../src/client/errors.js';
import type { JsonBody } from '../../src/client/transport.js';

let state: string;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), 'gds-import-state-'));
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

type Row = Record<string, unknown>;

/** What the stand-in service does with the `n`th write request (0-based): store it, or fail with this. */
type Failure = (n: number) => Error | undefined;

const lostConnection = () =>
  new NetworkError({
    failure: 'connection',
    code: 'ECONNRESET',
    method: 'POST',
    url: 'http://service/api/tables/tbl_1/import',
    reason: 'the connection was closed before the answer arrived',
    cause: null,
  });

const forbidden = () =>
  new ApiError({
    status: 403,
    code: 'missing_scope',
    message: 'This token lacks write permission on table tbl_1.',
    details: { requiredScope: 'tables:things:write' },
    method: 'POST',
    url: 'http://service/api/tables/tbl_1/bulk-update',
  });

/** A service of one table (a required text column `sku`): import and bulk-update store, unless `fail` says. */
function service(fail: Failure = () => undefined) {
  const stored: Array<Record<string, unknown>> = [];
  let requests = 0;
  const write = (body: JsonBody, field: 'rows' | 'records') => {
    const failure = fail(requests);
    requests += 1;
    if (failure !== undefined) throw failure;
    const items =
      (JSON.parse(Buffer.from(body.bytes).toString('utf8')) as Record<string, Row[]>)[field] ?? [];
    stored.push(...items.map((item) => (field === 'rows' ? item : (item.data as Row))));
    return items.length;
  };
  const client = {
    records: {
      columns: async () => ({
        tableId: 'tbl_1',
        name: 'things',
        mode: 'MODE_B',
        columns: [{ name: 'sku', type: 'text', required: true }],
      }),
      import: async (_table: string, body: JsonBody) => ({ inserted: write(body, 'rows'), updated: 0 }),
      bulkUpdate: async (_table: string, body: JsonBody) => ({
        created: write(body, 'records'),
        updated: 0,
        records: [],
      }),
    },
  } as unknown as ImportClient;
  return { client, stored };
}

const rows = ['{"sku":"A"}', '{"sku":"B"}', '{"sku":"C"}'].join('\n');
/** Rows A, B, C piped in; upserted on sku, or (`bulk`) created through bulk-update. */
const fromStdin = (resume: boolean, bulk = false) => ({
  input: '-',
  ...(bulk ? {} : { key: 'sku' }),
  batchSize: 2,
  resume,
  stdin: Readable.from([Buffer.from(rows)]),
  env: { XDG_STATE_HOME: state },
  pacer: new RatePacer(),
});

describe('an import from stdin that stopped with its first batch in flight', () => {
  it('resumes with --resume (nothing to skip) instead of asking for --force', async () => {
    const first = service((n) => (n === 0 ? lostConnection() : undefined));
    await expect(importRecords(first.client, 'tbl_1', fromStdin(false))).rejects.toThrow(NetworkError);
    expect(first.stored).toEqual([]);
    const again = service();
    const result = await importRecords(again.client, 'tbl_1', fromStdin(true));
    expect(result).toMatchObject({ rows: 3, sent: 3, resumedFrom: 0 });
    expect(again.stored.map((r) => r.sku)).toEqual(['A', 'B', 'C']);
    expect(await readdir(join(state, 'gds', 'imports'))).toEqual([]);
  });
});

describe('a relative XDG_STATE_HOME (invalid by the XDG spec)', () => {
  it('is ignored: the state file goes under ~/.local/state/gds/imports, not below the working folder', async () => {
    const fallback = join(homedir(), '.local', 'state', 'gds', 'imports');
    const cwd = process.cwd();
    process.chdir(state);
    try {
      const options = { ...fromStdin(false), env: { XDG_STATE_HOME: 'relative-state' } };
      await expect(importRecords(service(() => lostConnection()).client, 'tbl_1', options)).rejects.toThrow(
        NetworkError,
      );
      expect(await readdir(state)).toEqual([]);
      expect((await readdir(fallback)).filter((name) => name.endsWith('.json'))).toHaveLength(1);
    } finally {
      process.chdir(cwd);
      await rm(fallback, { recursive: true, force: true });
    }
  });
});

describe('a batch the service refused with an answer (403 here), written by no one', () => {
  it('at the first batch: leaves no state, so the same command run again (token fixed) just works', async () => {
    const first = service(() => forbidden());
    await expect(importRecords(first.client, 'tbl_1', fromStdin(false, true))).rejects.toThrow(ApiError);
    expect(await readdir(join(state, 'gds', 'imports'))).toEqual([]);
    const again = service();
    expect(await importRecords(again.client, 'tbl_1', fromStdin(false, true))).toMatchObject({
      rows: 3,
      inserted: 3,
      resumedFrom: null,
    });
    expect(again.stored.map((r) => r.sku)).toEqual(['A', 'B', 'C']);
  });

  it('after one was acknowledged: --resume sends the refused creations again, not "in doubt"', async () => {
    const first = service((n) => (n === 1 ? forbidden() : undefined));
    await expect(importRecords(first.client, 'tbl_1', fromStdin(false, true))).rejects.toThrow(ApiError);
    expect(first.stored.map((r) => r.sku)).toEqual(['A', 'B']);
    const again = service();
    expect(await importRecords(again.client, 'tbl_1', fromStdin(true, true))).toMatchObject({
      rows: 3,
      inserted: 3,
      resumedFrom: 2,
    });
    expect([...first.stored, ...again.stored].map((r) => r.sku)).toEqual(['A', 'B', 'C']);
  });
});

describe('a Mode A table (rows read from the warehouse, never written)', () => {
  it('is refused before a row is read, --dry-run too (exit 7, read_only_table), and leaves no state', async () => {
    const modeA = service();
    const client = {
      records: {
        ...modeA.client.records,
        columns: async () => ({ ...(await modeA.client.records.columns('tbl_1')), mode: 'MODE_A' }),
      },
    } as unknown as ImportClient;
    for (const dryRun of [true, false]) {
      await expect(importRecords(client, 'tbl_1', { ...fromStdin(false), dryRun })).rejects.toMatchObject({
        exitCode: 7,
        code: 'read_only_table',
      });
    }
    expect(modeA.stored).toEqual([]);
    expect(await readdir(join(state, 'gds', 'imports')).catch(() => [])).toEqual([]);
  });
});
