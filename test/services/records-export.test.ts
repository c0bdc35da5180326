// exportRecords against a service that pages by the spec's numbered pages only (no nextCursor): it says so
// and writes nothing, instead of writing the first page and stopping on "cursor undefined".
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ExportClient } from '../../src/services/records-export.js';
import { exportRecords } from '../../src/services/records-export.js';
import { CliError } from '../../src/core/errors.js';
import type { RecordPage } from '../../src/contract/types.js';

describe('exportRecords from a service without cursors', () => {
  it('fails (exit 1, no_cursor_paging) before writing a row', async () => {
    const asked: unknown[] = [];
    const client = {
      records: {
        list: async (_tableId: string, query: unknown) => {
          asked.push(query);
          // The spec's page: records, no nextCursor (its envelope beyond them is not shown).
          return {
            records: Array.from({ length: 100 }, (_, i) => ({ id: `r${i}` })),
            page: 1,
            limit: 100,
          } as unknown as RecordPage;
        },
      },
    } as unknown as ExportClient;
    let written = '';
    const stdout = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString('utf8');
        done();
      },
    });
    const error = await exportRecords(client, 'tbl_1', { format: 'ndjson', stdout }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 1, code: 'no_cursor_paging' });
    expect((error as CliError).message).toContain('skips or repeats');
    expect(written).toBe('');
    expect(asked).toHaveLength(1);
  });
});
