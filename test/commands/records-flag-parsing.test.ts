// Flag parsing of `gds records …` apart from what the commands do (nothing is sent).
import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import RecordsCreate from '../../src/commands/records/create.js';
import RecordsDelete from '../../src/commands/records/delete.js';
import RecordsExport from '../../src/commands/records/export.js';
import RecordsGet from '../../src/commands/records/get.js';
import RecordsImport from '../../src/commands/records/import.js';
import { formatOf, importRecords, linesOf } from '../../src/services/records-import.js';
import RecordsList from '../../src/commands/records/list.js';
import RecordsUpdate from '../../src/commands/records/update.js';
import { grantedTables, parseRecordValues } from '../../src/services/records.js';
import { flagsOf, usageError } from './helpers/oclif-parse.js';

describe('records list', () => {
  it('takes a table, --limit 1-100, --search and --cursor', async () => {
    expect(await flagsOf(RecordsList, ['t', '-L', '5', '-s', 'ada', '--cursor', 'c1'])).toMatchObject({
      limit: 5,
      search: 'ada',
      cursor: 'c1',
    });
    expect(await usageError(RecordsList, [])).toContain('table');
    expect(await usageError(RecordsList, ['t', '--limit', '101'])).toContain('101');
    expect(await usageError(RecordsList, ['t', '--limit', '0'])).toContain('0');
  });
});

describe('records get, update, delete', () => {
  it('take a table and a record id', async () => {
    expect(await usageError(RecordsGet, ['t'])).toContain('id');
    expect(await usageError(RecordsUpdate, ['t'])).toContain('id');
    expect(await usageError(RecordsDelete, ['t'])).toContain('id');
    expect(await flagsOf(RecordsDelete, ['t', 'rec_1', '-y'])).toMatchObject({ yes: true });
  });

  it('--data and -f exclude each other', async () => {
    expect(await flagsOf(RecordsCreate, ['t', '-d', '{}'])).toMatchObject({ data: '{}' });
    expect(await flagsOf(RecordsUpdate, ['t', 'r', '-f', '-'])).toMatchObject({ file: '-' });
    expect(await usageError(RecordsCreate, ['t', '-d', '{}', '-f', 'x.json'])).toMatch(
      /cannot also be provided/,
    );
  });
});

describe('records export', () => {
  it('takes --format csv (no default: the command picks by the --output name); --resume and --force need --output and exclude each other', async () => {
    expect(await flagsOf(RecordsExport, ['t'])).not.toHaveProperty('format');
    expect(await flagsOf(RecordsExport, ['t', '--format', 'csv', '-o', 'f.csv', '--resume'])).toMatchObject({
      format: 'csv',
      output: 'f.csv',
      resume: true,
    });
    expect(await usageError(RecordsExport, ['t', '--format', 'xml'])).toContain('xml');
    expect(await usageError(RecordsExport, ['t', '--resume'])).toContain('output');
    expect(await usageError(RecordsExport, ['t', '--force'])).toContain('output');
    expect(await usageError(RecordsExport, ['t', '-o', 'f', '--force', '--resume'])).toMatch(
      /cannot also be provided/,
    );
  });
});

describe('records import', () => {
  it('needs -f; --key, --batch-size 1-10000, --format, --dry-run, --resume or --force', async () => {
    expect(await usageError(RecordsImport, ['t'])).toContain('file');
    expect(
      await flagsOf(RecordsImport, ['t', '-f', 'x.csv', '-k', 'sku', '--batch-size', '500', '--dry-run']),
    ).toMatchObject({ file: 'x.csv', key: 'sku', 'batch-size': 500, 'dry-run': true });
    expect(await flagsOf(RecordsImport, ['t', '-f', '-', '--format', 'json'])).toMatchObject({
      format: 'json',
    });
    expect(await usageError(RecordsImport, ['t', '-f', 'x', '--batch-size', '10001'])).toContain('10001');
    expect(await usageError(RecordsImport, ['t', '-f', 'x', '--format', 'xlsx'])).toContain('xlsx');
    expect(await usageError(RecordsImport, ['t', '-f', 'x', '--resume', '--force'])).toMatch(
      /cannot also be provided/,
    );
    expect(await usageError(RecordsImport, ['t', '-f', 'x', '--key', 'k', '--ignore-ids'])).toMatch(
      /cannot also be provided/,
    );
  });

  it('tells the format from the file name; stdin is NDJSON', () => {
    expect(formatOf('a.CSV')).toBe('csv');
    expect(formatOf('a.jsonl')).toBe('ndjson');
    expect(formatOf('a.ndjson')).toBe('ndjson');
    expect(formatOf('a.json')).toBe('json');
    expect(formatOf('-')).toBe('ndjson');
    expect(() => formatOf('a.txt')).toThrow(/Cannot tell the format of a.txt/);
  });

  it('a missing file is said to be missing (not a format it cannot tell), before anything is sent', async () => {
    const path = join(tmpdir(), 'gds-no-such-rows-file');
    const error = await importRecords({} as never, 'tbl_1', { input: path }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      exitCode: 2,
      code: 'input_unreadable',
      message: `Cannot read ${path}: no such file.`,
    });
  });
});

describe('a record given as JSON', () => {
  it('must be one object', () => {
    expect(parseRecordValues('{"a":1}', '--data')).toEqual({ a: 1 });
    expect(() => parseRecordValues('[1]', '--data')).toThrow(/not a JSON object/);
    expect(() => parseRecordValues('{', '--data')).toThrow(/not JSON/);
  });
});

describe('the tables a DATA-API token grants', () => {
  const jwt = (payload: object) => `h.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.s`;
  it('are read from its tbl claim; any other token grants none', () => {
    expect(grantedTables(jwt({ tbl: { crm: 'tbl_1', bad: 2 } }))).toEqual({ crm: 'tbl_1' });
    expect(grantedTables(jwt({ scope: 'x' }))).toEqual({});
    expect(grantedTables('cli_abcdef')).toEqual({});
    expect(grantedTables('a.!!!.b')).toEqual({});
    expect(grantedTables(undefined)).toEqual({});
  });
});

describe('the lines of an NDJSON input', () => {
  it('are split across chunks: CRLF and a character cut between two chunks, no final newline', async () => {
    const bytes = Buffer.from('{"a":"é"}\r\n\n{"b":2}\r\n{"c":3}', 'utf8');
    const chunks = [bytes.subarray(0, 8), bytes.subarray(8, 10), bytes.subarray(10, 21), bytes.subarray(21)];
    const lines: string[] = [];
    for await (const line of linesOf(Readable.from(chunks))) lines.push(line as string);
    expect(lines).toEqual(['{"a":"é"}', '', '{"b":2}', '{"c":3}']);
  });

  it('drops a byte order mark, and gives a line that is not UTF-8 as its bytes (no U+FFFD)', async () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"a":1}\r\n{"b":"caf', 'utf8'),
      Buffer.from([0xe9]),
      Buffer.from('"}\n{"c":"\uFFFD"}\n', 'utf8'),
    ]);
    const lines: unknown[] = [];
    for await (const line of linesOf(
      Readable.from([bytes.subarray(0, 2), bytes.subarray(2, 15), bytes.subarray(15)]),
    ))
      lines.push(line);
    expect(lines).toEqual([
      '{"a":1}',
      { bytes: Buffer.from([...Buffer.from('{"b":"caf'), 0xe9, ...Buffer.from('"}')]) },
      '{"c":"\uFFFD"}',
    ]);
  });

  it('give a line over the bound as its length only, its bytes dropped as they come, and go on after it', async () => {
    const chunks = ['{"a":1}\n{"b":', 'x'.repeat(10), 'y'.repeat(10), 'z\n{"c":3}\n', 'w'.repeat(30)].map(
      (t) => Buffer.from(t),
    );
    const lines: unknown[] = [];
    for await (const line of linesOf(Readable.from(chunks), 16)) lines.push(line);
    expect(lines).toEqual([
      '{"a":1}',
      { longBytes: 26, maxLineBytes: 16 },
      '{"c":3}',
      { longBytes: 30, maxLineBytes: 16 },
    ]);
  });
});
