// `gds records export --output`: the file is written only where the user said. A folder named by --output is
// refused before a row is read; `--output -` is stdout, never a file called "-"; a symbolic link planted at
// FILE.part (or at FILE) is never written through, so no other file is overwritten with the table's rows.
// Rows written to a terminal are shown like every server string (a CSV value's control characters
// stripped); piped, they go on byte for byte.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { cliCommand, cliEnv, collect, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { tableReadToken, useScratchFolders } from '../helpers/export-files.js';

let server: TestServer;
let env: Record<string, string>;
const folders = useScratchFolders('gds-export-paths-');
/** A folder of its own for each test, so one test's files never meet another's. */
const freshDir = folders.fresh;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  const token = await tableReadToken(server, 'export-paths', server.table('crm_contacts').id);
  env = { SERVICE_TOKEN: token, SERVICE_API_URL: server.url };
});

afterAll(async () => {
  await server?.close();
});

const gds = (args: string[], cwd?: string) =>
  runInProcess(['records', 'export', 'crm_contacts', ...args], {
    env,
    ...(cwd === undefined ? {} : { cwd }),
  });

describe('records export --output', () => {
  it('refuses a folder (exit 2, with or without --force) and writes nothing beside it', async () => {
    const folder = await freshDir();
    const target = join(folder, 'rows');
    await mkdir(target);
    for (const extra of [[], ['--force']]) {
      const r = await gds(['--output', target, ...extra, '--json']);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const { error } = JSON.parse(r.stderr.trim()) as { error: { code: string; suggestion: string } };
      expect(error.code).toBe('output_is_folder');
      expect(error.suggestion).toContain(join(target, 'export.ndjson'));
    }
    // No rows.part, no rows.gds-export: nothing was started.
    expect((await readdir(folder)).sort()).toEqual(['rows']);
    expect(await readdir(target)).toEqual([]);
  });

  it('--output into a folder that does not exist: exit 2 naming the path given and the missing folder', async () => {
    const folder = await freshDir();
    const target = join(folder, 'missing', 'rows.ndjson');
    const r = await gds(['--output', target, '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const { error } = JSON.parse(r.stderr.trim()) as { error: { code: string; message: string } };
    expect(error).toMatchObject({
      code: 'output_unwritable',
      message: `Cannot write ${target}: the folder ${join(folder, 'missing')} does not exist`,
    });
    expect(await readdir(folder)).toEqual([]);
  });

  it('--output - writes the rows to stdout and no file named "-"', async () => {
    const folder = await freshDir();
    const r = await gds(['--output', '-'], folder);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { email?: string });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.map((row) => row.email)).toContain('ada@example.com');
    expect(await readdir(folder)).toEqual([]);
  });

  it('--output - with --resume or --force is a usage error that names the flag', async () => {
    const folder = await freshDir();
    for (const flag of ['--resume', '--force']) {
      const r = await gds(['--output', '-', flag], folder);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`${flag} works on a file`);
    }
    expect(await readdir(folder)).toEqual([]);
  });

  it('never writes through a symbolic link planted at FILE.part', async () => {
    const folder = await freshDir();
    const victim = join(folder, 'victim.txt');
    await writeFile(victim, 'keep me\n');
    const file = join(folder, 'out.ndjson');
    await symlink(victim, `${file}.part`);
    // No interrupted export counts it: left as it is, until --force, which replaces the link itself.
    const refused = await gds(['--output', file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already exists, and no interrupted export counts it');
    expect((await lstat(`${file}.part`)).isSymbolicLink()).toBe(true);
    const r = await gds(['--output', file, '--force']);
    expect(r.code).toBe(0);
    expect(await readFile(victim, 'utf8')).toBe('keep me\n');
    // The export itself is whole, in a regular file of its own.
    expect((await lstat(file)).isFile()).toBe(true);
    expect(await readFile(file, 'utf8')).toContain('ada@example.com');
    expect(existsSync(`${file}.part`)).toBe(false);
  });

  it('--resume refuses a part file that is a symbolic link, and leaves its target alone', async () => {
    const folder = await freshDir();
    const victim = join(folder, 'victim.txt');
    await writeFile(victim, 'keep me, a longer line than the state counts\n');
    const file = join(folder, 'out.ndjson');
    await symlink(victim, `${file}.part`);
    const state = {
      version: 1,
      tableId: server.table('crm_contacts').id,
      format: 'ndjson',
      search: null,
      cursor: null,
      rows: 1,
      bytes: 5,
    };
    await writeFile(`${file}.gds-export`, `${JSON.stringify(state)}\n`);
    const r = await gds(['--output', file, '--resume', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr.trim()).error.code).toBe('resume_broken');
    expect(await readFile(victim, 'utf8')).toBe('keep me, a longer line than the state counts\n');
    expect(existsSync(file)).toBe(false);
  });

  it('counts a symbolic link at FILE, even one pointing nowhere, as an existing file', async () => {
    const folder = await freshDir();
    const file = join(folder, 'out.ndjson');
    await symlink(join(folder, 'nowhere'), file);
    const r = await gds(['--output', file, '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr.trim()).error.code).toBe('output_exists');
    expect(await readlink(file)).toBe(join(folder, 'nowhere'));
    expect((await readdir(folder)).sort()).toEqual(['out.ndjson']);
  });
});

describe('records export --output interrupted before its first page', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s: exit %d, and no part file left that no state counts', async (signal, code) => {
    // A stand-in service: the columns answered (the CSV header is written), the first page held.
    let held: () => void = () => {};
    const asked = new Promise<void>((resolve) => (held = resolve));
    const standIn = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/columns') === true) res.end(JSON.stringify({ columns: [{ name: 'email' }] }));
      else held();
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    try {
      const folder = await freshDir();
      const file = join(folder, 'out.csv');
      const [command, argv] = cliCommand([
        'records',
        'export',
        'tbl_held',
        '-o',
        file,
        '--format',
        'csv',
        '--json',
      ]);
      const child = spawn(command, argv, {
        env: cliEnv({
          SERVICE_TOKEN: 'opaque0123456789',
          SERVICE_API_URL: `http://127.0.0.1:${(standIn.address() as AddressInfo).port}/v1`,
          GDS_CONFIG_DIR: join(folders.root(), 'no-config'),
        }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const ended = collect(child);
      await asked;
      child.kill(signal);
      const r = await ended;
      expect(r.code, r.stderr).toBe(code);
      expect(r.stdout).toBe('');
      expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: 'interrupted' } });
      expect(await readdir(folder)).toEqual([]);
    } finally {
      standIn.closeAllConnections();
      await new Promise((resolve) => standIn.close(resolve));
    }
  });
});

describe('records export to stdout', () => {
  const hostile = 'Ada\u001b]52;c;ZXZpbA==\u0007\u001b[2J\u202eEVIL';

  it('strips a CSV value of its control characters on a terminal, and keeps them when piped', async () => {
    await server.sql(
      `UPDATE gds.records SET data = data || $2::jsonb
        WHERE table_id = $1 AND data->>'email' = 'ada@example.com'`,
      [server.table('crm_contacts').id, JSON.stringify({ full_name: hostile })],
    );
    const [command, argv] = cliCommand(['records', 'export', 'crm_contacts', '--format', 'csv']);
    const line = `stty cols 200 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
    const shown = await runInTerminal(line, env).result;
    expect(shown.code, shown.stdout).toBe(0);
    expect(shown.stdout).toContain('ada@example.com,AdaEVIL,');
    expect(shown.stdout).not.toContain('\u001b]52');
    expect(shown.stdout).not.toContain('\u001b[2J');
    expect(shown.stdout).not.toContain('\u202e');
    const piped = await gds(['--format', 'csv']);
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain(`ada@example.com,${hostile},`);
  });
});
