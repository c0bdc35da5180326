#!/usr/bin/env node
// Production entry: the compiled CLI in dist/ (`npm run build`). Not awaited: when stdout closes early
// (`gds --help | head -1`) oclif's final flush never settles, and the process should still just end.
// Node's compile cache (in the OS temp folder, or NODE_COMPILE_CACHE; off with NODE_DISABLE_COMPILE_CACHE)
// keeps the compiled code of every module between runs: it is on before dist/ loads.
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

enableCompileCache?.();
const [{ main }, { COMMAND_LOADERS }] = await Promise.all([
  import('../dist/cli/main.js'),
  import('../dist/commands/loaders.js'),
]);
void main(process.argv.slice(2), fileURLToPath(new URL('..', import.meta.url)), {
  commands: COMMAND_LOADERS,
});
