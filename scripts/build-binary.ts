// `npm run build:binary`: dist/gds, the whole CLI as one Node 24 single executable application.
//   1. tsc (dist/ for `node bin/run.js`, and the type check);
//   2. ajv standalone: the gate1.yml schema validator compiled now, not at run time;
//   3. esbuild: scripts/sea/entry.ts and everything it reaches, oclif's plugins included, into one CJS file;
//      heavy modules stay behind their `await import()` (esbuild turns each into a lazy require);
//      a bundle of its own for each command the training runs (the same entry with that command alone:
//      sea/command-bundles.ts), and packages of rare paths (undici, openid-client) as bundles of their own
//      that every other bundle evaluates on first import (assetModules, sea/asset-module.ts);
//   4. two V8 code caches of the bundle (help's, the runs'), and one per command bundle, trained by running it through the start-up paths (scripts/sea/train.ts),
//      which also keeps the help pages oclif printed, for the boot script to serve (sea/precomputed-help.ts);
//   5. the SEA blob: scripts/sea/boot.ts as main (it serves help pages rendered before, precomputed-help.ts, and picks a command's own bundle when it has one), the bundles, their code caches, the help pages, the keychain addon,
//      PostgreSQL's parser (libpg-query's WebAssembly) and jq's WebAssembly (jq-wasm's jq.wasm) as assets;
//   6. a copy of Node 24's own binary, stripped, with the blob injected by postject.
// Options: --no-minify; --skip-tsc when dist/ is built already (the tests share one tsc build under a lock).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fsPromises, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import { build } from 'esbuild';
import type { BuildOptions, Plugin } from 'esbuild';
import type { Interfaces } from '@oclif/core';
import { gate1Schema } from '../src/core/gate1/schema.js';
import { gate1AjvOptions } from '../src/core/gate1/schema-validator.js';
import { bundleWrapper } from './sea/bundle-script.js';
import { commandBundleRoute } from '../src/cli/command-route.js';
import type { CommandBundles } from '../src/cli/command-route.js';
import { cacheVariant, commandBundleAsset, routesOf } from './sea/command-bundles.js';

export const root = fileURLToPath(new URL('../', import.meta.url));
// Under dist/ (ignored by git, eslint and prettier): the bundle, its metafile, the SEA blob.
const work = join(root, 'dist/sea-build');
const node = join(root, 'node_modules/.bin/node');
const seaFuse = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** Packages whose evaluation the executable reports under GDS_TEST_LOADED_MODULES (test/binary). */
const markedModules = /[\\/]node_modules[\\/].+\.[cm]?js$/;
/**
 * V8 options of every run of the executable (the SEA's execArgv), and of the runs that train its code caches:
 * V8 refuses a cache made under other flags. A young generation of at most 2 x 8 MiB: with V8's default
 * (16 MiB a semi-space) `records import` of 1,000,000 rows peaked at 147-153 MiB, with 8 at 103 MiB (89
 * at 10,000 rows): a batch that lives across scavenges made V8 grow the young generation over the run.
 */
const executableNodeOptions = ['--max-semi-space-size=8'];

/** A file the build puts in the executable, and its sha256 (the executable checks a native addon's before
 *  use; WebAssembly is validated by V8 as it compiles). */
export interface Asset {
  path: string;
  sha256: string;
}

export interface BinaryOptions {
  output: string;
  tsc: boolean;
  minify: boolean;
  /** The keychain addons of other platforms the bundle accepts, by `<platform>-<arch>` (build-binaries.ts). */
  otherKeyrings?: Record<string, Asset>;
}

/** What an executable is made of besides Node: its boot script and its SEA assets, as built. */
export interface SeaInputs {
  boot: string;
  assets: Record<string, string>;
}

/** One executable to make from the built inputs: the Node it starts from, and how to finish it. */
export interface ExecutableTarget {
  nodeBinary: string;
  output: string;
  /**
   * Whether the V8 code caches (Node's and the two trained ones) and the precomputed help go in: only on the
   * build machine's own platform, as a cache made here crashes or is refused elsewhere (Node's SEA docs).
   */
  native: boolean;
  /** The keychain addon for the target's platform, when it is not the build machine's. */
  keyring?: string;
  /** The `strip` for the target's binary format, when there is one here. */
  strip?: string;
  /** A Mach-O binary (macOS): postject puts the blob in a segment of its own. */
  macho?: boolean;
}

interface PluginEntries {
  commands: Array<[id: string, file: string]>;
  hooks: Array<[event: string, file: string, identifier: string]>;
}

/** Builds dist/gds for this machine, and returns what other platforms' executables are made of. */
export async function buildBinary(options: BinaryOptions): Promise<SeaInputs> {
  const started = performance.now();
  if (options.tsc) {
    await exec(node, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  }
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const keyring = keyringAddon();
  const keyrings = { ...options.otherKeyrings, [`${process.platform}-${process.arch}`]: keyring };
  const pgWasm = packageFile('libpg-query/wasm/libpg-query.wasm');
  const jq = await jqWasmAsset();
  const bundle = join(work, 'gds.cjs');
  const [gate1Validator, manifestFile] = [await writeGate1Validator(), await writeCommandManifest()];
  const bundleBuild = (outfile: string, ...plugins: Plugin[]) =>
    build({
      ...scriptOptions(options),
      entryPoints: [join(root, 'scripts/sea/entry.ts')],
      outfile,
      banner: { js: bundleWrapper.head },
      footer: { js: bundleWrapper.tail },
      // oclif reaches for the TypeScript compiler only to run uncompiled sources, which the bundle never does.
      external: ['typescript'],
      define: {
        GDS_NATIVE_ADDONS: JSON.stringify({
          keyring: Object.fromEntries(
            Object.entries(keyrings).map(([platform, addon]) => [platform, addon.sha256]),
          ),
        }),
      },
      metafile: true,
      plugins: [...plugins, assetModuleImports(), bundleModules(gate1Validator, manifestFile)],
    });
  const assetBundles = await buildAssetModules(options, bundleModules(gate1Validator, manifestFile));
  const { metafile } = await bundleBuild(bundle);
  await writeFile(join(work, 'meta.json'), JSON.stringify(metafile));
  // A bundle of its own for each command the runs' training goes through (commandBundles): only that command's
  // code, compiled with its own code cache, for the command lines boot.ts routes to it.
  const manifest = readJson(manifestFile) as Interfaces.Manifest;
  const table = commandBundleTable(manifest);
  const { own } = table;
  const ownBundles = await Promise.all(
    own.map(async (id) => {
      const file = join(work, `command-${id.replaceAll(':', '-')}.cjs`);
      const built = await bundleBuild(file, commandOnly(id, manifest));
      await writeFile(file.replace(/\.cjs$/, '.meta.json'), JSON.stringify(built.metafile));
      const runs = trainingRuns.filter((argv) => routeOf(argv)?.id === id);
      const jqRuns = runs.filter((argv) => cacheVariant(argv) === 'jq');
      const plainRuns = runs.filter((argv) => cacheVariant(argv) === 'plain');
      return {
        id,
        file,
        caches: [
          {
            kind: 'cache' as const,
            file: file.replace(/\.cjs$/, '.cache'),
            runs: plainRuns.length > 0 ? plainRuns : runs,
          },
          ...(jqRuns.length > 0 && plainRuns.length > 0
            ? [{ kind: 'jq.cache' as const, file: file.replace(/\.cjs$/, '.jq.cache'), runs: jqRuns }]
            : []),
        ],
      };
    }),
  );
  const [boot, trainer] = [join(work, 'boot.cjs'), join(work, 'train.cjs')];
  await build({
    ...scriptOptions(options),
    entryPoints: [join(root, 'scripts/sea/boot.ts')],
    outfile: boot,
    // What the boot script keeps in the user's cache (help rendered on a terminal) is filed by build.
    define: {
      GDS_BUILD_ID: JSON.stringify(sha256Of(bundle).slice(0, 16)),
      GDS_COMMAND_BUNDLES: JSON.stringify({
        ...table,
        jq: ownBundles.filter(({ caches }) => caches.length > 1).map(({ id }) => id),
      } satisfies CommandBundles),
    },
  });
  await build({
    ...scriptOptions(options),
    entryPoints: [join(root, 'scripts/sea/train.ts')],
    outfile: trainer,
  });
  const [codeCache, helpCodeCache] = [join(work, 'gds.cache'), join(work, 'gds-help.cache')];
  const help = join(work, 'help.json');
  await trainCodeCache(trainer, bundle, { run: codeCache, help: helpCodeCache, helpPages: help }, ownBundles);
  const inputs: SeaInputs = {
    boot,
    assets: {
      'gds.cjs': bundle,
      'gds.cache': codeCache,
      'gds-help.cache': helpCodeCache,
      ...assetBundles,
      ...Object.fromEntries(
        ownBundles.flatMap(({ id, file, caches }) => [
          [commandBundleAsset(id, 'cjs'), file],
          ...caches.map(({ kind, file: cache }) => [commandBundleAsset(id, kind), cache]),
        ]),
      ),
      'help.json': help,
      'keyring.node': keyring.path,
      'libpg-query.wasm': pgWasm.path,
      'jq.wasm': jq.path,
    },
  };
  const strip = (await commandExists('strip')) ? 'strip' : undefined;
  if (strip === undefined)
    process.stderr.write('build:binary: `strip` not found (Debian: binutils); the executable stays larger\n');
  await makeExecutable(inputs, { nodeBinary: nodeBinary(), output: options.output, native: true, strip });
  const mib = (statSync(options.output).size / 2 ** 20).toFixed(0);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`build:binary: ${relative(root, options.output)} (${mib} MiB) in ${seconds} s\n`);
  return inputs;
}

/** The SEA blob of `inputs` injected into a copy of the target's Node, written to `target.output`. */
export async function makeExecutable(inputs: SeaInputs, target: ExecutableTarget): Promise<void> {
  const dir = await mkdtemp(join(work, 'exe-'));
  try {
    const assets = { ...inputs.assets };
    if (target.keyring !== undefined) assets['keyring.node'] = target.keyring;
    if (!target.native) {
      // Empty caches compile the bundle without one; help pages that match no user agent are never served.
      for (const name of Object.keys(assets).filter((asset) => asset.endsWith('.cache'))) {
        assets[name] = join(dir, name);
        await writeFile(assets[name], '');
      }
      assets['help.json'] = join(dir, 'help.json');
      await writeFile(assets['help.json'], JSON.stringify({ userAgent: '', pages: {} }));
    }
    const blob = join(dir, 'gds.blob');
    const seaConfig = join(dir, 'sea-config.json');
    await writeFile(
      seaConfig,
      JSON.stringify({
        main: inputs.boot,
        output: blob,
        disableExperimentalSEAWarning: true,
        // NODE_OPTIONS belongs to the user's Node, not to gds: a `--require` or `--import` meant for it
        // would otherwise run inside (or break) the executable. Child processes still see it.
        execArgvExtension: 'none',
        execArgv: [...executableNodeOptions],
        useCodeCache: target.native,
        assets,
      }),
    );
    await exec(node, ['--experimental-sea-config', seaConfig], { quiet: true });
    const temp = join(dir, 'gds');
    await copyFile(target.nodeBinary, temp);
    await chmod(temp, 0o755);
    if (target.strip !== undefined) await exec(target.strip, [temp]);
    const macho = target.macho === true ? ['--macho-segment-name', 'NODE_SEA'] : [];
    await exec(node, [postjectCli(), temp, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', seaFuse, ...macho], {
      quiet: true,
    });
    await mkdir(dirname(target.output), { recursive: true });
    // A copy, not a rename: postject wrote the file in one piece, which leaves it in the page cache as large
    // folios that every run then maps whole (measured here: 67 MiB peak for `--version` instead of 47).
    await rm(target.output, { force: true });
    await copyFile(temp, target.output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What the npm package's bundles load from node_modules, as the rest of the package does. */
const packageExternals = [
  'typescript',
  '@napi-rs/keyring',
  'jq-wasm',
  'libpg-query',
  'openid-client',
  'undici',
  'undici/*',
];

/**
 * A CommonJS file has no import.meta: the modules that find a file by their own URL (jq-wasm's WebAssembly,
 * the keychain child) get the bundle's.
 */
const packageBanner = "var __gdsBundleUrl = require('node:url').pathToFileURL(__filename).href;";

/** The folder of the npm package's command bundles, made by `npm pack` (prepack) and removed after it. */
export const packageBundleDir = join(root, 'dist/bundle');

/**
 * The npm package's command bundles (scripts/build-package-bundles.ts, run by prepack): for each command with a
 * bundle of its own in the executable, the same bundle for a plain Node (no code cache, no assets: the keychain addon, undici, openid-client and the
 * WebAssembly of PostgreSQL's parser and jq load from node_modules), and bundles.json, by which bin/run.js
 * routes a command line to one. Such a command then reads one file instead
 * of resolving and compiling oclif's and gds's modules one by one (docs/bench.md has the figures). Needs
 * dist/ built: the manifest comes from its classes.
 */
export async function buildPackageBundles(outDir: string, options: { minify: boolean }): Promise<string[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'gds-package-bundles-'));
  // The generated gate1 validator lies in that temporary folder, outside the project: its `ajv/dist/…`
  // requires resolve from the project's node_modules, not from whatever the folder's parents hold.
  const nodePaths = [join(root, 'node_modules')];
  try {
    const gate1Validator = await writeGate1Validator(scratch);
    const manifestFile = await writeCommandManifest(scratch);
    const manifest = readJson(manifestFile) as Interfaces.Manifest;
    const table = commandBundleTable(manifest);
    const { own } = table;
    await rm(outDir, { recursive: true, force: true });
    await mkdir(outDir, { recursive: true });
    await Promise.all(
      own.map((id) =>
        build({
          ...scriptOptions({ output: '', tsc: false, minify: options.minify }),
          entryPoints: [join(root, 'scripts/sea/entry.ts')],
          outfile: join(outDir, commandBundleAsset(id, 'cjs')),
          nodePaths,
          external: packageExternals,
          define: { 'import.meta.url': '__gdsBundleUrl' },
          banner: { js: packageBanner },
          plugins: [commandOnly(id, manifest), bundleModules(gate1Validator, manifestFile, 'package')],
        }),
      ),
    );
    await writeFile(join(outDir, 'bundles.json'), JSON.stringify(table));
    return own;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function scriptOptions(options: BinaryOptions): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    // ASCII only (esbuild's default): boot.ts reads the bundle as latin1, one byte per character.
    charset: 'ascii',
    minify: options.minify,
    legalComments: 'none',
    logLevel: 'error',
  };
}

/**
 * What the code caches are trained on. Two caches, as V8 deserialises a whole cache at every start
 * (boot.ts picks one by the arguments, bundle-script.ts): help's (the root, each topic and each command's
 * --help; the pages printed are kept for precomputed-help.ts), and the runs' (a flag error, a --json run,
 * a network command up to its request, and the commands of the start-up budget). A profile, not a list of
 * commands: a command not run here works the same, its own code compiles on first call.
 */
async function trainCodeCache(
  trainer: string,
  bundle: string,
  files: { run: string; help: string; helpPages: string },
  ownBundles: ReadonlyArray<{ file: string; caches: ReadonlyArray<{ file: string; runs: string[][] }> }>,
): Promise<void> {
  const { COMMANDS } = await import('../src/commands/index.js');
  const scratch = await mkdtemp(join(tmpdir(), 'gds-train-'));
  try {
    const gate1 = 'patternChecks:\n  - {name: code, column: code, regex: "^[A-Z]+$", severity: WARN}\n';
    await writeFile(join(scratch, 'a.yml'), gate1);
    await writeFile(join(scratch, 'b.yml'), gate1.replace('WARN', 'HARD_FAIL'));
    await writeFile(
      join(scratch, 'v.sql'),
      'CREATE VIEW analytics.v AS SELECT id, amount::numeric AS amount FROM t',
    );
    const ids = Object.keys(COMMANDS);
    const topics = new Set(
      ids.flatMap((id) =>
        id
          .split(':')
          .slice(0, -1)
          .map((_, i, words) => words.slice(0, i + 1).join(':')),
      ),
    );
    const helpRuns = [
      ['--help'],
      ['-h'],
      ...[...topics].filter((topic) => !ids.includes(topic)).map((topic) => [...topic.split(':'), '--help']),
      ...ids.map((id) => [...id.split(':'), '--help']),
    ];
    const options = {
      quiet: true,
      cwd: scratch,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch },
    };
    const train = (...args: string[]) => exec(node, [...executableNodeOptions, trainer, ...args], options);
    await train(bundle, files.help, JSON.stringify(helpRuns), files.helpPages);
    await train(bundle, files.run, JSON.stringify(trainingRuns));
    // Each command's own bundle, on the runs of that command (its --jq runs apart, cacheVariant).
    await Promise.all(
      ownBundles.flatMap(({ file, caches }) =>
        caches.map(({ file: cache, runs }) => train(file, cache, JSON.stringify(runs))),
      ),
    );
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  const written = [
    files.run,
    files.help,
    files.helpPages,
    ...ownBundles.flatMap(({ caches }) => caches.map(({ file }) => file)),
  ];
  if (!written.every((file) => existsSync(file)))
    throw new Error('The code cache training wrote no cache or no help pages.');
}

/**
 * The runs the runs' code cache is trained on (run from a folder holding a.yml, b.yml and v.sql): a flag
 * error, a --json run, a network command up to its request, and the commands of the start-up budget. Each
 * command named here also gets a bundle of its own (ownBundleCommands), trained on its own runs.
 */
const trainingRuns: string[][] = [
  ['gate', 'validate', '-f', 'a.yml'],
  ['gate', 'validate', '-f', 'a.yml', '--json'],
  // gate validate with a table id: a network command's path.
  ['gate', 'validate', 't_1', '-f', 'a.yml', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  ['gate', 'diff', '-f', 'b.yml', '--against', 'a.yml', '--semantic'],
  ['gate', 'diff', '--nope'],
  ['gate', 'diff', '--nope', '--json'],
  // A network command's path (credentials, client, transport) up to a refused connection.
  ['list', '--json', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // --jq with a filter outside gds's own subset: jq-wasm's glue in list's cache (7 ms of CPU per run).
  ['list', '--jq', '[.id, .name] | @tsv', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
  // push parses the view (PostgreSQL's grammar, from node_modules here) before its refused request.
  ['push', 'v.sql', '--json', '--token', 'cli_training_only', '--base', 'http://127.0.0.1:9'],
];

let routesForTraining: CommandBundles['routes'] = {};

function routeOf(argv: readonly string[]): { id: string } | undefined {
  const routes = routesForTraining;
  return commandBundleRoute(argv, { routes, own: Object.keys(routes), helpFlags: [] });
}

function commandRoutes(manifest: Interfaces.Manifest): CommandBundles['routes'] {
  routesForTraining = routesOf(manifest.commands);
  return routesForTraining;
}

/**
 * The one routing table of both entries (command-route.ts CommandBundles): every command's routing fields,
 * the commands with a bundle of their own, oclif's help flags.
 */
function commandBundleTable(manifest: Interfaces.Manifest): CommandBundles {
  const routes = commandRoutes(manifest);
  const pjson = readJson(join(root, 'package.json')) as Interfaces.PJSON;
  const helpFlags = [...new Set(['--help', ...(pjson.oclif.additionalHelpFlags ?? [])])];
  return { routes, own: ownBundleCommands(routes), helpFlags };
}

/** gds's commands the runs' training goes through: each gets a bundle of its own. */
function ownBundleCommands(routes: CommandBundles['routes']): string[] {
  const { COMMAND_LOADERS } = loadersById();
  const ids = new Set<string>();
  for (const argv of trainingRuns) {
    const route = commandBundleRoute(argv, { routes, own: Object.keys(routes), helpFlags: [] });
    if (route === undefined)
      throw new Error(`build:binary: the training run \`${argv.join(' ')}\` names no command`);
    if (Object.hasOwn(COMMAND_LOADERS, route.id) && route.id !== '__complete') ids.add(route.id);
  }
  return [...ids];
}

/** src/commands/loaders.ts's table, read as text: each command id and the module its loader imports. */
function loadersById(): { COMMAND_LOADERS: Record<string, string> } {
  const file = join(root, 'src/commands/loaders.ts');
  const source = readFileSync(file, 'utf8');
  const table: Record<string, string> = {};
  for (const match of source.matchAll(/^\s*(?:'([^']+)'|([\w$]+)): \(\) => import\('([^']+)'\),?$/gm)) {
    const [, quoted, bare, module] = match;
    table[(quoted ?? bare) as string] = resolve(dirname(file), (module as string).replace(/\.js$/, '.ts'));
  }
  return { COMMAND_LOADERS: table };
}

/**
 * A bundle of one command: its loader alone in the command table, the manifest with its entry alone (oclif's
 * config then builds no entry, permutation or topic for the others), and no plugin command. Used only for
 * command lines routed to it (boot.ts, bin/run.js).
 */
function commandOnly(id: string, manifest: Interfaces.Manifest): Plugin {
  const module = loadersById().COMMAND_LOADERS[id];
  if (module === undefined) throw new Error(`build:binary: src/commands/loaders.ts has no loader for ${id}`);
  const commands = { [id]: manifest.commands[id] };
  return {
    name: 'gds-command-only',
    setup(b) {
      b.onResolve({ filter: /[\\/]commands[\\/]loaders\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path) === join(root, 'src/commands/loaders.js')
          ? { path: 'loaders', namespace: 'gds-command-only' }
          : undefined,
      );
      b.onResolve({ filter: /^gds:embedded-manifest$/ }, () => ({
        path: 'manifest',
        namespace: 'gds-command-only',
      }));
      b.onResolve({ filter: /^gds:embedded-plugins$/ }, () => ({
        path: 'plugins',
        namespace: 'gds-command-only',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-command-only' }, (args) => ({
        contents: {
          loaders: `export const COMMAND_LOADERS = { ${JSON.stringify(id)}: () => import(${JSON.stringify(module)}) };`,
          manifest: `export default ${JSON.stringify({ ...manifest, commands })};`,
          plugins: embeddedPluginsSource({ commands: [], hooks: pluginEntries().hooks }),
        }[args.path],
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * Packages only a rare path runs, each kept out of the command bundles as a bundle of its own (a SEA asset,
 * by name), evaluated on first import (scripts/sea/asset-module.ts): a bundle's source is copied into V8's
 * heap at every start, used or not. undici (openid-client's fetch when signing in or refreshing a session,
 * and its proxy agent) was 536 kB of the 1.3 MB of `gds list`'s bundle; openid-client with oauth4webapi
 * and jose another 83 kB. Each asset holds packages nothing else in the bundle imports, so no module is
 * evaluated twice. Specifier -> [asset, export of the asset that stands for it].
 */
const assetModules: Record<string, [asset: string, member: string]> = {
  undici: ['undici.cjs', 'undici'],
  'undici/lib/web/fetch/index.js': ['undici.cjs', 'fetch'],
  'openid-client': ['openid-client.cjs', 'openidClient'],
};

/** The asset bundles of assetModules, built under dist/sea-build: asset name -> file. */
async function buildAssetModules(options: BinaryOptions, modules: Plugin): Promise<Record<string, string>> {
  const byAsset = new Map<string, Array<[specifier: string, member: string]>>();
  for (const [specifier, [asset, member]] of Object.entries(assetModules)) {
    byAsset.set(asset, [...(byAsset.get(asset) ?? []), [specifier, member]]);
  }
  const files: Record<string, string> = {};
  for (const [asset, members] of byAsset) {
    files[asset] = join(work, asset);
    await build({
      ...scriptOptions(options),
      stdin: {
        contents: `module.exports = { ${members.map(([specifier, member]) => `${member}: require(${JSON.stringify(specifier)})`).join(', ')} };`,
        resolveDir: root,
        loader: 'js',
      },
      outfile: files[asset],
      banner: { js: bundleWrapper.head },
      footer: { js: bundleWrapper.tail },
      plugins: [modules],
    });
  }
  return files;
}

/** In a command bundle, each import of an assetModules package reads its asset bundle instead. */
function assetModuleImports(): Plugin {
  const loader = join(root, 'scripts/sea/asset-module.ts');
  return {
    name: 'gds-asset-modules',
    setup(b) {
      const names = Object.keys(assetModules).map((specifier) => specifier.replace(/[./]/g, '\\$&'));
      b.onResolve({ filter: new RegExp(`^(?:${names.join('|')})$`) }, (args) => ({
        path: args.path,
        namespace: 'gds-asset-module',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-asset-module' }, (args) => {
        const [asset, member] = assetModules[args.path] ?? [];
        return {
          contents: `module.exports = require(${JSON.stringify(loader)}).assetModule(${JSON.stringify(asset)})[${JSON.stringify(member)}];`,
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}

/**
 * Every module that exists only in the bundle, and the redirects that put them in place. The npm package's
 * command bundles (buildPackageBundles) load the keychain addon and the WebAssembly of PostgreSQL's parser and
 * of jq from node_modules, as the rest of the package does: they take none of the executable's redirects.
 */
function bundleModules(
  gate1Validator: string,
  manifestFile: string,
  flavour: 'executable' | 'package' = 'executable',
): Plugin {
  const keyringShim = join(root, 'scripts/sea/keyring.ts');
  const schemaValidator = join(root, 'src/core/gate1/schema-validator.ts');
  const jqLoadOptions = join(root, 'src/cli/jq-load-options.ts');
  return {
    name: 'gds-bundle-modules',
    setup(b) {
      b.onResolve({ filter: /^gds:embedded-plugins$/ }, () => ({ path: 'plugins', namespace: 'gds' }));
      b.onLoad({ filter: /^plugins$/, namespace: 'gds' }, () => ({
        contents: embeddedPluginsSource(pluginEntries()),
        resolveDir: root,
        loader: 'js',
      }));
      b.onResolve({ filter: /^gds:gate1-standalone-validator$/ }, () => ({ path: gate1Validator }));
      // node:fs/promises loads readline's interface and the REPL's history at its top (+1 MiB resident and
      // 1 ms, measured beside node:http): gds's config reader and oclif's file helpers import it at their
      // top but call it only on some paths. Each of its functions is looked up on first call instead.
      b.onResolve({ filter: /^(?:node:)?fs\/promises$/ }, () => ({
        path: 'fs-promises',
        namespace: 'gds-lazy-builtin',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-lazy-builtin' }, () => ({
        contents: Object.keys(fsPromises)
          .map(
            (name) =>
              `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => require('node:fs').promises[${JSON.stringify(name)}] });`,
          )
          .join('\n'),
        loader: 'js',
      }));
      b.onResolve({ filter: /^gds:embedded-manifest$/ }, () => ({ path: manifestFile }));
      // @inquirer/prompts' index re-exports every prompt; in a lazily loaded module esbuild keeps them all (the
      // editor prompt alone brings iconv-lite: +0.8 MB of bundle that every start-up reads, +10 MiB resident,
      // measured). Its importers get the prompts they use only (promptsUsed); another prompt fails the build.
      b.onResolve({ filter: /^@inquirer\/prompts$/ }, async (args) => {
        const importer = Object.keys(promptsUsed).find((file) => args.importer.includes(file));
        if (importer === undefined || args.pluginData === 'real') return;
        const { kind, resolveDir } = args;
        const real = await b.resolve(args.path, {
          kind,
          resolveDir,
          importer: args.importer,
          pluginData: 'real',
        });
        return { path: importer, namespace: 'gds-prompts', pluginData: dirname(real.path) };
      });
      b.onLoad({ filter: /.*/, namespace: 'gds-prompts' }, (args) => ({
        contents: (promptsUsed[args.path] ?? [])
          .map((prompt) => `export { default as ${prompt} } from '@inquirer/${prompt}';`)
          .join('\n'),
        resolveDir: args.pluginData as string,
        loader: 'js',
      }));
      b.onResolve({ filter: /[\\/]schema-validator\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts')) === schemaValidator
          ? { path: join(root, 'scripts/sea/gate1-schema-validator.ts') }
          : undefined,
      );
      // Each package module records that it ran, for the start-up tests; nothing is written unless asked.
      b.onLoad({ filter: markedModules }, async (args) => {
        const path = args.path.split(sep).join('/');
        const id = path.slice(path.indexOf('/node_modules/'));
        const contents = rewritten(id, await readFile(args.path, 'utf8'));
        return {
          contents: `${contents}\n;(globalThis.__gdsLoadedModules ??= new Set()).add(${JSON.stringify(id)});\n`,
          loader: 'js',
        };
      });
      if (flavour === 'package') return;
      b.onResolve({ filter: /^@napi-rs\/keyring$/ }, () => ({ path: keyringShim }));
      b.onResolve({ filter: /^gds:libpg-query-options$/ }, () => ({
        path: join(root, 'scripts/sea/libpg-query-options.ts'),
      }));
      // jq-wasm gets its WebAssembly from the asset jq.wasm (scripts/sea/jq-options.ts). Its ES module entry
      // finds its folder by import.meta.url, which a CommonJS bundle does not have: the bundle takes its
      // CommonJS entry, which reads __dirname only when no WebAssembly is given.
      b.onResolve({ filter: /^jq-wasm$/ }, () => ({
        path: join(root, 'node_modules/jq-wasm/dist/index.cjs'),
      }));
      b.onResolve({ filter: /[\\/]jq-load-options\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts')) === jqLoadOptions
          ? { path: join(root, 'scripts/sea/jq-options.ts') }
          : undefined,
      );
    },
  };
}

/** The prompts of @inquirer/prompts each importer uses (by a part of its path), see bundleModules. gds's own
 *  prompts (src/cli/prompt.ts) import @inquirer/confirm, password and select alone. */
const promptsUsed: Record<string, string[]> = {
  [['', '@oclif', 'plugin-not-found', ''].join(sep)]: ['confirm'],
};

/**
 * Package code changed in the bundle, each to keep something heavy from loading at start-up. The build
 * fails when a package no longer has the line, so that an upgrade cannot undo one silently.
 */
type Rewrites = Record<string, Array<[from: string, to: string]>>;

const rewrites: Rewrites = {
  // undici's Client loads its HTTP/2 half, and with it node:http2 (+12 MiB resident, measured), at its
  // top; gds never offers h2 (no allowH2), so it is needed only if a server ever negotiates it.
  '/node_modules/undici/lib/dispatcher/client.js': [
    [
      "const connectH2 = require('./client-h2.js')",
      "const connectH2 = (client, socket) => require('./client-h2.js')(client, socket)",
    ],
  ],
  // libpg-query starts its Emscripten module with no options, which looks for the .wasm beside the script:
  // in the bundle it comes from the executable's asset instead (scripts/sea/libpg-query-options.ts).
  '/node_modules/libpg-query/wasm/index.cjs': [
    [
      'const initPromise = (0, libpg_query_js_1.default)().then(',
      "const initPromise = (0, libpg_query_js_1.default)(require('gds:libpg-query-options').moduleOptions).then(",
    ],
  ],
  // undici's fetch loads node:crypto at its top, for two things gds never asks of it: the random boundary
  // of a multipart body, and the hashes of a request's `integrity` (which also lists OpenSSL's hashes):
  // both load it on first use instead (about 5 % of `list --json`'s start-up, profiled).
  '/node_modules/undici/lib/web/fetch/body.js': [
    [
      "const random = runtimeFeatures.has('crypto')\n  ? require('node:crypto').randomInt\n  : (max) => Math.floor(Math.random() * max)",
      "const random = (max) => runtimeFeatures.has('crypto')\n  ? require('node:crypto').randomInt(max)\n  : Math.floor(Math.random() * max)",
    ],
  ],
  '/node_modules/undici/lib/web/fetch/index.js': [
    [
      "const { bytesMatch } = require('../subresource-integrity/subresource-integrity')",
      "const bytesMatch = (bytes, metadataList) => require('../subresource-integrity/subresource-integrity').bytesMatch(bytes, metadataList)",
    ],
  ],
  // oclif's own modules load node:child_process (and with it node:net and node:dgram), node:perf_hooks and
  // node:readline at their top, for a Windows shell probe, its performance marks (off unless asked) and
  // flags read from stdin: each loads on first use instead. Its platform probe reads WSL's files only
  // when the kernel's release names Microsoft, as WSL's do (is-wsl then decides).
  '/node_modules/@oclif/core/lib/util/os.js': [
    [
      'const node_child_process_1 = require("node:child_process");',
      'const node_child_process_1 = { execSync: (...args) => require("node:child_process").execSync(...args) };',
    ],
    [
      "return (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();",
      "return (0, node_os_1.release)().toLowerCase().includes('microsoft') && (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();",
    ],
  ],
  '/node_modules/@oclif/core/lib/performance.js': [
    [
      'const node_perf_hooks_1 = require("node:perf_hooks");',
      'const node_perf_hooks_1 = { get performance() { return require("node:perf_hooks").performance; }, get PerformanceObserver() { return require("node:perf_hooks").PerformanceObserver; } };',
    ],
  ],
  '/node_modules/@oclif/core/lib/parser/parse.js': [
    [
      'const node_readline_1 = require("node:readline");',
      'const node_readline_1 = { createInterface: (...args) => require("node:readline").createInterface(...args) };',
    ],
  ],
  // oclif reads the user's theme.json (in gds's config folder) at every start, through node:fs/promises:
  // through node:fs's callback instead, so node:fs/promises (lazy in the bundle, see bundleModules) is not loaded.
  '/node_modules/@oclif/core/lib/util/fs.js': [
    [
      "const contents = await (0, promises_1.readFile)(path, 'utf8');",
      "const contents = await new Promise((resolve, reject) => (0, node_fs_1.readFile)(path, 'utf8', (error, text) => (error ? reject(error) : resolve(text))));",
    ],
  ],
  // oclif logs through `debug`, whose loggers are made at the first log line of every run (node:tty, node:util,
  // supports-color and the colour tables): only when DEBUG is set, as `debug` would then print anything.
  '/node_modules/@oclif/core/lib/logger.js': [
    [
      'const debug_1 = __importDefault(require("debug"));',
      'const debug_1 = { get default() { return require("debug"); } };',
    ],
    [
      'const debug = (0, debug_1.default)(namespace);',
      'const debug = process.env.DEBUG ? (0, debug_1.default)(namespace) : () => {};',
    ],
  ],
  // oclif sorts the command list with localeCompare, whose first call maps ICU's collation data (+3 MiB
  // resident, measured): code-unit order is the same for gds's ids, which writeCommandManifest checks.
  '/node_modules/@oclif/core/lib/config/plugin.js': [
    [
      '.sort((a, b) => a.id.localeCompare(b.id));',
      '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));',
    ],
  ],
};

// oclif's modules load, at their top, packages for paths a run seldom takes: rendering an error (wrap-ansi,
// clean-stack, indent-string), a template (ejs), a glob of command files (tinyglobby), plugin patterns
// (minimatch), a package.json config (lilconfig), a spinner, a list, a module's package type, a themed colour:
// 37 modules in all, each now loaded on first use.
const lazyRequires: Rewrites = lazyOclifRequires({
  'config/config.js': ['ejs'],
  'config/plugin-loader.js': ['minimatch'],
  'config/plugin.js': ['tinyglobby'],
  'util/read-pjson.js': ['lilconfig'],
  'ux/action/spinner.js': ['cli-spinners', 'ansi-escapes'],
  'ux/list.js': ['wordwrap'],
  'module-loader.js': ['get-package-type'],
  'errors/handle.js': ['clean-stack'],
  'errors/errors/pretty-print.js': ['indent-string', 'wrap-ansi'],
  'errors/errors/cli.js': ['clean-stack', 'indent-string', 'wrap-ansi'],
  'help/util.js': ['ejs'],
  'help/formatter.js': ['indent-string', 'string-width', 'widest-line', 'wrap-ansi'],
  // supports-color probes the terminals and the environment at load, for a themed colour only
  'ux/supports-color.js': ['supports-color'],
});

/**
 * Rewrites that make each named package's top-level `require` in an @oclif/core module lazy, in the two
 * shapes tsc emits: `__importDefault(require("x"))`, read as `.default`, and a bare `require("x")` (or
 * `require('x')`), read by property or called.
 */
function lazyOclifRequires(files: Record<string, string[]>): Rewrites {
  const lazy: Rewrites = {};
  for (const [file, packages] of Object.entries(files)) {
    const id = `/node_modules/@oclif/core/lib/${file}`;
    const source = readFileSync(join(root, id), 'utf8');
    lazy[id] = packages.map((name): [string, string] => {
      const viaDefault = `__importDefault(require("${name}"));`;
      if (source.includes(viaDefault)) {
        return [viaDefault, `{ get default() { return __importDefault(require("${name}")).default; } };`];
      }
      const load = source.includes(`= require('${name}');`) ? `require('${name}')` : `require("${name}")`;
      return [
        `= ${load};`,
        `= new Proxy(function () {}, { get: (_, key) => ${load}[key], apply: (_, self, args) => ${load}(...args) });`,
      ];
    });
  }
  return lazy;
}

function rewritten(id: string, contents: string): string {
  let result = contents;
  for (const [from, to] of [...(rewrites[id] ?? []), ...(lazyRequires[id] ?? [])]) {
    if (!result.includes(from)) throw new Error(`build:binary: ${id} no longer has \`${from}\``);
    result = result.replace(from, to);
  }
  return result;
}

/** Commands (from each plugin's manifest) and hooks of the plugins package.json's oclif section lists. */
function pluginEntries(): PluginEntries {
  const pjson = readJson(join(root, 'package.json')) as { oclif: { plugins?: string[] } };
  const entries: PluginEntries = { commands: [], hooks: [] };
  for (const name of pjson.oclif.plugins ?? []) {
    const dir = join(root, 'node_modules', name);
    const plugin = readJson(join(dir, 'package.json')) as {
      oclif?: { hooks?: Record<string, HookSpec | HookSpec[]> };
    };
    const manifestFile = join(dir, 'oclif.manifest.json');
    if (!existsSync(manifestFile))
      throw new Error(`${name} ships no oclif.manifest.json: cannot list its commands`);
    const manifest = readJson(manifestFile) as { commands: Record<string, { relativePath?: string[] }> };
    for (const [id, command] of Object.entries(manifest.commands)) {
      if (command.relativePath === undefined) throw new Error(`${name}'s manifest has no path for ${id}`);
      entries.commands.push([id, join(dir, ...command.relativePath)]);
    }
    for (const [event, specs] of Object.entries(plugin.oclif?.hooks ?? {})) {
      for (const spec of [specs].flat()) {
        const { target, identifier } =
          typeof spec === 'string' ? { target: spec, identifier: 'default' } : spec;
        entries.hooks.push([event, moduleFile(join(dir, target)), identifier ?? 'default']);
      }
    }
  }
  return entries;
}

type HookSpec = string | { target: string; identifier?: string };

function embeddedPluginsSource({ commands, hooks }: PluginEntries): string {
  const lines: string[] = [];
  const commandMap = commands.map(
    ([id, file]) => `${JSON.stringify(id)}: () => import(${JSON.stringify(file)})`,
  );
  lines.push(`export const PLUGIN_COMMANDS = { ${commandMap.join(', ')} };`);
  const events = new Map<string, string[]>();
  for (const [event, file, identifier] of hooks) {
    const loader = `() => import(${JSON.stringify(file)}).then((m) => m[${JSON.stringify(identifier)}])`;
    events.set(event, [...(events.get(event) ?? []), loader]);
  }
  const hookMap = [...events].map(([event, loaders]) => `${JSON.stringify(event)}: [${loaders.join(', ')}]`);
  lines.push(`export const PLUGIN_HOOKS = { ${hookMap.join(', ')} };`);
  return lines.join('\n');
}

/**
 * oclif's manifest of every command the bundle holds, gds's and the plugins', made by oclif itself from the
 * built classes (dist/) as the executable's root plugin would make it at every start without one.
 */
async function writeCommandManifest(dir: string = work): Promise<string> {
  const { Plugin, settings } = await import('@oclif/core');
  settings.enableAutoTranspile = false;
  const target = join(dir, 'manifest-commands.mjs');
  const load = (file: string) => `require(${JSON.stringify(file)}).default`;
  const plugins = pluginEntries().commands;
  const pluginCommands = plugins.map(([id, file]) => `${JSON.stringify(id)}: ${load(file)}`);
  await writeFile(
    target,
    [
      `import { createRequire } from 'node:module';`,
      `import { COMMANDS as GDS_COMMANDS } from ${JSON.stringify(pathToFileURL(join(root, 'dist/commands/index.js')).href)};`,
      `const require = createRequire(import.meta.url);`,
      `export const COMMANDS = { ${pluginCommands.join(', ')}, ...GDS_COMMANDS };`,
    ].join('\n'),
  );
  const pjson = readJson(join(root, 'package.json')) as Interfaces.PJSON;
  pjson.oclif.plugins = [];
  pjson.oclif.commands = { strategy: 'explicit', target: relative(root, target), identifier: 'COMMANDS' };
  const plugin = new Plugin({ root, pjson, isRoot: true, ignoreManifest: true, errorOnManifestCreate: true });
  await plugin.load();
  const ids = Object.keys(plugin.manifest.commands);
  // The manifest comes from dist/ (tsc), the bundle's commands from src/: with --skip-tsc over a stale
  // dist/ they would disagree, and help would list commands the executable cannot find, or miss some.
  const { COMMAND_LOADERS } = await import('../src/commands/loaders.js');
  const bundled = [...plugins.map(([id]) => id), ...Object.keys(COMMAND_LOADERS)];
  if (ids.toSorted().join() !== bundled.toSorted().join()) {
    throw new Error('build:binary: dist/ does not hold the commands of src/: build without --skip-tsc');
  }
  if (ids.toSorted().join() !== ids.toSorted((a, b) => a.localeCompare(b)).join()) {
    throw new Error(
      'build:binary: command ids that code-unit order sorts unlike localeCompare (see rewrites)',
    );
  }
  const file = join(dir, 'manifest.json');
  await writeFile(file, JSON.stringify(plugin.manifest));
  return file;
}

/**
 * jq-wasm's WebAssembly, an asset of the executable: copied to dist/sea-build/jq.wasm, where the build's
 * training run (a plain node running the bundle) reads it too.
 */
async function jqWasmAsset(): Promise<Asset> {
  const path = join(work, 'jq.wasm');
  await copyFile(join(root, 'node_modules/jq-wasm/dist/build/jq.wasm'), path);
  return fileAsset(path);
}

async function writeGate1Validator(dir: string = work): Promise<string> {
  const ajv = new Ajv({ ...gate1AjvOptions, code: { source: true, esm: false } });
  const file = join(dir, 'gate1-validator.cjs');
  await writeFile(file, standalone.default(ajv, ajv.compile(gate1Schema)));
  return file;
}

/** A file of an installed package, and its sha256. */
function packageFile(specifier: string): Asset {
  return fileAsset(join(root, 'node_modules', specifier));
}

export function fileAsset(path: string): Asset {
  return { path, sha256: sha256Of(path) };
}

function sha256Of(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function keyringAddon(): Asset {
  const scope = join(root, 'node_modules/@napi-rs');
  const platform = `${process.platform}-${process.arch}`;
  for (const pkg of readdirSync(scope).filter((d) => d.startsWith(`keyring-${platform}`))) {
    const file = readdirSync(join(scope, pkg)).find((f) => f.endsWith('.node'));
    if (file === undefined) continue;
    return fileAsset(join(scope, pkg, file));
  }
  throw new Error(`No @napi-rs/keyring addon for ${platform} in node_modules: run npm ci on this platform.`);
}

function moduleFile(target: string): string {
  const candidates = [target, `${target}.js`, join(target, 'index.js')];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (found === undefined) throw new Error(`No module at ${target}`);
  return found;
}

export function nodeBinary(): string {
  const binary = join(root, 'node_modules/node/bin/node');
  if (!existsSync(binary))
    throw new Error('Node 24 is missing from node_modules (the `node` package): run npm ci.');
  return binary;
}

function postjectCli(): string {
  const pkg = join(root, 'node_modules/postject');
  const { bin } = readJson(join(pkg, 'package.json')) as { bin: Record<string, string> };
  return join(pkg, bin.postject ?? 'dist/cli.js');
}

function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8'));
}

export async function commandExists(name: string): Promise<boolean> {
  return (await exec('sh', ['-c', `command -v ${name}`], { quiet: true, allowFailure: true })) === 0;
}

export interface ExecOptions {
  quiet?: boolean;
  allowFailure?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export function exec(command: string, args: string[], options: ExecOptions = {}): Promise<number> {
  const { quiet = false, allowFailure = false, cwd = root, env = process.env } = options;
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', quiet ? 'pipe' : 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code === 0 || allowFailure) done(code ?? 1);
      else fail(new Error(`${command} ${args.join(' ')} exited ${code}\n${stderr}`));
    });
  });
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flags = new Set(process.argv.slice(2));
  await buildBinary({
    output: join(root, 'dist/gds'),
    tsc: !flags.has('--skip-tsc'),
    minify: !flags.has('--no-minify'),
  });
}
