// `npm run build:binary`: dist/gds, the whole CLI as one Node 24 single executable application.
//   1. tsc (dist/ for `node bin/run.js`, and the type check);
//   2. ajv standalone: the gate1.yml schema validator compiled now, not at run time (bundle/generated.ts);
//   3. esbuild: scripts/sea/entry.ts and everything it reaches, oclif's plugins included, into one CJS file;
//      heavy modules stay behind their `await import()` (esbuild turns each into a lazy require);
//      a bundle of its own for each command the training runs (the same entry with that command alone:
//      sea/command-bundles.ts), and packages of rare paths (undici, openid-client) as bundles of their own
//      that every other bundle evaluates on first import (bundle/esbuild-plugins.ts assetModules,
//      sea/asset-module.ts);
//   4. two V8 code caches of the bundle (help's, the runs'), and one per command bundle, trained by running
//      it through the start-up paths (bundle/training.ts, scripts/sea/train.ts),
//      which also keeps the help pages oclif printed, for the boot script to serve (sea/precomputed-help.ts);
//   5. the SEA blob: scripts/sea/boot.ts as main (it serves help pages rendered before, precomputed-help.ts,
//      and picks a command's own bundle when it has one), the bundles, their code caches, the help pages, the
//      keychain addon,
//      PostgreSQL's parser (libpg-query's WebAssembly, and for this machine's platform the same translated to
//      C and compiled as an addon: bundle/pg-parser-addon.ts) and jq's WebAssembly (jq-wasm's jq.wasm) as assets;
//   6. a copy of Node 24's own binary, stripped, with the blob injected by postject.
// Options: --no-minify; --skip-tsc when dist/ is built already (the tests share one tsc build under a lock).
import { statSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Plugin } from 'esbuild';
import type { Interfaces } from '@oclif/core';
import { makeBundleAscii } from './bundle/ascii-only.js';
import { bundleWrapper } from './sea/bundle-script.js';
import type { CommandBundles } from '../src/cli/command-route.js';
import { cacheVariant, commandBundleAsset } from './sea/command-bundles.js';
import {
  assetModuleImports,
  buildAssetModules,
  bundleModules,
  commandOnly,
  scriptOptions,
} from './bundle/esbuild-plugins.js';
import {
  jqWasmAsset,
  libpgQueryWasmAsset,
  writeCommandManifest,
  writeGate1Validator,
} from './bundle/generated.js';
import { pgParserAddon } from './bundle/pg-parser-addon.js';
import {
  commandBundleTable,
  executableNodeOptions,
  routeOf,
  trainCodeCache,
  trainingRuns,
} from './bundle/training.js';
import {
  commandExists,
  exec,
  keyringAddon,
  node,
  nodeBinary,
  postjectCli,
  readJson,
  root,
  sha256Of,
  work,
} from './bundle/tools.js';
import type { Asset } from './bundle/tools.js';

const seaFuse = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

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
   * Whether the trained V8 code caches and the precomputed help go in: only on the build machine's own
   * platform, as a cache made here is refused elsewhere. (Node's own SEA code cache, `useCodeCache`, of the
   * boot script's top level is left out: it bought nothing measurable, ±2 ms on every start-up row.)
   */
  native: boolean;
  /** The keychain addon for the target's platform, when it is not the build machine's. */
  keyring?: string;
  /** The `strip` for the target's binary format, when there is one here. */
  strip?: string;
  /** A Mach-O binary (macOS): postject puts the blob in a segment of its own. */
  macho?: boolean;
}

/** Builds dist/gds for this machine, and returns what other platforms' executables are made of. */
export async function buildBinary(options: BinaryOptions): Promise<SeaInputs> {
  const started = performance.now();
  // 26 s to compile on a cold cache: beside tsc and the bundles.
  const pgParserBuild = pgParserAddon();
  if (options.tsc) {
    await exec(node, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  }
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const keyring = keyringAddon();
  const keyrings = { ...options.otherKeyrings, [`${process.platform}-${process.arch}`]: keyring };
  const pgWasm = await libpgQueryWasmAsset();
  const jq = await jqWasmAsset();
  const pgParser = await pgParserBuild;
  // Beside the other assets, where the bench's floor of `push` finds it (scripts/bench/startup.ts).
  const pgParserFile = join(work, 'pg-parser.node');
  if (pgParser.built) await copyFile(pgParser.asset.path, pgParserFile);
  else
    process.stderr.write(
      `build:binary: PostgreSQL's parser stays WebAssembly only (${pgParser.reason}): \`push\` is slower\n`,
    );
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
          ...(pgParser.built
            ? { 'pg-parser': { [`${process.platform}-${process.arch}`]: pgParser.asset.sha256 } }
            : {}),
        }),
      },
      metafile: true,
      plugins: [...plugins, assetModuleImports(), bundleModules(gate1Validator, manifestFile)],
    });
  const assetBundles = await buildAssetModules(work, options, bundleModules(gate1Validator, manifestFile));
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
  for (const file of [bundle, ...ownBundles.map(({ file }) => file), ...Object.values(assetBundles)]) {
    makeBundleAscii(file);
  }
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
      ...(pgParser.built ? { 'pg-parser.node': pgParserFile } : {}),
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
      // Built for this machine only: elsewhere PostgreSQL's parser is the WebAssembly.
      delete assets['pg-parser.node'];
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

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const flags = new Set(process.argv.slice(2));
  await buildBinary({
    output: join(root, 'dist/gds'),
    tsc: !flags.has('--skip-tsc'),
    minify: !flags.has('--no-minify'),
  });
}
