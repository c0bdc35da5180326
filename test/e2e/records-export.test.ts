// `gds records export`: the real gds against the reference server, on a Mode B table of 10,000 rows whose
// values are the hard ones (test/helpers/records.ts). Every row comes out once, exactly as stored, as NDJSON
// on stdout or CSV in a file; a SIGKILL in the middle and `--resume` give the same file as a run that was
// never interrupted. gds runs in the test process (runInProcess), but where it is killed or on a terminal.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { createModeBTable, fillRows, storedRows, WIDE_COLUMNS } from '../helpers/records.js';
import { cliCommand, cliEnv, collect, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startTestServer } from './test-server.js';
import { csvValue } from '../../src/core/csv.js';

const ROWS = 10_000;
let server: TestServer;
let table: string;
/** A table of the first 5,000 of those rows, for the export that is killed and resumed. */
let half: string;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  // The functional tests run far above the spec's 200 a minute; records-pacing.test.ts holds the limit low.
  [server] = await Promise.all([startTestServer({ rateLimit: 1_000_000 }), ensureBuilt()]);
  table = await createModeBTable(server, 'export_wide');
  half = await createModeBTable(server, 'export_half');
  await fillRows(server, table, ROWS);
  await fillRows(server, half, ROWS / 2);
  const issued = await server.issueToken('OWNER', {
    name: 'export',
    env: 'dev',
    scopes: [table, half].map((tableId) => ({ tableId, permissions: ['read'] as Array<'read'> })),
  });
  env = { SERVICE_TOKEN: issued.tokens.accessToken, SERVICE_API_URL: server.url };
  dir = await mkdtemp(join(tmpdir(), 'gds-export-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await server.close();
});

const gds = (args: string[]) => runInProcess(['records', ...args], { env });

/** What the server holds, as export writes it: the record's columns and its id. */
async function expected(): Promise<Array<Record<string, unknown>>> {
  return (await storedRows(server, table)).map((r) => ({ ...r.data, id: r.id }));
}

describe('gds records export', () => {
  it('writes every row once as NDJSON on stdout, exactly as stored, and nothing on stderr when piped', async () => {
    const r = await gds(['export', 'export_wide']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(ROWS);
    expect(lines.map((line) => JSON.parse(line))).toEqual(await expected());
    // No raw C1 character or line separator reaches the stream: JSON escapes them.
    expect(r.stdout).not.toMatch(/[\u0085\u2028]/);
  });

  it('writes CSV into --output whole, with a summary line under --json; null and "" stay apart', async () => {
    const file = join(dir, 'wide.csv');
    const r = await gds(['export', table, '--format', 'csv', '--output', file, '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const [summary] = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(summary).toMatchObject({
      tableId: table,
      format: 'csv',
      rows: ROWS,
      output: file,
      resumedFrom: null,
    });
    expect(existsSync(`${file}.part`) || existsSync(`${file}.gds-export`)).toBe(false);
    const text = await readFile(file, 'utf8');
    // Each field with whether it was quoted: an unquoted empty field is null, a quoted one "".
    const [header, ...rows] = parse(text, {
      cast: (value, context) => ({ value, quoted: context.quoting }),
    }) as unknown as Array<Array<{ value: string; quoted: boolean }>>;
    expect(header?.map((cell) => cell.value)).toEqual(['id', ...WIDE_COLUMNS.map((c) => c.name)]);
    const types = [undefined, ...WIDE_COLUMNS.map((c) => c.type)];
    const read = rows.map((record) => {
      const values = record.map((cell, i) => csvValue(cell.value, cell.quoted, types[i]));
      const [id, ...rest] = values;
      return { ...Object.fromEntries(WIDE_COLUMNS.map((c, i) => [c.name, rest[i]])), id };
    });
    const stored = (await expected()).map((r) => ({
      ...Object.fromEntries(WIDE_COLUMNS.map((c) => [c.name, r[c.name] ?? null])),
      id: r.id,
    }));
    expect(read).toEqual(stored);
    // No cell a spreadsheet would run: '=1+1 #13' is written with a leading quote (read back above as stored).
    expect(text).toContain("'=1+1 #13");
    // Text cells only: a negative number (qty) is written as the number it is.
    const textColumns = WIDE_COLUMNS.flatMap((c, i) => (c.type === 'text' ? [i + 1] : []));
    expect(rows.some((record) => textColumns.some((i) => /^[=+\-@]/.test(record[i]?.value ?? '')))).toBe(
      false,
    );
    expect(rows.some((record) => /^-\d/.test(record[3]?.value ?? ''))).toBe(true);

    const raw = await gds(['export', table, '--format', 'csv', '--raw-cells']);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toMatch(/,=1\+1 #13,/);
  });

  it('after a SIGKILL in the middle, --resume finishes the same file an uninterrupted run writes', async () => {
    const whole = join(dir, 'whole.ndjson');
    // Half the rows: the kill still lands 3,000 rows in, with 2,000 left to go.
    expect((await gds(['export', half, '-o', whole])).code).toBe(0);
    const file = join(dir, 'killed.ndjson');
    const [command, argv] = cliCommand(['records', 'export', half, '-o', file]);
    const child = spawn(command, argv, { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    const ended = collect(child);
    // Killed once the state says a few thousand rows are in (and the run is still going).
    for (;;) {
      const state = await readFile(`${file}.gds-export`, 'utf8').then(JSON.parse, () => null);
      if (state !== null && state.rows >= 3_000) break;
      if (child.exitCode !== null) throw new Error('the export ended before it could be killed');
      await sleep(5);
    }
    child.kill('SIGKILL');
    expect((await ended).signal).toBe('SIGKILL');
    expect(existsSync(file)).toBe(false);
    const interrupted = JSON.parse(await readFile(`${file}.gds-export`, 'utf8'));
    expect(interrupted.rows).toBeLessThan(ROWS / 2);
    // A kill between writing the state's temporary copy and renaming it leaves the copy beside the output.
    await writeFile(`${file}.gds-export.0badf00d.tmp`, '{"version":1,"ro');

    const again = await gds(['export', half, '-o', file, '--json']);
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stderr.trim()).error.code).toBe('export_interrupted');

    const resumed = await gds(['export', half, '-o', file, '--resume', '--json']);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout.trim())).toMatchObject({
      rows: ROWS / 2,
      resumedFrom: interrupted.rows,
    });
    expect(await readFile(file, 'utf8')).toBe(await readFile(whole, 'utf8'));
    expect(existsSync(`${file}.part`) || existsSync(`${file}.gds-export`)).toBe(false);
    expect((await readdir(dir)).filter((name) => name.startsWith('killed.'))).toEqual(['killed.ndjson']);
  });

  it('refuses to overwrite a file without --force, and --format csv on stdout under --json', async () => {
    const file = join(dir, 'whole.ndjson');
    const exists = await gds(['export', table, '-o', file, '--json']);
    expect(exists.code).toBe(2);
    expect(JSON.parse(exists.stderr.trim()).error.code).toBe('output_exists');
    // A file at FILE.part that no state file counts is not known to be gds's: kept unless --force.
    const fresh = join(dir, 'fresh.ndjson');
    await writeFile(`${fresh}.part`, "someone else's notes\n");
    const partThere = await gds(['export', table, '-o', fresh, '--json']);
    expect(partThere.code).toBe(2);
    expect(JSON.parse(partThere.stderr.trim()).error).toMatchObject({ code: 'part_file_exists' });
    expect(await readFile(`${fresh}.part`, 'utf8')).toBe("someone else's notes\n");
    expect(existsSync(fresh)).toBe(false);
    expect((await gds(['export', table, '-o', fresh, '--force'])).code).toBe(0);
    expect((await readFile(fresh, 'utf8')).split('\n')).toHaveLength(ROWS + 1);
    expect(existsSync(`${fresh}.part`)).toBe(false);
    const csv = await gds(['export', table, '--format', 'csv', '--json']);
    expect(csv.code).toBe(2);
    expect(csv.stdout).toBe('');
  });

  it('shows its progress on a terminal and ends with a summary line there', async () => {
    const file = join(dir, 'terminal.ndjson');
    const [command, argv] = cliCommand(['records', 'export', table, '-o', file]);
    const line = `stty cols 120 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
    const r = await runInTerminal(line, env).result;
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/Exporting tbl_\w+: [\d,]+ of 10,000 rows \(\d+ %\)/);
    expect(r.stdout).toContain(`Exported 10,000 rows of ${table} to ${file} in 100 requests.`);
    expect((await readFile(file, 'utf8')).split('\n')).toHaveLength(ROWS + 1);
  });
});
