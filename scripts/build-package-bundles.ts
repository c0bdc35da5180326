// `npm run build:package-bundles` (prepack runs it after tsc and `oclif manifest`): the npm package's command
// bundles in dist/bundle; postpack removes them, so that a checkout never runs bundles older than its
// sources. Options: --no-minify.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Interfaces } from '@oclif/core';
import { commandBundleAsset } from './sea/command-bundles.js';
import { bundleModules, commandOnly, scriptOptions } from './bundle/esbuild-plugins.js';
import { writeCommandManifest, writeGate1Validator } from './bundle/generated.js';
import { commandBundleTable } from './bundle/training.js';
import { readJson, root } from './bundle/tools.js';

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
          ...scriptOptions(options),
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

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const own = await buildPackageBundles(packageBundleDir, { minify: !process.argv.includes('--no-minify') });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `build:package-bundles: ${relative(root, packageBundleDir)}: ${own.join(', ')} in ${seconds} s\n`,
  );
}
