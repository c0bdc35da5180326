// PostgreSQL's parser (the executable's asset libpg-query.wasm) compiled from the boot script's first lines
// when the command line runs `push`, so that its first parse compiles almost nothing on the main thread: V8
// decodes the module on a worker while the boot script compiles the bundle, and at the first turn of the
// event loop (push's read of its file) sends the functions the asset names in its compilationHints section
// (the ones a parse reaches: scripts/bundle/parser-hints.ts) to its workers, which compile them (Liftoff)
// while the CLI starts; the others compile lazily, at their first call, as before. What it buys: `push
// --dry-run` of the real 262-line view -6 ms of wall, +2 MiB (docs/bench.md, twenty-third session).
//
// V8's flags: the hints are read only with --experimental-wasm-compilation-hints set as the compile starts,
// set back at once; tier-up is filtered from the bundle's compile until the module is compiled, since Liftoff
// leaves its tier-up checks out of what it compiles under the filter (without it, a parse tiered four hinted
// functions up to TurboFan: 0.5-0.9 s of CPU and 600 MB). A changed flag changes V8's flag hash, under which
// V8 refuses a code cache: the bundle's is read before the filter is set; Node's own, for the few modules push
// loads before the compile ends (node:net among them), is refused meanwhile (measured within the gain).
// src/core/wasm-tier-up.ts holds tier-up off around each parse, after the module is compiled.
//
// The boot script and the bundle are two scripts: the compile in flight passes from one to the other on a
// global symbol, taken once (scripts/sea/libpg-query-options.ts). Any other command line compiles the module
// when libpg-query asks, lazily.
import { getRawAsset } from 'node:sea';

// The project's lib has no DOM types, where WebAssembly's are declared: the little used here.
export interface WasmApi {
  compile(bytes: Uint8Array): Promise<object>;
  instantiate(module: object, imports: object): Promise<object>;
}
export const { WebAssembly: wasm } = globalThis as unknown as { WebAssembly: WasmApi };

const EARLY = Symbol.for('gds.parser-module');
type Holder = { [EARLY]?: Promise<object> };
/** No function has this index: as the tier-up filter, no function tiers up. */
const NO_FUNCTION = 2_147_483_647;

function compileAsset(): Promise<object> {
  return wasm.compile(new Uint8Array(getRawAsset('libpg-query.wasm')));
}

const setV8Flag = (flag: string) => process.getBuiltinModule('node:v8').setFlagsFromString(flag);

/** Starts the compile, its hints read (boot script); a failure is left for the instantiation to report. */
export function compileParserEarly(): void {
  setV8Flag('--experimental-wasm-compilation-hints');
  const compiled = compileAsset();
  setV8Flag('--no-experimental-wasm-compilation-hints');
  // Node exits with a compile on V8's workers pending when nothing else holds the event loop.
  const hold = setTimeout(() => undefined, 2_147_483_647);
  const release = () => clearTimeout(hold);
  compiled.then(release, release);
  (globalThis as Holder)[EARLY] = compiled;
}

/** Holds V8's WebAssembly tier-up off from now (the bundle compiled) until the compile started early is done. */
export function holdTierUpWhileCompiling(): void {
  const compiled = (globalThis as Holder)[EARLY];
  if (compiled === undefined) return;
  setV8Flag(`--wasm-tier-up-filter=${NO_FUNCTION}`);
  const release = () => setV8Flag('--wasm-tier-up-filter=-1');
  compiled.then(release, release);
}

/** The compiled module: the boot script's compile when it started one, else a compile now. */
export function parserModule(): Promise<object> {
  const holder = globalThis as Holder;
  const early = holder[EARLY];
  delete holder[EARLY];
  return early ?? compileAsset();
}
