// V8's young generation grows with the objects that survive each collection, and with it the process's peak
// memory: reading a dbt manifest of 2,000 models (tens of MB of JSON, then a declaration per model) took the
// CLI to 265-300 MiB, of which most was young-generation space holding garbage. Held at its size, the same
// read peaks at 170-190 MiB and is no slower (`npm run bench project-scale`; docs/bench.md). Set at run time,
// as a command starts such work (a flag on the command line would invalidate the executable's code cache).

let held = false;

/** Keeps the young generation at its size from now on (once per process; a Node without the flag: nothing). */
export function holdYoungGeneration(): void {
  if (held) return;
  held = true;
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString('--semi-space-growth-factor=1');
  } catch {
    // a Node without the flag: the work runs as before
  }
}
