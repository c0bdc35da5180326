#!/usr/bin/env node
// Production entry: the compiled CLI in dist/ (`npm run build`). Not awaited: when stdout closes early
// (`gds --help | head -1`) oclif's final flush never settles, and the process should still just end.
// Node's compile cache (in the OS temp folder, or NODE_COMPILE_CACHE; off with NODE_DISABLE_COMPILE_CACHE)
// keeps the compiled code of every module between runs: it is on before dist/ loads.
// In the npm package every command line runs one file, the whole CLI bundled (dist/bundle/gds.cjs, made by
// prepack: scripts/build-package-bundles.ts); a checkout has none and runs dist/ module by module.
// Only what every Node since 18 links is imported statically (no named import that an older Node lacks,
// such as enableCompileCache): an older Node then gets a sentence instead of a SyntaxError.
// The first thing done: a token given as an argument is masked in the process's command line (`ps`,
// /proc/PID/cmdline), before the rest of gds loads; process-title.js imports only the masking it needs.
import { scrubProcessTitle } from '../dist/cli/process-title.js';
import nodeModule from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
  process.exit(1);
}

nodeModule.enableCompileCache?.();

const bundle = fileURLToPath(new URL('../dist/bundle/gds.cjs', import.meta.url));
if (existsSync(bundle)) {
  nodeModule.createRequire(import.meta.url)(bundle);
} else {
  const [{ main }, { COMMAND_LOADERS }] = await Promise.all([
    import('../dist/cli/main.js'),
    import('../dist/commands/loaders.js'),
  ]);
  void main(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)), {
    commands: COMMAND_LOADERS,
  });
}
