// Files the build makes for the bundles: oclif's manifest of every command, the gate1.yml schema validator
// compiled by ajv, and jq's and PostgreSQL's parser's WebAssembly beside them.
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import standalone from 'ajv/dist/standalone/index.js';
import type { Interfaces } from '@oclif/core';
import { gate1Schema } from '../../src/core/gate1/schema.js';
import { gate1AjvOptions } from '../../src/core/gate1/schema-validator.js';
import { lowerInitialMemory } from '../../src/core/wasm-initial-memory.js';
import { pluginEntries } from './esbuild-plugins.js';
import { fileAsset, readJson, root, work } from './tools.js';
import type { Asset } from './tools.js';

/**
 * oclif's manifest of every command the bundle holds, gds's and the plugins', made by oclif itself from the
 * built classes (dist/) as the executable's root plugin would make it at every start without one.
 */
export async function writeCommandManifest(dir: string = work): Promise<string> {
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
  const { COMMAND_LOADERS } = await import('../../src/commands/loaders.js');
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
export async function jqWasmAsset(): Promise<Asset> {
  const path = join(work, 'jq.wasm');
  await copyFile(join(root, 'node_modules/jq-wasm/dist/build/jq.wasm'), path);
  return fileAsset(path);
}

/**
 * libpg-query's WebAssembly, an asset of the executable, with its initial memory lowered here rather than at
 * every run (src/core/wasm-initial-memory.ts): reading the module's layout and copying it cost a push 6-9 ms.
 */
export async function libpgQueryWasmAsset(): Promise<Asset> {
  const path = join(work, 'libpg-query.wasm');
  const bytes = await readFile(join(root, 'node_modules/libpg-query/wasm/libpg-query.wasm'));
  await writeFile(path, lowerInitialMemory(new Uint8Array(bytes)));
  return fileAsset(path);
}

export async function writeGate1Validator(dir: string = work): Promise<string> {
  const ajv = new Ajv({ ...gate1AjvOptions, code: { source: true, esm: false } });
  const file = join(dir, 'gate1-validator.cjs');
  await writeFile(file, standalone.default(ajv, ajv.compile(gate1Schema)));
  return file;
}
