// `-` means stdout for every -o/--bundle-out, as `-f -` means stdin: gate get -o - pipes into gate
// validate -f -, quarantine open -o - and env promote --bundle-out - print the file; no file named `-` is
// ever written. Under --json stdout is NDJSON only, so `-o -` is refused (exit 2) before any request.
// Real `gds` processes through a real shell pipe, against a real server.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
const gate1 = 'fieldOverrides:\n  - field: email\n    nullRate: { warn: 0.1, fail: 0.2 }\n';

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dash-'));
});

afterAll(async () => {
  await server?.close();
});

function env(): Record<string, string> {
  return {
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('OWNER').cliToken,
  };
}

const gds = (args: string[]): Promise<CliResult> => runInProcess(args, { env: env(), cwd: dir });

/** `gds …a | gds …b` through a real shell pipe, in `dir`. */
async function pipe(a: string[], b: string[]): Promise<CliResult> {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const line = (args: string[]) => {
    const [command, commandArgs] = cliCommand(args);
    return [command, ...commandArgs].map(quote).join(' ');
  };
  const child = spawn('sh', ['-c', `${line(a)} | ${line(b)}`], {
    env: cliEnv(env()),
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

describe('- is stdout', () => {
  it('gate get -o - | gate validate <table> -f -: the applied file goes through the pipe', async () => {
    const table = server.table('crm_contacts').id;
    const file = join(dir, 'applied.yml');
    await writeFile(file, gate1);
    expect((await gds(['gate', 'apply', table, '-f', file])).code).toBe(0);
    const got = await gds(['gate', 'get', table, '-o', '-']);
    expect(got).toMatchObject({ code: 0, stdout: gate1 });
    const piped = await pipe(['gate', 'get', table, '-o', '-'], ['gate', 'validate', table, '-f', '-']);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('<stdin>: valid\n');
  });

  it('quarantine open -o - and env promote --bundle-out - print the file', async () => {
    const table = server.table('customers').id;
    const ddl = await gds(['quarantine', 'open', table, '-o', '-']);
    expect(ddl.code).toBe(0);
    expect(ddl.stdout).toMatch(/^CREATE OR REPLACE VIEW/);
    const bundle = await gds(['env', 'promote', table, '--to', 'production', '--bundle-out', '-']);
    expect(bundle.code).toBe(0);
    expect(JSON.parse(bundle.stdout)).toMatchObject({ format: 'gds-bundle' });
    expect(await readdir(dir)).not.toContain('-');
  });

  it.each([
    [['gate', 'get', 't_1', '-o', '-']],
    [['quarantine', 'open', 't_1', '-o', '-']],
    [['env', 'promote', 't_1', '--to', 'production', '--bundle-out', '-']],
  ])('%j --json: exit 2 before any request, stdout empty', async (args) => {
    const r = await gds([...args, '--json']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: { code: 'stdout_taken', suggestion: expect.stringContaining('file path') },
    });
  });
});
