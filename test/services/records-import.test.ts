// importRecords against a stand-in service that fails where a test says: what the state file lets a later
// `--resume` do after the run stopped at a given point.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ImportClient } from '../../src/services/records-import.js';
import { importRecords } from '../../src/services/records-import.js';
import { RatePacer } from '../../src/client/rate-pacer.js';
import { NetworkError } from '../../src/client/errors.js';
import type { JsonBody } from '../../src/client/transport.js';

let state: string;

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), 'gds-import-state-'));
});

afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

/** A service whose import endpoint fails the first `failures` requests (a lost connection), then stores. */
function service(failures: number) {
  const stored: Array<Record<string, unknown>> = [];
  let failing = failures;
  const client = {
    records: {
      columns: async () => ({
        tableId: 'tbl_1',
        name: 'things',
        mode: 'MODE_B',
        columns: [{ name: 'sku', type: 'text', required: true }],
      }),
      import: async (_table: string, body: JsonBody) => {
        if (failing > 0) {
          failing -= 1;
          throw new NetworkError({
            failure: 'connection',
            code: 'ECONNRESET',
            method: 'POST',
            url: 'http://service/api/tables/tbl_1/import',
            reason: 'the connection was closed before the answer arrived',
            cause: null,
          });
        }
        const rows = (JSON.parse(Buffer.from(body.bytes).toString('utf8')) as { rows: object[] }).rows;
        stored.push(...(rows as Array<Record<string, unknown>>));
        return { inserted: rows.length, updated: 0 };
      },
    },
  } as unknown as ImportClient;
  return { client, stored };
}

const rows = ['{"sku":"A"}', '{"sku":"B"}', '{"sku":"C"}'].join('\n');
const fromStdin = (resume: boolean) => ({
  input: '-',
  key: 'sku',
  batchSize: 2,
  resume,
  stdin: Readable.from([Buffer.from(rows)]),
  env: { XDG_STATE_HOME: state },
  pacer: new RatePacer(),
});

describe('an import from stdin that stopped with its first batch in flight', () => {
  it('resumes with --resume (nothing to skip) instead of asking for --force', async () => {
    const first = service(1);
    await expect(importRecords(first.client, 'tbl_1', fromStdin(false))).rejects.toThrow(NetworkError);
    expect(first.stored).toEqual([]);
    const again = service(0);
    const result = await importRecords(again.client, 'tbl_1', fromStdin(true));
    expect(result).toMatchObject({ rows: 3, sent: 3, resumedFrom: 0 });
    expect(again.stored.map((r) => r.sku)).toEqual(['A', 'B', 'C']);
    expect(await readdir(join(state, 'gds', 'imports'))).toEqual([]);
  });
});
