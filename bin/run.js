#!/usr/bin/env node
// Production entry: the compiled CLI in dist/ (`npm run build`). Not awaited: when stdout closes early
// (`gds --help | head -1`) oclif's final flush never settles, and the process should still just end.
// Node's compile cache (in the OS temp folder, or NODE_COMPILE_CACHE; off with NODE_DISABLE_COMPILE_CACHE)
// keeps the compiled code of every module between runs: it is on before dist/ loads. The bundle has a code
// cache of its own in the same folder (runBundle).
// In the npm package every command line runs one file, the whole CLI bundled (dist/bundle/gds.cjs, made by
// prepack: scripts/build-package-bundles.ts); a checkout has none and runs dist/ module by module.
// Only what every Node since 18 links is imported statically (no named import that an older Node lacks,
// such as enableCompileCache): an older Node then gets a sentence instead of a SyntaxError.
// The first thing done: a token given as an argument is masked in the process's command line (`ps`,
// /proc/PID/cmdline), before the rest of gds loads; process-title.js imports only the masking it needs.
import { scrubProcessTitle } from '../dist/cli/process-title.js';
import nodeModule from 'node:module';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

try {
  scrubProcessTitle();
} catch {
  // an old Node, told below which Node gds needs, exits at once
}

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 3)) {
  process.stderr.write(
    `gds needs Node.js 22.3 or later (this is ${process.version}). Install a newer Node, or use the single executable.\n`,
  );
  process.exit(oldNodeExitCode(process.argv.slice(2)));
}

/**
 * How gds ends on a Node it cannot run on: not 1, the answer of gate diff (different), plan --exit-code
 * (changes), gate run (a HARD_FAIL check failed) and the like, but 2, as their failures; 1 under
 * plan --detailed-exitcode, whose 2 means changes. gds has not loaded: the command is the first word that is
 * no global flag nor its value (`--profile ci plan`), and a flag counts before any `--` only.
 */
function oldNodeExitCode(argv) {
  const end = argv.indexOf('--');
  const words = end === -1 ? argv : argv.slice(0, end);
  const takesValue = ['--token', '--base', '--profile', '--jq', '-q', '--template', '-t'];
  const isValue = (i) =>
    takesValue.includes(words[i - 1]) || (words[i - 1] === '--json' && words[i].includes(','));
  const command = words.find((word, i) => !word.startsWith('-') && !isValue(i));
  return command === 'plan' && detailedExitcode(argv) ? 1 : 2;
}

/**
 * Whether a command line asks for plan's --detailed-exitcode, before any `--`: terraform's -detailed-exitcode
 * and --detailed-exitcode=true, usage errors to gds, ask for it too. Under it a usage error ends with 1 (its 2
 * means changes).
 */
function detailedExitcode(argv) {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).some((word) => /^--?detailed-exitcode(?:=|$)/.test(word));
}

nodeModule.enableCompileCache?.();

/**
 * Runs the bundle as Node runs a CommonJS file, compiled with a V8 code cache of its own kept beside Node's
 * compile cache (the same folder, so NODE_COMPILE_CACHE and NODE_DISABLE_COMPILE_CACHE apply to it): Node's
 * cache holds only the code that compiles before the bundle runs, this one every function the command ran,
 * as the executable's trained caches do. One cache per first word (`list`, `gate`, `help` for a help page): a
 * line of that word compiles only what its cache lacks. A cache that is missing, or that V8 refuses (other
 * Node or V8 flags), is written as the process exits, atomically and 0600; not after a usage error (a word
 * that names no command, a flag that is none: exit 2, or 1 under plan --detailed-exitcode, as the bundle says
 * through usageErrorEnded), so that a mistyped word leaves no file. What it buys:
 * `list --json` 62.9 -> 50.9 ms, 63.8 -> 52.4 ms of CPU (21 rounds paired, idle emulated; docs/bench.md).
 * With Node's compile cache off, Node runs the bundle itself.
 */
function runBundle(bundle) {
  const folder = nodeModule.getCompileCacheDir?.();
  // The bundle's import() of a package (PostgreSQL's parser, jq, the keychain) goes to the main context's
  // loader, from the bundle's place, as in a module Node loads.
  const importModuleDynamically = vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  const argv = process.argv.slice(2);
  const last = argv.at(-1);
  const word = last === '--help' || last === '-h' ? 'help' : argv[0];
  const key = /^[a-z][a-z0-9-]{0,39}$/.test(word ?? '') ? word : 'run';
  if (folder === undefined || importModuleDynamically === undefined) {
    nodeModule.createRequire(import.meta.url)(bundle);
    return;
  }
  const source = readFileSync(bundle, 'latin1');
  // Named by the bundle's length too (V8's own check of a cache's source): two gds versions on one machine
  // keep a cache each instead of replacing each other's at every run.
  const cacheFile = join(folder, `gds-bundle-${source.length}-${key}.cache`);
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // none yet: written below
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
    importModuleDynamically,
  });
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once('exit', () => {
      if (module.exports.usageErrorEnded?.() !== false) return;
      const written = `${cacheFile}.${process.pid}`;
      try {
        // V8 takes a cache only under the flags it was made with: those the run set go back first.
        module.exports.restoreV8Flags?.();
        writeFileSync(written, script.createCachedData(), { mode: 0o600 });
        renameSync(written, cacheFile);
      } catch {
        // a cache that cannot be written only means the next run compiles as this one did
      }
    });
  }
  // Node marks that loader experimental, with a warning on stderr at the bundle's first import(): not printed.
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (typeof warning === 'string' && warning.startsWith('vm.USE_MAIN_CONTEXT_DEFAULT_LOADER ')) return;
    return emitWarning.call(this, warning, ...rest);
  };
  const module = { exports: {} };
  script.runInThisContext()(
    module.exports,
    nodeModule.createRequire(bundle),
    module,
    bundle,
    dirname(bundle),
  );
}

const bundle = fileURLToPath(import.meta.resolve('../dist/bundle/gds.cjs'));
if (existsSync(bundle)) {
  runBundle(bundle);
} else {
  const [{ main }, { COMMAND_LOADERS }] = await Promise.all([
    import('../dist/cli/main.js'),
    import('../dist/commands/loaders.js'),
  ]);
  void main(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)), {
    commands: COMMAND_LOADERS,
  });
}
