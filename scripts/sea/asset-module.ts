// A package kept out of the executable's bundles as a bundle of its own (a SEA asset, scripts/bundle/esbuild-plugins.ts
// assetModules): evaluated on its first import, so that the command bundles neither hold nor copy its source
// at every start. A bundle run by a plain `node` (the build's training) reads the file beside it instead.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { getRawAsset, isSea } from 'node:sea';
import { Script } from 'node:vm';
import type { BundleFunction } from './bundle-script.js';

const evaluated = new Map<string, unknown>();

/** The exports of the asset bundle `name`, evaluated once per process. */
export function assetModule(name: string): unknown {
  if (evaluated.has(name)) return evaluated.get(name);
  const bytes = isSea() ? Buffer.from(getRawAsset(name)) : readFileSync(join(dirname(__filename), name));
  const module = { exports: {} as unknown };
  const run = new Script(bytes.toString('latin1'), { filename: name }).runInThisContext() as BundleFunction;
  run(module.exports, require, module, name, '.');
  evaluated.set(name, module.exports);
  return module.exports;
}
