// Build step (scripts/build-binary.ts runs it with the same Node binary the executable is made of): runs
// the bundle through a few start-up paths in one process, then writes the V8 code cache of every function
// they compiled. Each run evaluates the bundle afresh; the compiled functions accumulate on the one script.
// With a fourth argument it also keeps what each `… --help` (or `-h`) run printed (stdout piped, no colour: the case
// precomputed-help.ts serves), when it exits 0 with nothing on stderr, and writes those pages there.
import { readFileSync, writeFileSync } from 'node:fs';
import packageJson from '../../package.json' with { type: 'json' };
import { userAgent } from '../../src/cli/version.js';
import { compileBundle } from './bundle-script.js';
import type { BundleFunction } from './bundle-script.js';
import { helpKey } from './precomputed-help.js';
import type { PrecomputedHelp } from './precomputed-help.js';

const [bundleFile, cacheFile, runsJson, helpFile] = process.argv.slice(2);
if (bundleFile === undefined || cacheFile === undefined || runsJson === undefined) {
  throw new Error('usage: train.cjs <gds.cjs> <gds.cache> <JSON list of argv lists> [help.json]');
}
const runs = JSON.parse(runsJson) as string[][];
const script = compileBundle(readFileSync(bundleFile, 'latin1'));
const node = process.argv.slice(0, 2);
const help: PrecomputedHelp = { userAgent: userAgent(packageJson), pages: {} };
const printed = { stdout: '', stderr: '' };
const writeStderr = process.stderr.write.bind(process.stderr);
// stdout is only kept (the build reads no output of this process); stderr still shows, for a failing build.
for (const stream of ['stdout', 'stderr'] as const) {
  process[stream].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    printed[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (stream === 'stdout') return true;
    return (writeStderr as (...args: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
}
// Every run adds its listeners to the same stdout and stderr: past ten, Node warns on stderr, and the run that
// warns would lose its help page (the 11th help run, `gate --help` since the `alias` topic came).
process.stdout.setMaxListeners(0);
process.stderr.setMaxListeners(0);
let current: string[] | undefined;

function keep(argv: string[] | undefined): void {
  const exit = process.exitCode ?? 0;
  if (
    (argv?.at(-1) === '--help' || argv?.at(-1) === '-h') &&
    exit === 0 &&
    printed.stderr === '' &&
    printed.stdout !== ''
  ) {
    help.pages[helpKey(argv)] = printed.stdout;
  }
  printed.stdout = '';
  printed.stderr = '';
}

function next(): void {
  keep(current);
  const argv = runs.shift();
  current = argv;
  if (argv === undefined) {
    process.removeListener('beforeExit', next);
    writeFileSync(cacheFile as string, script.createCachedData());
    if (helpFile !== undefined) writeFileSync(helpFile, JSON.stringify(help));
    process.exitCode = 0;
    return;
  }
  process.argv = [...node, ...argv];
  process.exitCode = 0;
  const module = { exports: {} };
  (script.runInThisContext() as BundleFunction)(module.exports, require, module, bundleFile as string, '.');
  // Node emits beforeExit again only if its listener left work behind: a run that did all its work
  // synchronously would otherwise end the training here, the cache unwritten.
  setImmediate(() => undefined);
}

process.on('beforeExit', next);
next();
