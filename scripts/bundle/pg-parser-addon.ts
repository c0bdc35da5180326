// PostgreSQL's parser as a native addon for the executable of the build machine's platform: libpg-query's own
// WebAssembly translated to C by wabt's wasm2c, compiled with scripts/sea/pg-parser-addon.c (its Emscripten
// imports and the Node-API calls libpg-query's index.cjs makes). The same code as the .wasm, with nothing
// left for V8 to decode and compile at each start: `push --dry-run` of the real 262-line view 9 ms faster in the
// executable (74.6 -> 65.7 ms); in plain Node, loading the parser and parsing that view 31 -> 4 ms over `node -e 0`.
// Without wasm2c or a C compiler the executable is built without it and parses with the WebAssembly, as the
// npm package and the other platforms' executables do.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { execText, fileAsset, nodeBinary, root } from './tools.js';
import type { Asset } from './tools.js';

const wasmFile = join(root, 'node_modules/libpg-query/wasm/libpg-query.wasm');
const addonSource = join(root, 'scripts/sea/pg-parser-addon.c');
/** Compiled addons, by a key of everything that goes into them: a rebuild with the same inputs takes 0 s. */
const cache = join(root, 'node_modules/.cache/gds/pg-parser-addon');
// No signal handler of wasm2c's runtime inside Node's process (V8 has its own): explicit bounds checks, and
// a call-depth limit far above what PostgreSQL's grammar reaches before its own "memory exhausted".
const defines = ['-DWASM_RT_MEMCHECK_SIGNAL_HANDLER=0', '-DWASM_RT_MAX_CALL_STACK_DEPTH=20000'];
// -O1: 26 s for the 17 MB of generated C on this machine (-O2: 93 s); loading and parsing the real view take
// the same time either way (26.1 / 26.8 ms in plain Node, 40 runs).
const compileFlags = ['-O1', '-fPIC', '-fvisibility=hidden', '-fno-strict-aliasing', ...defines];

/**
 * What scripts/sea/pg-parser-addon.c was written against: how libpg-query's glue names the module's imports
 * and exports (minified names, bound to this build of it). A libpg-query whose glue says otherwise gets no
 * addon (the WebAssembly, as before) until the C file is brought to it.
 */
const glueFile = join(root, 'node_modules/libpg-query/wasm/libpg-query.js');
const glueBindings = [
  'var wasmImports={c:___assert_fail,x:__abort_js,w:__emscripten_runtime_keepalive_clear,p:__emscripten_throw_longjmp,o:__setitimer_js,q:_emscripten_resize_heap,m:_exit,u:_fd_close,r:_fd_read,s:_fd_seek,t:_fd_write,g:invoke_i,b:invoke_ii,a:invoke_iii,d:invoke_iiii,k:invoke_iiiii,l:invoke_ji,e:invoke_v,f:invoke_vi,h:invoke_vii,j:invoke_viii,i:invoke_viiii,y:invoke_viiiii,n:invoke_viiiiiiiiiiiii,v:_proc_exit}',
  'wasmExports["A"]()',
  ...Object.entries({
    _malloc: 'C',
    _free: 'E',
    _wasm_parse_query_raw: 'F',
    _wasm_free_parse_result: 'G',
    _wasm_parse_plpgsql: 'H',
    _wasm_fingerprint: 'I',
    _wasm_normalize_query: 'J',
    _wasm_scan: 'M',
    _wasm_free_string: 'N',
  }).map(([name, short]) => `Module["${name}"]=wasmExports["${short}"]`),
  '_setThrew=wasmExports["P"]',
  '__emscripten_stack_restore=wasmExports["Q"]',
  '_emscripten_stack_get_current=wasmExports["R"]',
];

export type PgParserAddon = { built: true; asset: Asset } | { built: false; reason: string };

async function toolPath(name: string): Promise<string | undefined> {
  try {
    return (await execText('sh', ['-c', `command -v ${name}`])).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function version(tool: string): Promise<string> {
  try {
    return (await execText(tool, ['--version'])).split('\n')[0] ?? '';
  } catch {
    return '';
  }
}

/** Builds the addon for this machine (or takes it from the cache); says why when it cannot. */
export async function pgParserAddon(): Promise<PgParserAddon> {
  if (process.platform !== 'linux')
    return { built: false, reason: `not built on ${process.platform} (Linux only)` };
  const glue = readFileSync(glueFile, 'utf8');
  const unbound = glueBindings.find((binding) => !glue.includes(binding));
  if (unbound !== undefined)
    return {
      built: false,
      reason: `libpg-query's glue no longer has \`${unbound.slice(0, 60)}\`: scripts/sea/pg-parser-addon.c needs bringing to it`,
    };
  const [wasm2c, cc] = [await toolPath('wasm2c'), (await toolPath('cc')) ?? (await toolPath('gcc'))];
  if (wasm2c === undefined || cc === undefined)
    return {
      built: false,
      reason: `${wasm2c === undefined ? 'wasm2c' : 'a C compiler'} not found (Debian: apt-get install wabt gcc)`,
    };
  const prefix = dirname(dirname(wasm2c));
  const runtimeDir = join(prefix, 'share/wabt/wasm2c');
  const runtimeSource = join(runtimeDir, 'wasm-rt-impl.c');
  // Node-API's headers, from the package of the Node 24 the executable is made of (`node` installs its
  // platform's `node-<platform>-<arch>`, which ships them).
  const nodeHeaders = join(
    dirname(nodeBinary()),
    `../node_modules/node-${process.platform}-${process.arch}/include/node`,
  );
  for (const needed of [runtimeSource, join(prefix, 'include/wasm-rt.h'), join(nodeHeaders, 'node_api.h')])
    if (!existsSync(needed)) return { built: false, reason: `${needed} not found` };

  const key = createHash('sha256');
  for (const file of [wasmFile, glueFile, addonSource, runtimeSource, join(prefix, 'include/wasm-rt.h')])
    key.update(readFileSync(file));
  key.update([await version(wasm2c), await version(cc), process.version, ...compileFlags].join('\n'));
  const cached = join(cache, `${key.digest('hex').slice(0, 32)}.node`);
  if (existsSync(cached)) return { built: true, asset: fileAsset(cached) };

  await mkdir(cache, { recursive: true });
  const dir = await mkdtemp(join(cache, 'build-'));
  try {
    await execText(wasm2c, [wasmFile, '-n', 'libpg-query', '-o', join(dir, 'libpg-query.c')]);
    const includes = ['-I', dir, '-I', runtimeDir, '-I', join(prefix, 'include'), '-I', nodeHeaders];
    // Every compile settled before the folder goes, the failed one's error thrown after.
    const compiled = await Promise.allSettled(
      [join(dir, 'libpg-query.c'), addonSource, runtimeSource].map(async (source, index) => {
        const object = join(dir, `${index}.o`);
        await execText(cc, [...compileFlags, ...includes, '-c', source, '-o', object]);
        return object;
      }),
    );
    const objects = compiled.map((result) => {
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    });
    // Linked in the build's folder, then renamed: a build stopped half-way leaves no addon in the cache.
    const linked = join(dir, 'pg-parser.node');
    await execText(cc, ['-shared', '-s', '-Wl,--gc-sections', '-o', linked, ...objects]);
    await rename(linked, cached);
    return { built: true, asset: fileAsset(cached) };
  } catch (error) {
    // A wasm2c or compiler this file was not written for (wabt names its output differently across versions):
    // the executable is still built, with the WebAssembly, and says why.
    const stderr = (error as { stderr?: string }).stderr ?? String(error);
    const firstError = stderr.split('\n').find((line) => /error/i.test(line)) ?? stderr.split('\n')[0];
    return { built: false, reason: `the addon did not build: ${firstError?.trim()}` };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
