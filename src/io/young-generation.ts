// V8's young generation grows with the objects that survive each collection, and with it the process's peak
// memory: reading a dbt manifest of 2,000 models (tens of MB of JSON, then a declaration per model) took the
// CLI to 265-300 MiB, of which most was young-generation space holding garbage. Held at its size, the same
// read peaks at 170-190 MiB and is no slower (`npm run bench project-scale`; docs/bench.md). Set at run time,
// as a command starts such work (a flag on the command line would invalidate the executable's code cache).

let held = false;

// gds may run inside another program (the tests run commands in their own process, many files one after the
// other): V8's flags and full collections are then that program's, and a flag set for one command would stay
// for everything the program runs after it.
let tuning = true;

/** Whether gds may change V8's flags and collect the heap (the in-process test runner turns it off for a call). */
export function allowProcessTuning(allowed: boolean): void {
  tuning = allowed;
}

/** Sets a V8 flag for the rest of the process; a Node without the flag: nothing (the work runs as before). */
function setV8Flag(flag: string): void {
  try {
    process.getBuiltinModule('node:v8').setFlagsFromString(flag);
  } catch {
    // a Node without the flag: the work runs as before
  }
}

/** Keeps the young generation at its size from now on (once per process; a Node without the flag: nothing). */
export function holdYoungGeneration(): void {
  if (held || !tuning) return;
  held = true;
  setV8Flag('--semi-space-growth-factor=1');
}

/**
 * A list streamed page by page allocates much and keeps nothing: V8's young generation is then held at its
 * size (it grows with the survivors of each page otherwise) and no JavaScript is optimised further (the work
 * is JSON.parse and JSON.stringify, native already). 100,000 tables (dist/gds): peak 91 -> 73-76 MiB, the
 * same CPU time; a terminal's table, 20,000 and 100,000 tables (node bin/run.js): peak 95 and 106 -> 92 MiB
 * both, no slower. Set at run time, after the bundle's code cache is read (a flag on the command line would
 * invalidate it), once, from the second page on: a short list never sets it.
 */
export function leanHeapForStreaming(): void {
  if (leanHeap || !tuning) return;
  leanHeap = true;
  holdYoungGeneration();
  setV8Flag('--no-opt');
}
let leanHeap = false;

/**
 * A full garbage collection now, when a large set of objects has just become garbage: V8 sets the old
 * generation's next limit from what was live at its last full collection, so after a dbt manifest's nodes
 * are dropped (they were live while the project was declared) the heap would otherwise grow to that size
 * again before collecting them. A no-op where the runtime refuses.
 *
 * When that collection frees less than a quarter of the heap, what was dropped is still held, by one of the
 * optimising compilers' jobs: a job queued on a background thread, or compiled and not installed yet, holds
 * its function, and so everything the function's closure reaches, through a full collection. Then V8's
 * `last-resort` collection (as before a heap snapshot), which drops those jobs first (a dropped function is
 * optimised again if it runs hot again). Measured on a no-change plan of 5,000 models (PostgreSQL, load
 * 11-17): in about one run in five the first collection left 84.7-85.0 MB of 89-93 MB (not 43.9), and with
 * nothing collecting them later the plan peaked at 200-214 MiB instead of 157-168; a second plain
 * collection did not always free them, the `last-resort` one did. Not made every time: it collects two or
 * three times and shrinks the young generation, about 0.5 s more of the plan's CPU at that load.
 */
export function collectGarbage(): void {
  if (!tuning) return;
  try {
    const v8 = process.getBuiltinModule('node:v8');
    const vm = process.getBuiltinModule('node:vm');
    v8.setFlagsFromString('--expose-gc');
    gcExposed = true;
    const gc: unknown = vm.runInNewContext('gc');
    if (typeof gc !== 'function') return;
    const used = () => v8.getHeapStatistics().used_heap_size;
    const before = used();
    (gc as () => void)();
    // A runtime whose gc takes no options makes a plain full collection again.
    if (used() > before * HELD_AFTER_COLLECTION)
      (gc as (options: object) => void)({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    // a runtime without the flag or the function: the heap is collected as before
  }
}

let gcExposed = false;

/** The share of the heap still used after a full collection above which what was dropped is taken as held. */
const HELD_AFTER_COLLECTION = 0.75;

/**
 * The V8 flags this module leaves set for the rest of the process (the young generation held, `--expose-gc`,
 * a streamed list's `--no-opt`) put back as the process started, for a code cache made as it exits: V8 takes
 * a code cache only under the flags it was made with (it compares a hash of them all), and the npm package
 * writes its bundle's cache at exit (bin/run.js) for the next run to read at its start. Made under a plan's
 * flags, V8 refused it at every later plan, which then compiled everything again and wrote the cache anew.
 * A flag the process was started with is left as it is; the rest of this module sets theirs back itself.
 */
export function restoreV8Flags(): void {
  if (held && !startedWithOption(/^--semi[-_]space[-_]growth[-_]factor/))
    setV8Flag(`--semi-space-growth-factor=${V8_SEMI_SPACE_GROWTH_FACTOR}`);
  if (gcExposed && !startedWithOption(/^--expose[-_]gc/)) setV8Flag('--no-expose-gc');
  if (leanHeap && compilersAtDefaults()) setV8Flag('--opt');
}

/** V8's own growth factor of the young generation (`--semi-space-growth-factor`, Node 22 to 24). */
const V8_SEMI_SPACE_GROWTH_FACTOR = 2;

/** V8's optimising compilers, and the flags that turn them off while a short piece of work runs. */
const OPTIMISING_COMPILERS = ['opt', 'maglev'] as const;
type OptimisingCompiler = (typeof OPTIMISING_COMPILERS)[number];
let compilersHeld = 0;

/**
 * Whether the process's V8 options leave the optimising compilers at their defaults (x64 and arm64 run both):
 * no option names them (`--no-opt`, `--max-opt=…`, `--always-turbofan`, `--no-maglev`) or `--jitless`.
 */
function compilersAtDefaults(): boolean {
  if (process.arch !== 'x64' && process.arch !== 'arm64') return false;
  return !startedWithOption(/^--[\w-]*(?:opt|maglev|turbofan|jitless)/);
}

/** Whether an option the process was started with (its own arguments or NODE_OPTIONS) matches `pattern`. */
function startedWithOption(pattern: RegExp): boolean {
  const options = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)];
  return options.some((option) => pattern.test(option));
}

function setCompilers(compilers: readonly OptimisingCompiler[], on: boolean): void {
  const v8 = process.getBuiltinModule('node:v8');
  for (const name of compilers) v8.setFlagsFromString(`--${on ? '' : 'no-'}${name}`);
}

/**
 * Runs `work` (a command's short work, such as reading one artifact) with V8's optimising compilers (Maglev
 * and TurboFan) off, then on again. A push of a view runs a few loops hot enough for V8 to optimise them in
 * the background, and the compilers' own machine code and working memory cost the process more than they
 * save it: `push --dry-run` of the real 262-line view 79.7 -> 68.9-70.7 MiB at its peak, 8-11 ms less CPU,
 * its wall time unchanged (docs/bench.md). A view near the size limit (86,000 tokens) reads in the same time:
 * its time is PostgreSQL's parser's. The flags go back to their defaults after: V8's flag hash with them, so the Node
 * modules loaded later still compile from Node's code cache (a changed hash makes V8 refuse it:
 * `require('node:http')` 1.2 -> 4.3 ms).
 */
export async function withoutOptimisingCompilers<T>(
  work: () => Promise<T>,
  compilers: readonly OptimisingCompiler[] = OPTIMISING_COMPILERS,
): Promise<T> {
  const toggle = tuning && !leanHeap && compilersHeld === 0 && compilersAtDefaults();
  if (toggle) setCompilers(compilers, false);
  compilersHeld += 1;
  try {
    return await work();
  } finally {
    compilersHeld -= 1;
    if (toggle) setCompilers(compilers, true);
  }
}

/**
 * `work` run with V8's top compiler tier (TurboFan, `--opt`) off, then on again, or sooner when `work` calls
 * `topTierCompilerWanted`: for work that runs most of its JavaScript once over many items, reading and
 * declaring a dbt project (a loop a model, a test, a column) and telling which of its tables the service
 * already holds as they are. TurboFan compiled about fifty such functions while a project of 2,000 models
 * was read (its manifest's scanner four times over), on V8's worker threads: held off, reading the project
 * takes about 0.1 s less of a plan's CPU (0.18 s at 5,000 models), all of it beside the main thread, which
 * runs within 10-20 ms of before (docs/bench.md, plans at once, eleventh pass: the CLI's compiler work).
 * Maglev, the tier below, still compiles what is hot. What a table to change runs (a first plan's every
 * table a create: a gate1.yml checked, diffs made) needs TurboFan: 12-15 % slower on the main thread without
 * it, so the plan asks for it back at its first such table (docs/bench.md, sixteenth pass).
 */
export async function withoutTopTierCompiler<T>(work: () => Promise<T>): Promise<T> {
  const toggle = tuning && !leanHeap && compilersHeld === 0 && compilersAtDefaults();
  if (toggle) {
    setCompilers(['opt'], false);
    topTierHeld = true;
  }
  compilersHeld += 1;
  try {
    return await work();
  } finally {
    compilersHeld -= 1;
    topTierCompilerWanted();
  }
}
let topTierHeld = false;

/** TurboFan back now, when `withoutTopTierCompiler` holds it off (else nothing): work that needs it starts. */
export function topTierCompilerWanted(): void {
  if (!topTierHeld) return;
  topTierHeld = false;
  setCompilers(['opt'], true);
}

/**
 * The old generation's growth between full collections while a dbt project is read: 6x its live size (10x
 * raised the no-change plan of 5,000 models to 193-200 MiB at its peak, against 189-193).
 */
const READING_GROWTH_PERCENT = 500;

/**
 * `work` (reading and declaring a dbt project) with V8's old generation let grow to 6 times what was live at
 * the last full collection before V8 starts one of its own (it allowed about 4 times here), then its default
 * growth again. In the npm package libpg-query's 128 MiB of WebAssembly memory makes V8 collect the whole
 * heap as the project starts to be read (10 MB live); the next limit, about 42 MB, was then reached near the
 * read's end, and V8 marked the heap of 2,000 models (about 45 MB) once on its own (on its worker threads and
 * the main thread) shortly before the full collection made once the project is declared (`collectGarbage`)
 * marked it again: no-change plan of 2,000 models, about 40 ms less CPU; 5,000 models still have one such
 * collection while they are read, and peak the same (docs/bench.md, plans at once, twelfth pass).
 * The limit V8 sets while `work` runs holds until the next full collection, which `collectGarbage` makes.
 */
export async function withOldGenerationRoom<T>(work: () => Promise<T>): Promise<T> {
  const toggle = tuning && growthAtDefault();
  if (toggle) setV8Flag(`--heap-growing-percent=${READING_GROWTH_PERCENT}`);
  try {
    return await work();
  } finally {
    if (toggle) setV8Flag('--heap-growing-percent=0');
  }
}

/** Whether the process's V8 options leave the heap's growth to V8 (no `--heap-growing-percent`). */
function growthAtDefault(): boolean {
  return !startedWithOption(/^--heap[-_]growing[-_]percent/);
}
