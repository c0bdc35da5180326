// What the bundles change in third-party modules (esbuild-plugins.ts bundleModules applies it), each change to
// keep something heavy from loading at start-up.
import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { root } from './tools.js';

/** The prompts of @inquirer/prompts each importer uses (by a part of its path), see bundleModules. gds's own
 *  prompts (src/cli/prompt.ts) import @inquirer/confirm, password and select alone. */
export const promptsUsed: Record<string, string[]> = {
  [['', '@oclif', 'plugin-not-found', ''].join(sep)]: ['confirm'],
};

/**
 * Package code changed in the bundle, each to keep something heavy from loading at start-up. The build
 * fails when a package no longer has the line, so that an upgrade cannot undo one silently.
 */
type Rewrites = Record<string, Array<[from: string, to: string]>>;

const rewrites: Rewrites = {
  // undici's Client loads its HTTP/2 half, and with it node:http2 (+12 MiB resident, measured), at its
  // top; gds never offers h2 (no allowH2), so it is needed only if a server ever negotiates it.
  '/node_modules/undici/lib/dispatcher/client.js': [
    [
      "const connectH2 = require('./client-h2.js')",
      "const connectH2 = (client, socket) => require('./client-h2.js')(client, socket)",
    ],
  ],
  // libpg-query starts its Emscripten module with no options, which looks for the .wasm beside the script:
  // in the bundle it comes from the executable's native addon or asset instead, and the glue loads only for
  // the asset (scripts/sea/libpg-query-options.ts).
  '/node_modules/libpg-query/wasm/index.cjs': [
    ['const libpg_query_js_1 = __importDefault(require("./libpg-query.js"));', ''],
    [
      'const initPromise = (0, libpg_query_js_1.default)().then(',
      'const initPromise = require(\'gds:libpg-query-options\').startModule(() => __importDefault(require("./libpg-query.js")).default).then(',
    ],
  ],
  // undici's fetch loads node:crypto at its top, for two things gds never asks of it: the random boundary
  // of a multipart body, and the hashes of a request's `integrity` (which also lists OpenSSL's hashes):
  // both load it on first use instead (about 5 % of `list --json`'s start-up, profiled).
  '/node_modules/undici/lib/web/fetch/body.js': [
    [
      "const random = runtimeFeatures.has('crypto')\n  ? require('node:crypto').randomInt\n  : (max) => Math.floor(Math.random() * max)",
      "const random = (max) => runtimeFeatures.has('crypto')\n  ? require('node:crypto').randomInt(max)\n  : Math.floor(Math.random() * max)",
    ],
  ],
  '/node_modules/undici/lib/web/fetch/index.js': [
    [
      "const { bytesMatch } = require('../subresource-integrity/subresource-integrity')",
      "const bytesMatch = (bytes, metadataList) => require('../subresource-integrity/subresource-integrity').bytesMatch(bytes, metadataList)",
    ],
  ],
  // oclif's own modules load node:child_process (and with it node:net and node:dgram), node:perf_hooks and
  // node:readline at their top, for a Windows shell probe, its performance marks (off unless asked) and
  // flags read from stdin: each loads on first use instead. Its platform probe reads WSL's files only
  // when the kernel's release names Microsoft, as WSL's do (is-wsl then decides).
  '/node_modules/@oclif/core/lib/util/os.js': [
    [
      'const node_child_process_1 = require("node:child_process");',
      'const node_child_process_1 = { execSync: (...args) => require("node:child_process").execSync(...args) };',
    ],
    [
      "return (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();",
      "return (0, node_os_1.release)().toLowerCase().includes('microsoft') && (await import('wsl-utils')).isWsl ? 'wsl' : (0, node_os_1.platform)();",
    ],
  ],
  '/node_modules/@oclif/core/lib/performance.js': [
    [
      'const node_perf_hooks_1 = require("node:perf_hooks");',
      'const node_perf_hooks_1 = { get performance() { return require("node:perf_hooks").performance; }, get PerformanceObserver() { return require("node:perf_hooks").PerformanceObserver; } };',
    ],
  ],
  '/node_modules/@oclif/core/lib/parser/parse.js': [
    [
      'const node_readline_1 = require("node:readline");',
      'const node_readline_1 = { createInterface: (...args) => require("node:readline").createInterface(...args) };',
    ],
  ],
  // oclif reads the user's theme.json (in gds's config folder) at every start, through node:fs/promises:
  // with node:fs's synchronous call instead, so node:fs/promises (lazy in the bundle, see bundleModules) is not
  // loaded, and no libuv thread pool starts for it (four threads, a command's only use of them).
  '/node_modules/@oclif/core/lib/util/fs.js': [
    [
      "const contents = await (0, promises_1.readFile)(path, 'utf8');",
      "const contents = (0, node_fs_1.readFileSync)(path, 'utf8');",
    ],
  ],
  // oclif logs through `debug`, whose loggers are made at the first log line of every run (node:tty, node:util,
  // supports-color and the colour tables): only when DEBUG is set, as `debug` would then print anything.
  '/node_modules/@oclif/core/lib/logger.js': [
    [
      'const debug_1 = __importDefault(require("debug"));',
      'const debug_1 = { get default() { return require("debug"); } };',
    ],
    [
      'const debug = (0, debug_1.default)(namespace);',
      'const debug = process.env.DEBUG ? (0, debug_1.default)(namespace) : () => {};',
    ],
  ],
  // oclif's `run` and `Command.run` each load a config given to them again from scratch (its plugins, its
  // commands, the user's theme.json read through the thread pool), in case it came from another @oclif/core:
  // a bundle holds one, so the config main() loaded is used as it is.
  '/node_modules/@oclif/core/lib/config/config.js': [
    [
      '        if (isConfig(opts)) {\n',
      '        if (isConfig(opts) && opts instanceof Config && opts._base === BASE)\n            return opts;\n        if (isConfig(opts)) {\n',
    ],
  ],
  // oclif's run reads two functions of its help's utilities at every start (the help flags, the command line
  // normalised); the help classes themselves (the whole of help/, its formatter and templates) load only to
  // print help. index.js and flags.js (its help flag) load them on first use too (lazyRequires).
  '/node_modules/@oclif/core/lib/main.js': [
    [
      'const help_1 = require("./help");',
      'const help_1 = { getHelpFlagAdditions: (...args) => require("./help/util").getHelpFlagAdditions(...args), normalizeArgv: (...args) => require("./help/util").normalizeArgv(...args), loadHelpClass: (...args) => require("./help").loadHelpClass(...args) };',
    ],
  ],
  // oclif sorts the command list with localeCompare, whose first call maps ICU's collation data (+3 MiB
  // resident, measured): code-unit order is the same for gds's ids, which writeCommandManifest checks.
  '/node_modules/@oclif/core/lib/config/plugin.js': [
    [
      '.sort((a, b) => a.id.localeCompare(b.id));',
      '.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));',
    ],
  ],
};

// oclif's modules load, at their top, packages for paths a run seldom takes: rendering an error (wrap-ansi,
// clean-stack, indent-string), a template (ejs), a glob of command files (tinyglobby), plugin patterns
// (minimatch), a package.json config (lilconfig), a spinner, a list, a module's package type, a themed colour:
// 37 modules in all, ansis, oclif's help classes and its ux, each now loaded on first use.
const lazyRequires: Rewrites = lazyOclifRequires({
  'config/config.js': ['ejs', '../ux'],
  'config/plugin-loader.js': ['minimatch'],
  'config/plugin.js': ['tinyglobby'],
  'util/read-pjson.js': ['lilconfig'],
  'ux/action/spinner.js': ['cli-spinners', 'ansi-escapes', 'ansis'],
  'ux/list.js': ['wordwrap'],
  'module-loader.js': ['get-package-type'],
  'errors/handle.js': ['clean-stack', '../help/index'],
  'errors/errors/pretty-print.js': ['indent-string', 'wrap-ansi'],
  'errors/errors/cli.js': ['clean-stack', 'indent-string', 'wrap-ansi'],
  'help/util.js': ['ejs'],
  'help/formatter.js': ['indent-string', 'string-width', 'widest-line', 'wrap-ansi', 'ansis'],
  // supports-color probes the terminals and the environment at load, for a themed colour only
  'ux/supports-color.js': ['supports-color'],
  // ansis probes the environment for colour support and builds its styles at load: only a themed colour, a
  // help page and a spinner use it (`list --json` -1.1 ms of wall and CPU, 61 rounds paired, idle emulated)
  'ux/theme.js': ['ansis'],
  'help/index.js': ['ansis', '../ux'],
  'help/command.js': ['ansis'],
  'help/root.js': ['ansis'],
  // the help classes, for a help page only (main.js above; errors/handle.js shows help for some errors)
  'index.js': ['./help', './ux'],
  'flags.js': ['./help'],
  // ux (its spinner or plain action made at load, from whether stderr is a terminal: Node's stderr stream made
  // then too), for a command's own log, warn or spinner, `--version` and a flag's help only. With the help
  // classes: `list --json` -0.5 ms (61 rounds paired, idle emulated); part of what keeps it under 2.0x
  'command.js': ['./ux'],
  'main.js': ['./ux'],
  'parser/help.js': ['../ux'],
});

/**
 * Rewrites that make each named package's top-level `require` in an @oclif/core module lazy, in the two
 * shapes tsc emits: `__importDefault(require("x"))`, read as `.default`, and a bare `require("x")` (or
 * `require('x')`), read by property or called.
 */
function lazyOclifRequires(files: Record<string, string[]>): Rewrites {
  const lazy: Rewrites = {};
  for (const [file, packages] of Object.entries(files)) {
    const id = `/node_modules/@oclif/core/lib/${file}`;
    const source = readFileSync(join(root, id), 'utf8');
    lazy[id] = packages.map((name): [string, string] => {
      const viaDefault = `__importDefault(require("${name}"));`;
      if (source.includes(viaDefault)) {
        return [viaDefault, `{ get default() { return __importDefault(require("${name}")).default; } };`];
      }
      const load = source.includes(`= require('${name}');`) ? `require('${name}')` : `require("${name}")`;
      return [
        `= ${load};`,
        `= new Proxy(function () {}, { get: (_, key) => ${load}[key], apply: (_, self, args) => ${load}(...args) });`,
      ];
    });
  }
  return lazy;
}

export function rewritten(id: string, contents: string): string {
  let result = contents;
  for (const [from, to] of [...(rewrites[id] ?? []), ...(lazyRequires[id] ?? [])]) {
    if (!result.includes(from)) throw new Error(`build:binary: ${id} no longer has \`${from}\``);
    result = result.replace(from, to);
  }
  return result;
}
