import { writeFileSync } from 'node:fs';
import { isSea } from 'node:sea';

// GDS_TEST_LOADED_MODULES: the start-up test's window into a bundle of the executable (entry.ts): every
// package module that ran (build-binary.ts marks them), the same list test/cli/fixtures/record-loaded-modules.mjs
// writes for `node bin/run.js`, then Node's own modules as `node:<id>` (internal ones included: `node:internal/deps/undici/undici` is global fetch). A bundle of the
// npm package leaves the list to the test's own recorder, which adds the bundle's package modules to what
// Node resolved.
export function recordLoadedModules(): void {
  const loadedModulesFile = process.env.GDS_TEST_LOADED_MODULES;
  if (loadedModulesFile === undefined || !isSea()) return;
  process.on('exit', () => {
    const loaded = (globalThis as { __gdsLoadedModules?: Set<string> }).__gdsLoadedModules ?? [];
    const { moduleLoadList = [] } = process as { moduleLoadList?: string[] };
    const builtins = moduleLoadList
      .filter((entry) => entry.startsWith('NativeModule '))
      .map((entry) => `node:${entry.slice('NativeModule '.length)}`);
    writeFileSync(loadedModulesFile, JSON.stringify([...loaded, ...builtins]));
  });
}
