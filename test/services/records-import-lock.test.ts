// The lock an import from stdin (or of one file) holds while it runs (services/records-import.ts holdState):
// two such imports started at the same moment, or one taking over a dead import's lock while another does.
// node:fs/promises is wrapped so that writing a file is what the system does, an open and then a write, with
// the moment between them long enough for another import to look at the file.
import type * as FsPromises from 'node:fs/promises';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ImportClient } from '../../src/services/records-import.js';
import { importRecords } from '../../src/services/records-import.js';
import { RatePacer } from '../../src/client/rate-pacer.js';
import type { JsonBody } from '../../src/client/transport.js';

/** Set by a test: what happens right after a lock is removed (another import taking it at that moment). */
let afterLockRemoved: ((lock: string) => Promise<void>) | undefined;

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof FsPromises>();
  const writeFile: typeof fs.writeFile = async (path, data, options) => {
    const flag = typeof options === 'object' && options !== null ? options.flag : undefined;
    if (flag !== 'wx' || typeof path !== 'string') return fs.writeFile(path, data, options);
    const handle = await fs.open(path, 'wx', 0o600);
    try {
      await delay(30);
      await handle.writeFile(data as string);
    } finally {
      await handle.close();
    }
  };
  const rm: typeof fs.rm = async (path, options) => {
    await fs.rm(path, options);
    if (typeof path === 'string' && path.endsWith('.lock')) await afterLockRemoved?.(path);
  };
  return { ...fs, default: { ...fs, writeFile, rm }, writeFile, rm };
});

let state: string;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), 'gds-import-lock-'));
  afterLockRemoved = undefined;
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

type Row = Record<string, unknown>;

/** A service of one table (a required text column `sku`) whose import stores the rows. */
function service() {
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
    const a = service();
    const b = service();
    const results = await Promise.allSettled([
      importRecords(a.client, 'tbl_1', fromStdin()),
      importRecords(b.client, 'tbl_1', fromStdin()),
    ]);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ exitCode: 6, code: 'import_running', details: { pid: process.pid } });
    expect([...a.stored, ...b.stored].map((r) => r.sku)).toEqual(['A', 'B']);
    expect(await readdir(imports())).toEqual([]);
  });

  it("taking over a killed one's lock while another import takes it: exit 6 import_running, not EEXIST", async () => {
    // Where the lock is: a first import removes it at its end.
    let lock = '';
    afterLockRemoved = async (path) => {
      lock = path;
    };
    await importRecords(service().client, 'tbl_1', fromStdin());
    expect(lock).not.toBe('');
    // A killed import's lock (its process gone: pid above Linux's largest), and another import that takes
    // it over right after this one removes it.
    await writeFile(lock, `${2 ** 22 + 12_345}\n`);
    afterLockRemoved = async (path) => {
      afterLockRemoved = undefined;
      await writeFile(path, `${process.pid}\n`);
    };
    const second = service();
    await expect(importRecords(second.client, 'tbl_1', fromStdin())).rejects.toMatchObject({
      exitCode: 6,
      code: 'import_running',
      details: { pid: process.pid },
    });
    expect(second.stored).toEqual([]);
  });
});
