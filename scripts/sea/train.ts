// Build step (scripts/build-binary.ts runs it with the same Node binary the executable is made of): runs
// the bundle through a few start-up paths in one process, then writes the V8 code cache of every function
// they compiled. Each run evaluates the bundle afresh; the compiled functions accumulate on the one script.
import { readFileSync, writeFileSync } from 'node:fs';
import { compileBundle } from './bundle-script.js';
import type { BundleFunction } from './bundle-script.js';

const [bundleFile, cacheFile, runsJson] = process.argv.slice(2);
if (bundleFile === undefined || cacheFile === undefined || runsJson === undefined) {
  throw new Error('usage: train.cjs <gds.cjs> <gds.cache> <JSON list of argv lists>');
}
const runs = JSON.parse(runsJson) as string[][];
const script = compileBundle(readFileSync(bundleFile, 'latin1'));
const node = process.argv.slice(0, 2);

function next(): void {
  const argv = runs.shift();
  if (argv === undefined) {
    process.removeListener('beforeExit', next);
    writeFileSync(cacheFile as string, script.createCachedData());
    process.exitCode = 0;
    return;
  }
  process.argv = [...node, ...argv];
  process.exitCode = 0;
  const module = { exports: {} };
  (script.runInThisContext() as BundleFunction)(module.exports, require, module, bundleFile as string, '.');
}

process.on('beforeExit', next);
next();
