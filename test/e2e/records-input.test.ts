// `gds records import` and `export` on the files a data team really has, run in the test process against the
// reference server (real processes where an import is stopped, killed or still running): bytes that are not
// UTF-8 (a Latin-1 export), byte order marks (Excel, PowerShell), a CSV header with a column twice or
// unnamed, blank lines at the end, quoted line breaks before a bad row (its line number), broken quoting, a
// row bigger than any request; and an export that fails at once.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { createModeBTable, storedRows, WIDE_COLUMNS } from '../helpers/records.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

let server: TestServer;
let dir: string;
let env: Record<string, string>;
const tables: Record<string, string> = {};
const NAMES = [
  'latin_csv',
  'latin_ndjson',
  'latin_json',
  'bom',
  'header',
  'blank',
  'lines',
  'quotes',
  'huge',
  'together',
  'roundtrip',
];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ rateLimit: 1_000_000 }), ensureBuilt()]);
  for (const name of NAMES) tables[name] = await createModeBTable(server, name);
  const issued = await server.issueToken('OWNER', {
    name: 'input',
    env: 'dev',
    scopes: Object.values(tables).map((tableId) => ({
      tableId,
      permissions: ['read', 'write'] as Array<'read' | 'write'>,
    })),
  });
  dir = await mkdtemp(join(tmpdir(), 'gds-input-'));
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

const gds = (args: string[], options: { cwd?: string; input?: string } = {}) =>
  runInProcess(['records', ...args], { env, ...options });
const dataOf = async (name: string) => (await storedRows(server, tables[name] ?? '')).map((r) => r.data);
const file = async (name: string, ...parts: Array<string | number[]>) => {
  const path = join(dir, name);
  await writeFile(
    path,
    Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p)))),
  );
  return path;
};
const ndjson = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
const BOM = [0xef, 0xbb, 0xbf];
const E_ACUTE_LATIN1 = [0xe9];

describe('bytes that are not UTF-8', () => {
  it('refuse their CSV row (named, exit 7) instead of storing U+FFFD; the other rows go in', async () => {
    const path = await file('latin1.csv', 'sku,label\r\nA1,caf', E_ACUTE_LATIN1, '\r\nA2,"tea, ok"\r\n');
    const r = await gds(['import', 'latin_csv', '-f', path, '--key', 'sku', '--json']);
    expect(r.code, r.stderr).toBe(7);
    expect(ndjson(r.stdout).map((e) => [e.row, e.line, e.error.code])).toEqual([[1, 2, 'input_not_utf8']]);
    expect(ndjson(r.stdout)[0].error.message).toContain('0xE9');
    expect(await dataOf('latin_csv')).toEqual([{ sku: 'A2', label: 'tea, ok' }]);
  });

  it('refuse their NDJSON row the same way', async () => {
    const path = await file(
      'latin1.ndjson',
      '{"sku":"N1","label":"caf',
      E_ACUTE_LATIN1,
      '"}\n{"sku":"N2"}\n',
    );
    const r = await gds(['import', 'latin_ndjson', '-f', path, '--key', 'sku', '--json']);
    expect(r.code, r.stderr).toBe(7);
    expect(ndjson(r.stdout).map((e) => [e.row, e.line, e.error.code])).toEqual([[1, 1, 'input_not_utf8']]);
    expect(await dataOf('latin_ndjson')).toEqual([{ sku: 'N2' }]);
  });

  it('are no such bytes in a UTF-16 CSV with its byte order mark (Excel’s “Unicode text”): it is read as such', async () => {
    const text = Buffer.from('sku,label\r\nW1,café\r\n', 'utf16le');
    const path = await file('utf16.csv', [0xff, 0xfe], [...text]);
    const r = await gds(['import', 'latin_csv', '-f', path, '--key', 'sku']);
    expect(r.code, r.stderr).toBe(0);
    expect(await dataOf('latin_csv')).toContainEqual({ sku: 'W1', label: 'café' });
  });

  it('refuse a JSON array whole (exit 2), nothing sent', async () => {
    const path = await file('latin1.json', '[{"sku":"J1","label":"caf', E_ACUTE_LATIN1, '"},{"sku":"J2"}]');
    const r = await gds(['import', 'latin_json', '-f', path, '--key', 'sku']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is not UTF-8');
    expect(await dataOf('latin_json')).toEqual([]);
  });
});

describe('a byte order mark', () => {
  it('is dropped before the first NDJSON line and before a JSON array, as before a CSV header', async () => {
    const rows = await file('bom.ndjson', BOM, '{"sku":"B1"}\r\n{"sku":"B2"}\r\n');
    expect((await gds(['import', 'bom', '-f', rows, '--key', 'sku'])).code).toBe(0);
    const array = await file('bom.json', BOM, '[{"sku":"B3"}]');
    expect((await gds(['import', 'bom', '-f', array, '--key', 'sku'])).code).toBe(0);
    const csv = await file('bom.csv', BOM, 'sku,label\r\nB4,x\r\n');
    expect((await gds(['import', 'bom', '-f', csv, '--key', 'sku'])).code).toBe(0);
    const one = await file('record.json', BOM, '{"sku":"B5"}');
    const created = await gds(['create', 'bom', '-f', one]);
    expect(created.code, created.stderr).toBe(0);
    expect(await dataOf('bom')).toEqual([
      { sku: 'B1' },
      { sku: 'B2' },
      { sku: 'B3' },
      { sku: 'B4', label: 'x' },
      { sku: 'B5' },
    ]);
  });
});

describe('a record read with get --json, edited, and given to update -f', () => {
  it('updates it: the id of the record itself is no column to change', async () => {
    const id = (await storedRows(server, tables.bom ?? '')).find((r) => r.data.sku === 'B5')?.id ?? '';
    const got = await gds(['get', 'bom', id, '--json']);
    expect(got.code, got.stderr).toBe(0);
    const edited = { ...JSON.parse(got.stdout), label: 'edited' };
    const path = await file('edited.json', JSON.stringify(edited));
    const r = await gds(['update', 'bom', id, '-f', path]);
    expect(r.code, r.stderr).toBe(0);
    expect((await dataOf('bom')).at(-1)).toEqual({ sku: 'B5', label: 'edited' });
  });
});

describe('a CSV header', () => {
  it('naming a column twice is refused (exit 2), not read as its last value; nothing sent', async () => {
    const path = await file('twice.csv', 'sku,label,label\nH1,first,second\n');
    const r = await gds(['import', 'header', '-f', path, '--key', 'sku', '--json']);
    expect(r.code).toBe(2);
    const error = ndjson(r.stderr).at(-1).error;
    expect(error).toMatchObject({ code: 'duplicate_columns', details: { duplicates: ['label'] } });
    expect(await dataOf('header')).toEqual([]);
  });

  it('with an unnamed column is refused, saying which', async () => {
    const path = await file('unnamed.csv', 'sku,,label\nH2,x,y\n');
    const r = await gds(['import', 'header', '-f', path, '--key', 'sku']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no name for column 2');
    expect(await dataOf('header')).toEqual([]);
  });
});

describe('lines of a CSV', () => {
  it('blank ones (at the end, as editors leave them) are no rows', async () => {
    const path = await file('blank.csv', 'sku,label\nL1,a\n\nL2,b\n\n\n');
    const r = await gds(['import', 'blank', '-f', path, '--key', 'sku', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(ndjson(r.stderr)[0].summary).toMatchObject({ rows: 2, sent: 2, refused: 0 });
    expect(await dataOf('blank')).toEqual([
      { sku: 'L1', label: 'a' },
      { sku: 'L2', label: 'b' },
    ]);
  });

  it('are counted as an editor counts them: a refused row names the line it starts on', async () => {
    const path = await file(
      'lines.csv',
      'sku,qty\r\n' + // line 1
        'M1,"1"\r\n' + // line 2
        'M2,"x\r\ny"\r\n' + // lines 3-4: refused, starts on 3
        'M3,2\r\n' + // line 5
        '\r\n' + // line 6: blank
        'M4,"a\nb\nc"\r\n' + // lines 7-9: refused, starts on 7
        'M5,z\r\n', // line 10: refused
    );
    const r = await gds(['import', 'lines', '-f', path, '--key', 'sku', '--json']);
    expect(r.code).toBe(7);
    expect(ndjson(r.stdout).map((e) => [e.row, e.line])).toEqual([
      [2, 3],
      [4, 7],
      [5, 10],
    ]);
  });

  it('that no reading makes sense of (a bare quote) are a usage error naming the line, not exit 1', async () => {
    const path = await file('quotes.csv', 'sku,label\nQ1,ok\nQ2,5" screen\n');
    const r = await gds(['import', 'quotes', '-f', path, '--key', 'sku', '--json']);
    expect(r.code).toBe(2);
    const error = ndjson(r.stderr).at(-1).error;
    expect(error.code).toBe('invalid_csv');
    expect(error.message).toContain('line 3');
  });
});

describe('an empty input', () => {
  it('an empty CSV or JSON file is exit 2 saying so, nothing sent', async () => {
    for (const name of ['empty.csv', 'empty.json']) {
      const r = await gds(['import', 'blank', '-f', await file(name, '\n\n'), '--key', 'sku', '--json']);
      expect(r.code, name).toBe(2);
      expect(ndjson(r.stderr)[0]).toMatchObject({
        error: {
          code: 'empty_input',
          message: expect.stringContaining('is empty: there are no rows to import.'),
        },
      });
    }
    // Nothing kept to resume: the next import from stdin starts afresh.
    const next = await gds(['import', 'blank', '-f', '-', '--key', 'sku'], {
      input: '{"sku":"E1","label":"e"}\n',
    });
    expect(next.code, next.stderr).toBe(0);
  });

  it("a CSV header alone, a JSON [] or empty NDJSON (an empty table's export) is no rows: exit 0", async () => {
    const header = await gds(['import', 'blank', '-f', await file('header-only.csv', 'sku,label\n')]);
    expect(header.code, header.stderr).toBe(0);
    const none = await gds(['import', 'blank', '-f', '-', '--format', 'json'], { input: '[]' });
    expect(none.code, none.stderr).toBe(0);
    const piped = await gds(['import', 'blank', '-f', '-'], { input: '' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain('Imported 0 rows');
  });
});

describe('a row bigger than a request', () => {
  it('is refused by itself (exit 7) instead of failing the import with the service’s 413', async () => {
    const big = 'x'.repeat(26 * 1024 * 1024);
    const path = await file('huge.ndjson', `{"sku":"G1"}\n{"sku":"G2","label":"${big}"}\n{"sku":"G3"}\n`);
    const r = await gds(['import', 'huge', '-f', path, '--key', 'sku', '--json']);
    expect(r.code, r.stderr).toBe(7);
    expect(ndjson(r.stdout).map((e) => [e.row, e.error.code])).toEqual([[2, 'row_too_large']]);
    expect(await dataOf('huge')).toEqual([{ sku: 'G1' }, { sku: 'G3' }]);
  });

  it('is a line never held whole: one that goes on (no line break) is refused by its length, the rows after it go in', async () => {
    // 40 MB of one line that is not even JSON: read whole, it was held in memory (a line that never ended
    // grew until no string could hold it: exit 1 "Cannot create a string longer than …", at 2 GB resident).
    const endless = 'y'.repeat(40_000_000);
    const r = await gds(['import', 'huge', '-f', '-', '--key', 'sku', '--json'], {
      input: `{"sku":"L1"}\n${endless}\n{"sku":"L3"}\n`,
    });
    expect(r.code, r.stderr).toBe(7);
    expect(ndjson(r.stdout).map((e) => [e.row, e.line, e.error.code, e.error.message])).toEqual([
      [
        2,
        2,
        'row_too_large',
        'The line is 40,000,000 bytes; a request to the service carries at most 26,214,400, so gds did not read it.',
      ],
    ]);
    expect((await dataOf('huge')).filter((row) => String(row.sku).startsWith('L'))).toEqual([
      { sku: 'L1' },
      { sku: 'L3' },
    ]);
  });

  it('is a CSV record: a quote left open over the limit stops the import there (exit 2), not at the end of the file', async () => {
    const open = `sku,label\nC1,ok\nC2,"${'z'.repeat(30_000_000)}`;
    const r = await gds(
      ['import', 'huge', '-f', '-', '--format', 'csv', '--key', 'sku', '--dry-run', '--json'],
      {
        input: open,
      },
    );
    expect(r.code, r.stderr).toBe(2);
    expect(ndjson(r.stderr).at(-1).error).toMatchObject({
      code: 'row_too_large',
      message:
        'Row 2 of the CSV is over 26,214,400 bytes, the most a request to the service carries: gds stopped reading there.',
      details: { row: 2, limit: 26_214_400 },
    });
  });
});

describe('gds records export --output', () => {
  it('named .csv gets CSV, which import reads back by the same name (NDJSON in a .csv file did not)', async () => {
    const path = join(await mkdtemp(join(dir, 'cwd-')), 'rows.csv');
    const r = await gds(['export', 'bom', '-o', path]);
    expect(r.code, r.stderr).toBe(0);
    const imported = await gds(['import', 'roundtrip', '-f', path, '--ignore-ids']);
    expect(imported.code, imported.stderr).toBe(0);
    // CSV has no absent value: a column a record lacks comes back null.
    const nulls = Object.fromEntries(WIDE_COLUMNS.map((c) => [c.name, null]));
    expect(await dataOf('roundtrip')).toEqual((await dataOf('bom')).map((data) => ({ ...nulls, ...data })));
    const ndjsonPath = join(dir, 'rows-as-ndjson.csv');
    expect((await gds(['export', 'bom', '-o', ndjsonPath, '--format', 'ndjson'])).code).toBe(0);
    expect(JSON.parse((await readFile(ndjsonPath, 'utf8')).split('\n')[0] ?? '')).toHaveProperty('sku');
  });

  it('leaves no part file behind when its first request fails (nothing to resume)', async () => {
    const cwd = await mkdtemp(join(dir, 'cwd-'));
    const r = await gds(['export', 'tbl_notgranted0', '-o', join(cwd, 'rows.ndjson')]);
    expect(r.code).not.toBe(0);
    expect(await readdir(cwd)).toEqual([]);
    expect(existsSync(join(cwd, 'rows.ndjson.part'))).toBe(false);
  });
});

describe('two imports from stdin into one table on one key', () => {
  const args = ['records', 'import', 'together', '-f', '-', '--key', 'sku', '--batch-size', '1'];
  const stateDir = () => join(dir, 'state', 'gds', 'imports');
  /** An import whose stdin stays open after these rows: it runs until the test ends its input. */
  const running = async (rows: string[], done = 0) => {
    const [command, argv] = cliCommand(args);
    const child = spawn(command, argv, { env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.on('error', () => undefined);
    child.stdin.write(rows.map((sku) => `{"sku":"${sku}"}\n`).join(''));
    const ended = collect(child);
    for (;;) {
      const names = await readdir(stateDir()).catch(() => [] as string[]);
      const name = names.find((n) => n.endsWith('.json'));
      const state =
        name === undefined
          ? null
          : await readFile(join(stateDir(), name), 'utf8').then(JSON.parse, () => null);
      if (names.some((n) => n.endsWith('.lock')) && state !== null && state.done >= done) break;
      if (child.exitCode !== null) throw new Error(`the import ended early: ${(await ended).stderr}`);
      await sleep(10);
    }
    return { child, ended };
  };

  it('go one at a time: the second says the first is running (exit 6), not that it was interrupted', async () => {
    const first = await running(['T1', 'T2']);
    const second = await gds(['import', 'together', '-f', '-', '--key', 'sku', '--json'], {
      input: '{"sku":"T9"}\n',
    });
    expect(second.code).toBe(6);
    const error = ndjson(second.stderr).at(-1).error;
    expect(error).toMatchObject({ code: 'import_running', details: { pid: first.child.pid } });
    first.child.stdin.end('{"sku":"T3"}\n');
    expect((await first.ended).code).toBe(0);
    expect(await readdir(stateDir())).toEqual([]);
    const after = await gds(['import', 'together', '-f', '-', '--key', 'sku'], { input: '{"sku":"T9"}\n' });
    expect(after.code, after.stderr).toBe(0);
    expect((await dataOf('together')).map((r) => r.sku)).toEqual(['T1', 'T2', 'T3', 'T9']);
  });

  it('Ctrl-C ends one with exit 130, its place kept for --resume and no lock left', async () => {
    const stopped = await running(['V1', 'V2'], 1);
    stopped.child.kill('SIGINT');
    expect((await stopped.ended).code).toBe(130);
    const names = await readdir(stateDir());
    expect(names.filter((name) => !name.endsWith('.json'))).toEqual([]);
    expect(names).toHaveLength(1);
    const resumed = await gds(['import', 'together', '-f', '-', '--key', 'sku', '--resume'], {
      input: '{"sku":"V1"}\n{"sku":"V2"}\n',
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await readdir(stateDir())).toEqual([]);
  });

  it('an import killed while running holds nothing: the next one is told it was interrupted', async () => {
    // Killed once its first row is acknowledged (the second waits in the batch for more input).
    const killed = await running(['U1', 'U2'], 1);
    killed.child.kill('SIGKILL');
    await killed.ended;
    const next = await gds(['import', 'together', '-f', '-', '--key', 'sku', '--json'], {
      input: '{"sku":"U1"}\n{"sku":"U2"}\n',
    });
    expect(next.code).toBe(2);
    expect(ndjson(next.stderr).at(-1).error.code).toBe('import_interrupted');
    const resumed = await gds(['import', 'together', '-f', '-', '--key', 'sku', '--resume'], {
      input: '{"sku":"U1"}\n{"sku":"U2"}\n',
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(await readdir(stateDir())).toEqual([]);
  });
});
