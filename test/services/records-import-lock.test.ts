// The lock an import from stdin (or of one file) holds while it runs (services/records-import-lock.ts, over
// proper-lockfile): two such imports started at the same moment, a lock whose holder runs, and one whose
// holder was killed.
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImportClient } from '../../src/services/records-import.js';
import { importRecords } from '../../src/services/records-import.js';
import { holdState } from '../../src/services/records-import-lock.js';
import { stateFileFor } from '../../src/services/records-import-state.js';
import { RatePacer } from '../../src/client/rate-pacer.js';
import type { JsonBody } from '../../src/client/transport.js';

let state: string;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), 'gds-import-lock-'));
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

type Row = Record<string, unknown>;

/**
 * A service of one table (a required text column `sku`) whose import stores the rows; with `held`, each
 * import request waits for it first (the import still runs while that promise is pending).
 */
function service(held?: Promise<void>) {
  const stored: Row[] = [];
  const client = {
    records: {
      columns: async () => ({
        tableId: 'tbl_1',
        name: 'things',
        mode: 'MODE_B',
        columns: [{ name: 'sku', type: 'text', required: true }],
      }),
      import: async (_table: string, body: JsonBody) => {
        await held;
        const rows = (JSON.parse(Buffer.from(body.bytes).toString('utf8')) as { rows: Row[] }).rows;
        stored.push(...rows);
        return { inserted: rows.length, updated: 0 };
      },
    },
  } as unknown as ImportClient;
  return { client, stored };
}

const fromStdin = () => ({
  input: '-',
  key: 'sku',
  stdin: Readable.from([Buffer.from('{"sku":"A"}\n{"sku":"B"}\n')]),
  env: { XDG_STATE_HOME: state },
  pacer: new RatePacer(),
});

const imports = () => join(state, 'gds', 'imports');

describe('two imports from stdin into one table on one key', () => {
  it('started at the same moment: one runs, the other exits 6 import_running (a lock is never seen empty)', async () => {
    // The import that takes the lock sends nothing until the other has been refused: an import of two rows
    // with an in-process service would otherwise end before the other even looks at the lock.
    let oneRefused = () => {};
    const refusal = new Promise<void>((resolve) => (oneRefused = resolve));
    const a = service(refusal);
    const b = service(refusal);
    const run = (client: ImportClient) =>
      importRecords(client, 'tbl_1', fromStdin()).catch((error: unknown) => {
        oneRefused();
        throw error;
      });
    const results = await Promise.allSettled([run(a.client), run(b.client)]);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ exitCode: 6, code: 'import_running', details: { pid: process.pid } });
    expect([...a.stored, ...b.stored].map((r) => r.sku)).toEqual(['A', 'B']);
    expect(await readdir(imports())).toEqual([]);
  });

  it('a lock whose holder runs: refused at once, exit 6 import_running with its pid; nothing sent', async () => {
    const statePath = await plantLock(process.pid);
    const refused = service();
    await expect(importRecords(refused.client, 'tbl_1', fromStdin())).rejects.toMatchObject({
      exitCode: 6,
      code: 'import_running',
      details: { pid: process.pid, lock: `${statePath}.lock` },
    });
    expect(refused.stored).toEqual([]);
  });

  it("a killed import's lock (its process gone) is taken over: the next import runs", async () => {
    // pid above Linux's largest; the lock's last refresh long ago, as a killed holder leaves it
    await plantLock(2 ** 22 + 12_345, new Date(Date.now() - 60_000));
    const next = service();
    await importRecords(next.client, 'tbl_1', fromStdin());
    expect(next.stored.map((r) => r.sku)).toEqual(['A', 'B']);
    expect(await readdir(imports())).toEqual([]);
  });

  it('a holder that ends between the refusal and the read of its pid: the lock is taken again, not refused', async () => {
    const statePath = await plantLock(process.pid);
    let refusals = 0;
    const release = await holdState(
      statePath,
      'tbl_1',
      { input: '-', key: 'sku' },
      {
        // the holder ends at that moment, as a finished import does: its pid file first, then its lock
        refused: async () => {
          refusals += 1;
          await rm(`${statePath}.pid`);
          await rm(`${statePath}.lock`, { recursive: true });
        },
      },
    );
    expect(refusals).toBe(1);
    expect(await readFile(`${statePath}.pid`, 'utf8')).toBe(`${process.pid}\n`);
    await release();
    expect(await readdir(imports())).toEqual([]);
  });
});

/** The lock of an import from stdin into tbl_1 on sku, held by `pid` and last refreshed at `refreshed`. */
async function plantLock(pid: number, refreshed?: Date): Promise<string> {
  const statePath = await stateFileFor('tbl_1', fromStdin());
  await mkdir(imports(), { recursive: true });
  await mkdir(`${statePath}.lock`);
  await writeFile(`${statePath}.pid`, `${pid}\n`);
  if (refreshed !== undefined) await utimes(`${statePath}.lock`, refreshed, refreshed);
  return statePath;
}
