// The npm package's bundle (dist/bundle/gds.cjs, made by prepack: scripts/build-package-bundles.ts): every
// command line runs that one bundled file, and answers exactly as gds itself does (run in the test process).
// Laid out here as npm installs the package (bin/, dist/ with its bundle folder,
// package.json, node_modules beside) in a temp folder, so the checkout itself never has bundles.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPackageBundle } from '../../scripts/build-package-bundles.js';
import { firstNonAscii } from '../../scripts/bundle/ascii-only.js';
import { cliEnv, collect, ensureBuilt, node24, repoRoot } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { startTestServer } from '../helpers/server.js';
import { needs, whyNoSecretService } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { model } from '../core/dbt/helpers.js';

let dir: string;
let installed: string;
let server: TestServer;
let bundled: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-package-bundles-'));
  installed = join(dir, 'gds');
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  await mkdir(join(installed, 'bin'), { recursive: true });
  await copyFile(join(repoRoot, 'bin/run.js'), join(installed, 'bin/run.js'));
  await copyFile(join(repoRoot, 'package.json'), join(installed, 'package.json'));
  await mkdir(join(installed, 'dist'));
  for (const entry of await readdir(join(repoRoot, 'dist'), { withFileTypes: true })) {
    if (entry.isDirectory() && !['bundle', 'sea-build', 'release', 'release-cache'].includes(entry.name))
      await symlink(join(repoRoot, 'dist', entry.name), join(installed, 'dist', entry.name));
  }
  await symlink(join(repoRoot, 'node_modules'), join(installed, 'node_modules'));
  bundled = await buildPackageBundle(join(installed, 'dist/bundle'), { minify: true });
  await writeFile(
    join(dir, 'plain.yml'),
    'patternChecks:\n  - {name: code, column: code, regex: "^[A-Z]+$", severity: WARN}\n',
  );
  await writeFile(
    join(dir, 'strict.yml'),
    'patternChecks:\n  - {name: code, column: code, regex: "^[A-Z]+$", severity: HARD_FAIL}\n',
  );
  await writeFile(
    join(dir, 'sql.yml'),
    'customPredicates:\n  - {name: p, sql: "lower(code) > \'a\'", severity: WARN}\n',
  );
  await writeFile(join(dir, 'broken.yml'), 'patternChecks:\n  - {name: code, regex: 7}\n');
  await writeFile(
    join(dir, 'v.sql'),
    'CREATE VIEW analytics_dev.bundle_probe AS\nSELECT id, amount::numeric AS amount FROM raw.orders;\n',
  );
  // The view in the warehouse, as a push needs it: push --dry-run asks the service whether it would take it.
  await server.sql('CREATE TABLE analytics_dev.bundle_probe (id integer, amount numeric)');
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run extends CliResult {
  modules: string[];
}

/** Runs `entry` (the installed package's bin/run.js, or the checkout's), recording what it loads. */
async function run(entry: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const record = join(dir, `modules-${Math.random().toString(36).slice(2)}.json`);
  const preload = join(repoRoot, 'test/cli/fixtures/record-loaded-modules.mjs');
  const result = await collect(
    spawn(node24, ['--import', preload, entry, ...args], {
      cwd: dir,
      env: cliEnv({ ...env, GDS_TEST_LOADED_MODULES: record, GDS_CONFIG_DIR: join(dir, 'config') }),
    }),
  );
  const modules = JSON.parse(await readFile(record, 'utf8')) as string[];
  return { ...result, modules };
}

const fromPackage = (args: string[], env?: Record<string, string>) =>
  run(join(installed, 'bin/run.js'), args, env);
/** The same command line answered by gds in the test process (src/, as dist/ is built from it). */
const fromCheckout = (args: string[], env?: Record<string, string>) =>
  runInProcess(args, { env: { ...env, GDS_CONFIG_DIR: join(dir, 'config') }, cwd: dir });

/** A dbt project of these nodes, in a folder of `dir`: its manifest as dbt writes it. */
async function dbtProject(name: string, nodes: Record<string, unknown>): Promise<string> {
  const folder = join(dir, name);
  await mkdir(folder);
  await writeFile(
    join(folder, 'manifest.json'),
    JSON.stringify({
      metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
      nodes,
    }),
  );
  return folder;
}

const bundleOf = (modules: string[]) =>
  modules.filter((url) => url.includes('/dist/bundle/')).map((url) => url.slice(url.lastIndexOf('/') + 1));
/** Modules Node resolved as files (a bundle's own modules are recorded by their node_modules path only). */
const files = (modules: string[]) => modules.filter((url) => url.startsWith('file:'));

describe('the npm package with its bundle', () => {
  const owner = () => ({ SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url });

  it('holds one bundle, the whole CLI', async () => {
    expect(bundled).toBe(join(installed, 'dist/bundle/gds.cjs'));
    expect(await readdir(join(installed, 'dist/bundle'))).toEqual(['gds.cjs']);
  });

  it('runs gds list --json from its bundle alone: one line per table, as the server has them', async () => {
    const r = await fromPackage(['list', '--json'], owner());
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: string }).id);
    const listed = await server.request('GET', '/api/tables?limit=1000', { token: owner().SERVICE_TOKEN });
    expect(listed.status).toBe(200);
    const tables = (listed.body as { tables: Array<{ id: string }> }).tables;
    expect(tables.length).toBeGreaterThan(0);
    expect(ids).toEqual(tables.map((table) => table.id));
    expect(bundleOf(r.modules)).toEqual(['gds.cjs']);
    // Nothing of dist/ beyond the masking of the command line (bin/run.js's first act), and neither oclif
    // nor undici as files of their own.
    expect(files(r.modules).filter((url) => url.includes('/dist/'))).toEqual([
      expect.stringMatching(/\/dist\/cli\/process-title\.js$/),
      expect.stringMatching(/\/dist\/core\/redact\.js$/),
      expect.stringMatching(/\/dist\/bundle\/gds\.cjs$/),
    ]);
    expect(files(r.modules).filter((url) => /\/node_modules\/(@oclif|undici)\//.test(url))).toEqual([]);
    expect(r.modules).toContain('/node_modules/@oclif/core/lib/index.js');
  });

  it.each([
    ['gate validate, a plain file', ['gate', 'validate', '-f', 'plain.yml'], 0],
    ['gate validate, a SQL predicate', ['gate', 'validate', '-f', 'sql.yml', '--json'], 0],
    ['gate validate, a file the schema refuses', ['gate', 'validate', '-f', 'broken.yml'], 2],
    ['gate validate, no such file', ['gate', 'validate', '-f', 'missing.yml'], 2],
    ['gate diff --semantic', ['gate', 'diff', '-f', 'strict.yml', '--against', 'plain.yml', '--semantic'], 1],
    ['gate diff, a line diff', ['gate', 'diff', '-f', 'strict.yml', '--against', 'plain.yml'], 1],
    ['list, a table', ['list', '-L', '2'], 0],
    ['list --jq', ['list', '--jq', '.name'], 0],
    ['list, a jq filter outside gds’s own', ['list', '--jq', '[.id, .name] | @tsv'], 0],
    ['list --template', ['list', '--template', '{{id}} {{name}}'], 0],
    ['list, an unknown flag', ['list', '--nope'], 2],
    ['list, a bad option', ['list', '--state', 'NOPE', '--json'], 2],
    ['push --dry-run of a view', ['push', 'v.sql', '--dry-run', '--json'], 0],
    ['--help', ['--help'], 0],
    ['a topic’s help', ['gate', '--help'], 0],
    ['a command’s help', ['list', '--help'], 0],
    ['--version', ['--version'], 0],
    ['auth status', ['auth', 'status'], 0],
    ['connectors list', ['connectors', 'list', '--json'], 0],
    ['an unknown command', ['nope'], 2],
  ])('answers %s exactly as a checkout does', async (_, args, code) => {
    const [bundle, checkout] = await Promise.all([fromPackage(args, owner()), fromCheckout(args, owner())]);
    expect(bundle.code, bundle.stderr).toBe(code);
    expect(bundle.stdout + bundle.stderr).not.toBe('');
    expect(bundleOf(bundle.modules)).toEqual(['gds.cjs']);
    expect({ code: bundle.code, stdout: bundle.stdout, stderr: bundle.stderr }).toEqual({
      code: checkout.code,
      stdout: checkout.stdout,
      stderr: checkout.stderr,
    });
  });

  it('keeps a code cache of the bundle per first word beside Node’s compile cache, and answers the same from it', async () => {
    const cacheDir = join(dir, 'compile-cache');
    const env = { ...owner(), NODE_COMPILE_CACHE: cacheDir };
    const caches = async () => {
      const folders = await readdir(cacheDir);
      const names = await Promise.all(folders.map((folder) => readdir(join(cacheDir, folder))));
      return names.flat().filter((name) => name.startsWith('gds-bundle-'));
    };
    const first = await fromPackage(['list', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const length = (await readFile(bundled, 'latin1')).length;
    expect(await caches()).toEqual([`gds-bundle-${length}-list.cache`]);
    const [folder = ''] = await readdir(cacheDir);
    const file = join(cacheDir, folder, `gds-bundle-${length}-list.cache`);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await fromPackage(['list', '--json'], env);
    expect({ code: second.code, stdout: second.stdout, stderr: second.stderr }).toEqual({
      code: first.code,
      stdout: first.stdout,
      stderr: first.stderr,
    });
    // A cache V8 refuses (here, not one at all) is written anew; the answer is the same.
    await writeFile(file, 'not a code cache');
    const third = await fromPackage(['list', '--json'], env);
    expect(third.stdout).toBe(first.stdout);
    expect((await readFile(file)).length).toBeGreaterThan(1000);
    // A usage error (a mistyped word, a flag that is none) leaves no cache; help has one of its own.
    expect((await fromPackage(['lsit'], env)).code).toBe(2);
    expect((await fromPackage(['list', '--nope'], env)).code).toBe(2);
    // Under --detailed-exitcode a usage error ends with 1 (its 2 means changes), and leaves no cache either.
    expect((await fromPackage(['lsit', '--detailed-exitcode'], env)).code).toBe(1);
    expect((await fromPackage(['gate', '--help'], env)).code).toBe(0);
    // So does a mistyped word or flag the error says meant --detailed-exitcode, and a usage error of an alias of
    // plan --detailed-exitcode: no cache of a word that names no command, nor of a run that stopped at its flags.
    expect((await fromPackage(['alias', 'set', 'pd', 'plan --detailed-exitcode'], env)).code).toBe(0);
    for (const args of [
      ['lsit', '--Detailed-exitcode'],
      ['pln', '--detail'],
      ['plan', '--detailed-exitcod'],
      ['pd', '--nope'],
    ])
      expect((await fromPackage(args, env)).code, args.join(' ')).toBe(1);
    expect((await caches()).toSorted()).toEqual([
      `gds-bundle-${length}-alias.cache`,
      `gds-bundle-${length}-help.cache`,
      `gds-bundle-${length}-list.cache`,
    ]);
    // plan and apply keep one too, made under the V8 flags their runs start with (a plan sets some as it reads
    // the project): the next plan reads it, so it is not written anew.
    const dbt = await dbtProject('dbt', {});
    const connector = ['--connector', server.ready.connectors[0]?.id ?? ''];
    const project = ['--dbt', dbt, ...connector, '--json'];
    // A plan with changes under --detailed-exitcode ends with 2, which is no usage error: it keeps a cache,
    // through an alias of plan --detailed-exitcode too.
    const changing = await dbtProject('dbt-changes', {
      'model.shop.bundle_changes': model('bundle_changes', {
        schema: 'analytics_dev',
        compiled_code: 'select 1 as id',
      }),
    });
    await server.sql('CREATE TABLE analytics_dev.bundle_changes (id integer)');
    const changes = await fromPackage(['plan', '--dbt', changing, ...connector, '--detailed-exitcode'], env);
    const viaAlias = await fromPackage(['pd', '--dbt', changing, ...connector], env);
    expect([changes.code, viaAlias.code], changes.stderr + viaAlias.stderr).toEqual([2, 2]);
    expect(changes.stdout).toMatch(/^\+ create bundle_changes /m);
    const plan = await fromPackage(['plan', ...project], env);
    const apply = await fromPackage(['apply', ...project, '--yes'], env);
    expect([plan.code, apply.code], plan.stderr + apply.stderr).toEqual([0, 0]);
    expect((await caches()).toSorted()).toEqual([
      `gds-bundle-${length}-alias.cache`,
      `gds-bundle-${length}-apply.cache`,
      `gds-bundle-${length}-help.cache`,
      `gds-bundle-${length}-list.cache`,
      `gds-bundle-${length}-pd.cache`,
      `gds-bundle-${length}-plan.cache`,
    ]);
    const planCache = join(cacheDir, folder, `gds-bundle-${length}-plan.cache`);
    const written = await stat(planCache);
    const again = await fromPackage(['plan', ...project], env);
    expect({ code: again.code, stdout: again.stdout }).toEqual({ code: plan.code, stdout: plan.stdout });
    // A cache written anew is a new file (written beside, then renamed over it).
    expect((await stat(planCache)).ino).toBe(written.ino);
    // Off with Node's compile cache.
    const off = await fromPackage(['auth', 'status'], { ...env, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(off.code, off.stderr).toBe(0);
    expect(await caches()).toHaveLength(6);
  });

  // bin/run.js reads the bundle as latin1 (one byte a character, as the executable does): a character beyond
  // ASCII left in it (a `…` in a tagged template, a raw U+009B in a regular expression, neither of which
  // esbuild's `charset: 'ascii'` escapes) was read as two or three others.
  it('is ASCII only: a message with `…` reads as a checkout writes it', async () => {
    expect(firstNonAscii(await readFile(bundled, 'utf8'))).toBeUndefined();
    const dbt = await dbtProject('dbt-env', {});
    const dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    const args = ['plan', '--dbt', dbt, '--connector', dev, '--env', 'production'];
    const [bundle, checkout] = await Promise.all([fromPackage(args, owner()), fromCheckout(args, owner())]);
    expect(bundle.code, bundle.stderr).toBe(2);
    expect(bundle.stderr).toContain('environments: {production: {connector: …}}');
    expect({ code: bundle.code, stdout: bundle.stdout, stderr: bundle.stderr }).toEqual({
      code: checkout.code,
      stdout: checkout.stdout,
      stderr: checkout.stderr,
    });
  });

  it('loads PostgreSQL’s parser from node_modules for a predicate that needs it, and only then', async () => {
    const parser = (r: Run) => files(r.modules).filter((url) => url.includes('/node_modules/libpg-query/'));
    const plain = await fromPackage(['gate', 'validate', '-f', 'plain.yml']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(bundleOf(plain.modules)).toEqual(['gds.cjs']);
    expect(plain.modules).toContain('/node_modules/yaml/dist/index.js');
    expect(parser(plain)).toEqual([]);
    const sql = await fromPackage(['gate', 'validate', '-f', 'sql.yml']);
    expect(sql.code, sql.stderr).toBe(0);
    expect(parser(sql).length).toBeGreaterThan(0);
  });

  it('serves as its own keychain child: one request on stdin, one JSON answer on stdout', async () => {
    const child = spawn(
      node24,
      [join(installed, 'dist/bundle/gds.cjs'), '__gds_keychain_child'],
      // No session bus: the keychain refuses, and the child says so in its answer.
      { cwd: dir, env: cliEnv({ DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' }) },
    );
    child.stdin?.end(JSON.stringify({ op: 'get', service: 'gds-bundle-test', account: 'nobody' }));
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    const answer = JSON.parse(r.stdout) as { ok: boolean };
    expect(typeof answer.ok).toBe('boolean');
    expect(r.stdout).not.toContain('USAGE');
  });
});

describe(
  'the package’s bundle reading a profile kept in the OS keychain',
  needs(await whyNoSecretService()),
  () => {
    it('reads the token through its own keychain child, as dist/ does', async () => {
      // A keychain that answers may take longer than gds's 3 s limit on a loaded machine (a fresh-clone CI run
      // at load 15-20 saw `auth set` fall back to the config file): the test checks where the token goes, not
      // how fast the keychain answers.
      const env = {
        GDS_CONFIG_DIR: join(dir, 'keychain-config'),
        GDS_SECRET_STORAGE: undefined,
        GDS_KEYCHAIN_TIMEOUT_MS: '60000',
      };
      const inEnv = (args: string[], entry: string) =>
        collect(spawn(node24, [entry, ...args], { cwd: dir, env: cliEnv(env) }));
      const saved = await inEnv(
        [
          'auth',
          'set',
          '--token',
          server.user('OWNER').cliToken,
          '--base',
          server.url,
          '--profile',
          'kc',
          '--json',
        ],
        join(repoRoot, 'bin/run.js'),
      );
      expect(saved.code, saved.stderr).toBe(0);
      const config = JSON.parse(await readFile(join(env.GDS_CONFIG_DIR, 'config.json'), 'utf8')) as {
        profiles: Record<string, { secretRef?: { store: string } }>;
      };
      expect(config.profiles.kc?.secretRef?.store, saved.stderr).toBe('keychain');
      try {
        const listed = await inEnv(['list', '--json', '--profile', 'kc'], join(installed, 'bin/run.js'));
        expect(listed.code, listed.stderr).toBe(0);
        expect(listed.stdout.trimEnd().split('\n').length).toBeGreaterThan(0);
        expect(JSON.parse(listed.stdout.split('\n')[0] ?? '')).toHaveProperty('id');
      } finally {
        await inEnv(['auth', 'logout', '--profile', 'kc'], join(repoRoot, 'bin/run.js'));
      }
    });
  },
);
