// PostgreSQL's parser inside the single executable as a native addon (scripts/bundle/pg-parser-addon.ts: the
// same libpg-query WebAssembly translated to C), against the npm package's WebAssembly: the same answers for
// every real view, the addon kept in the user's cache as the keychain addon is, and the WebAssembly where the
// addon cannot be used.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, ensureBuilt, runThroughNode } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { needs, noSharedFixtures, onPath } from '../helpers/skip.js';

const builtExecutable = process.env.GDS_TEST_CLI;
const noExecutable =
  builtExecutable === undefined || !existsSync(builtExecutable)
    ? 'no single executable to test: npm run test:e2e:binary builds it and names it in GDS_TEST_CLI'
    : undefined;
// build:binary makes the addon where it finds wasm2c and a C compiler (on Linux); .ci/run installs both.
const noNativeParser =
  process.platform !== 'linux'
    ? `the native parser is built on Linux only (this is ${process.platform})`
    : onPath('wasm2c') === undefined || (onPath('cc') ?? onPath('gcc')) === undefined
      ? 'no wasm2c or C compiler here (Debian: apt-get install wabt gcc): build:binary made the executable without the native parser'
      : undefined;

const refused = ['--token', 'cli_x', '--base', 'http://127.0.0.1:9'];
let dir: string;
let gds: string;
let home: string;

beforeAll(async () => {
  if (noExecutable !== undefined) return;
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-pg-native-'));
  gds = join(dir, 'gds');
  home = join(dir, 'home');
  await mkdir(home);
  await copyFile(builtExecutable ?? '', gds);
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function runBinary(args: string[], cache: string, env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(gds, args, {
    cwd: dir,
    env: { PATH: '/usr/bin:/bin', HOME: home, XDG_CACHE_HOME: cache, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** The same command line through the npm package's entry (libpg-query's WebAssembly). */
function runNode(args: string[]): Promise<CliResult> {
  return runThroughNode(args, { cwd: dir, env: { HOME: home } });
}

function answer(r: CliResult): { code: number | null; stdout: string; stderr: string } {
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

async function parserFiles(cache: string): Promise<string[]> {
  const native = join(cache, 'gds/native');
  return existsSync(native) ? (await readdir(native)).filter((f) => f.startsWith('pg-parser-')) : [];
}

describe("PostgreSQL's parser as a native addon in dist/gds", needs(noExecutable, noNativeParser), () => {
  // About 130 pairs of processes, one pair after another: past the 120 s a test is given at a load of 10 on two
  // cores (a fresh-clone CI run). Its own limit, as every limit here, only ends a test that hangs.
  it('reads every real view as the npm package does: the same output, errors and exit code', async ({
    skip,
  }) => {
    skip(noSharedFixtures !== undefined, noSharedFixtures);
    const views = join(sharedFixturesDir, 'real/sql');
    const files = (await readdir(views)).filter((f) => f.endsWith('.sql')).map((f) => join(views, f));
    // Beside them: a syntax error (PostgreSQL's error path, a longjmp inside the parser), nesting past
    // the grammar's own limit ("memory exhausted"), and text outside ASCII.
    const own = {
      'refused.sql': "CREATE VIEW v\nCOMMENT = 'x' AS SELECT a FROM t",
      'deep.sql': `CREATE VIEW a.deep AS SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)} AS x`,
      'nested.sql': `CREATE VIEW a.nested AS SELECT ${'('.repeat(2_000)}1${')'.repeat(2_000)} AS x`,
      'accents.sql': 'CREATE VIEW a.été AS SELECT "naïve" AS ½, \'∑\' AS s FROM t',
    };
    for (const [name, text] of Object.entries(own)) await writeFile(join(dir, name), text);
    const cache = join(dir, 'cache-views');
    expect(files.length).toBeGreaterThanOrEqual(25);
    for (const file of [...files, ...Object.keys(own).map((name) => join(dir, name))]) {
      for (const extra of [[], ['--json']]) {
        const args = ['push', file, '--dry-run', ...extra, ...refused];
        const [binary, npm] = await Promise.all([runBinary(args, cache), runNode(args)]);
        expect(answer(binary), `${file} ${extra.join(' ')}`).toEqual(answer(npm));
      }
    }
    // It was the native parser that answered.
    expect(await parserFiles(cache)).toEqual([expect.stringMatching(/^pg-parser-[0-9a-f]{16}\.node$/)]);
  }, 600_000);

  it('is written once to the cache; a copy whose bytes differ is replaced, never loaded', async () => {
    await writeFile(join(dir, 'v.sql'), 'CREATE VIEW analytics.v AS SELECT id, name FROM t');
    const cache = join(dir, 'cache-once');
    const args = ['push', 'v.sql', '--dry-run', '--json', ...refused];
    const first = await runBinary(args, cache);
    expect(first.code, first.stderr).toBe(0);
    const [name] = await parserFiles(cache);
    const addon = join(cache, 'gds/native', name ?? '');
    const genuine = await readFile(addon);
    expect(genuine.subarray(0, 4).toString('latin1')).toBe('\x7fELF');

    await writeFile(addon, Buffer.concat([genuine.subarray(0, 4096), Buffer.from('tampered')]));
    const second = await runBinary(args, cache);
    expect(answer(second)).toEqual(answer(first));
    expect((await readFile(addon)).equals(genuine)).toBe(true);

    // The same length, one byte changed: compared byte for byte, not by size.
    const flipped = Buffer.from(genuine);
    flipped[genuine.length - 100] = (flipped[genuine.length - 100] ?? 0) ^ 0xff;
    await writeFile(addon, flipped);
    const third = await runBinary(args, cache);
    expect(answer(third)).toEqual(answer(first));
    expect((await readFile(addon)).equals(genuine)).toBe(true);
  });

  it('parses with the WebAssembly, the same, where the cache cannot be written', async () => {
    await writeFile(join(dir, 'w.sql'), 'CREATE VIEW analytics.w AS SELECT id AS constraint FROM t');
    await writeFile(join(dir, 'not-a-folder'), '');
    const args = ['push', 'w.sql', '--dry-run', '--json', ...refused];
    const glue = '/node_modules/libpg-query/wasm/libpg-query.js';
    const modules = async (cache: string) => {
      const record = join(dir, `modules-${cache}.json`);
      const r = await runBinary(args, join(dir, cache), { GDS_TEST_LOADED_MODULES: record });
      return { r, loaded: JSON.parse(await readFile(record, 'utf8')) as string[] };
    };
    const native = await modules('cache-fallback');
    expect(native.r.code, native.r.stderr).toBe(0);
    expect(await parserFiles(join(dir, 'cache-fallback'))).toHaveLength(1);
    expect(native.loaded).not.toContain(glue);
    const fallback = await modules('not-a-folder');
    expect(fallback.loaded).toContain(glue);
    expect(answer(fallback.r)).toEqual(answer(native.r));
  });
});
