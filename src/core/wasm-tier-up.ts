// V8's optimising tier for WebAssembly, held off while gds runs a short WebAssembly call (PostgreSQL's parser,
// jq). A call that runs long enough makes V8 recompile its hot functions with TurboFan in the background: for
// libpg-query's parser function, measured, 1.9 s of CPU and 600 MB that the process then waits for before it
// exits, for a parse that takes 30 ms in the baseline tier; for jq under `--jq`, 30 ms of CPU and 17 MiB per
// run (measured on dist/gds list --jq .id). The flag is set only while a call is held, so other WebAssembly in
// the process (PGlite in the reference server) keeps tiering up. node:v8 is taken when a call is held, not
// at start-up: every command's start-up reaches this module (through --jq's), and node:v8 loads V8's heap
// utilities and streams with it.

/** A function index no module has: with it as the filter, no function tiers up. */
const NO_FUNCTION = 2_147_483_647;
let holds = 0;

function setTierUpFilter(index: number): boolean {
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString(`--wasm-tier-up-filter=${index}`);
    return true;
  } catch {
    return false;
  }
}

/** Holds tier-up off until the returned function is called (holds nest: the last release lets it on again). */
export function holdWasmTierUp(): () => void {
  const toggled = holds === 0 ? setTierUpFilter(NO_FUNCTION) : true;
  if (toggled) holds += 1;
  let released = false;
  return () => {
    if (!toggled || released) return;
    released = true;
    holds -= 1;
    if (holds === 0) setTierUpFilter(-1);
  };
}

/** Runs `read` (a synchronous WebAssembly call) with tier-up held off. */
export function withoutTierUp<T>(read: () => T): T {
  const release = holdWasmTierUp();
  try {
    return read();
  } finally {
    release();
  }
}

/** Awaits `work` (a WebAssembly call behind a promise) with tier-up held off. */
export async function awaitWithoutTierUp<T>(work: () => Promise<T>): Promise<T> {
  const release = holdWasmTierUp();
  try {
    return await work();
  } finally {
    release();
  }
}
