// `npm run build:package-bundles` (prepack runs it after tsc and `oclif manifest`): the npm package's bundle,
// dist/bundle/gds.cjs; postpack removes it, so that a checkout never runs a bundle older than its sources.
// Options: --no-minify; --out-dir DIR writes DIR/gds.cjs instead (the tests' installed package: ensureBuilt).
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { makeBundleAscii } from './bundle/ascii-only.js';
import { bundleModules, scriptOptions } from './bundle/esbuild-plugins.js';
import { writeCommandManifest, writeGate1Validator } from './bundle/generated.js';
import { root } from './bundle/tools.js';

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

/** The folder of the npm package's bundle, made by `npm pack` (prepack) and removed after it. */
export const packageBundleDir = join(root, 'dist/bundle');

/**
 * The npm package's bundle (run by prepack): the whole CLI, as the executable's gds.cjs, for a plain Node (no
 * assets: the keychain addon, undici, openid-client and the WebAssembly of PostgreSQL's parser and jq load
 * from node_modules), in `outDir`/gds.cjs, which bin/run.js runs for every command line, under Node's compile
 * cache. One file read and compiled once, instead of oclif's and gds's modules resolved and compiled one by
 * one: `--help` and a command of its own took half the CPU time (docs/architecture.md has the figures). Needs
 * dist/ built: the manifest comes from its classes. Returns the bundle's path.
 */
export async function buildPackageBundle(outDir: string, options: { minify: boolean }): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'gds-package-bundle-'));
  try {
    const gate1Validator = await writeGate1Validator(scratch);
    const manifestFile = await writeCommandManifest(scratch);
    await rm(outDir, { recursive: true, force: true });
    await mkdir(outDir, { recursive: true });
    const outfile = join(outDir, 'gds.cjs');
    await build({
      ...scriptOptions(options),
      entryPoints: [join(root, 'scripts/sea/entry.ts')],
      outfile,
      // The generated gate1 validator lies in the temporary folder, outside the project: its `ajv/dist/…`
      // requires resolve from the project's node_modules, not from whatever the folder's parents hold.
      nodePaths: [join(root, 'node_modules')],
      external: packageExternals,
      define: { 'import.meta.url': '__gdsBundleUrl' },
      banner: { js: packageBanner },
      plugins: [bundleModules(gate1Validator, manifestFile, 'package')],
    });
    // bin/run.js reads the bundle as latin1, as the executable reads its own (scripts/bundle/ascii-only.ts).
    makeBundleAscii(outfile);
    return outfile;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  const outDir = process.argv.indexOf('--out-dir');
  const bundle = await buildPackageBundle(
    outDir === -1 ? packageBundleDir : resolve(process.argv[outDir + 1] ?? ''),
    {
      minify: !process.argv.includes('--no-minify'),
    },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`build:package-bundles: ${relative(root, bundle)} in ${seconds} s\n`);
}
