// oclif loads a plugin's command map and hooks by file path through a bare `require` (a `.cjs` target is
// never taken for ESM). A single executable has no such files, and its `require` loads built-in modules
// only, so the bundle's `require` is widened here to a few module ids that live in the bundle itself.
export type ModuleTable = ReadonlyMap<string, unknown>;

export function installEmbeddedModules(modules: ModuleTable): void {
  const builtin = require;
  const embedded = (id: string): unknown => (modules.has(id) ? modules.get(id) : builtin(id));
  const resolve = (id: string): string => {
    if (modules.has(id)) return id;
    if (typeof builtin.resolve === 'function') return builtin.resolve(id);
    throw Object.assign(new Error(`Cannot find module '${id}'`), { code: 'MODULE_NOT_FOUND' });
  };
  require = Object.assign(embedded, builtin, { resolve: Object.assign(resolve, { paths: () => null }) });
}
