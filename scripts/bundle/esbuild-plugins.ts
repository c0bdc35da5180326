// esbuild's options and plugins of every bundle: the executable's (gds.cjs, the command bundles, the asset
// bundles) and the npm package's command bundles.
import { existsSync, promises as fsPromises, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { build } from 'esbuild';
import type { BuildOptions, Plugin } from 'esbuild';
import type { Interfaces } from '@oclif/core';
import { bundleWrapper } from '../sea/bundle-script.js';
import { promptsUsed, rewritten } from './rewrites.js';
import { moduleFile, readJson, root } from './tools.js';

/** Packages whose evaluation the executable reports under GDS_TEST_LOADED_MODULES (test/binary). */
const markedModules = /[\\/]node_modules[\\/].+\.[cm]?js$/;

export interface PluginEntries {
  commands: Array<[id: string, file: string]>;
  hooks: Array<[event: string, file: string, identifier: string]>;
}

export function scriptOptions(options: { minify: boolean }): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    // ASCII only (esbuild's default): boot.ts reads the bundle as latin1, one byte per character.
    charset: 'ascii',
    minify: options.minify,
    legalComments: 'none',
    logLevel: 'error',
  };
}

/** src/commands/loaders.ts's table, read as text: each command id and the module its loader imports. */
export function loadersById(): { COMMAND_LOADERS: Record<string, string> } {
  const file = join(root, 'src/commands/loaders.ts');
  const source = readFileSync(file, 'utf8');
  const table: Record<string, string> = {};
  for (const match of source.matchAll(/^\s*(?:'([^']+)'|([\w$]+)): \(\) => import\('([^']+)'\),?$/gm)) {
    const [, quoted, bare, module] = match;
    table[(quoted ?? bare) as string] = resolve(dirname(file), (module as string).replace(/\.js$/, '.ts'));
  }
  return { COMMAND_LOADERS: table };
}

/**
 * A bundle of one command: its loader alone in the command table, the manifest with its entry alone (oclif's
 * config then builds no entry, permutation or topic for the others), and no plugin command. Used only for
 * command lines routed to it (boot.ts, bin/run.js).
 */
export function commandOnly(id: string, manifest: Interfaces.Manifest): Plugin {
  const module = loadersById().COMMAND_LOADERS[id];
  if (module === undefined) throw new Error(`build:binary: src/commands/loaders.ts has no loader for ${id}`);
  const commands = { [id]: manifest.commands[id] };
  return {
    name: 'gds-command-only',
    setup(b) {
      b.onResolve({ filter: /[\\/]commands[\\/]loaders\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path) === join(root, 'src/commands/loaders.js')
          ? { path: 'loaders', namespace: 'gds-command-only' }
          : undefined,
      );
      b.onResolve({ filter: /^gds:embedded-manifest$/ }, () => ({
        path: 'manifest',
        namespace: 'gds-command-only',
      }));
      b.onResolve({ filter: /^gds:embedded-plugins$/ }, () => ({
        path: 'plugins',
        namespace: 'gds-command-only',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-command-only' }, (args) => ({
        contents: {
          loaders: `export const COMMAND_LOADERS = { ${JSON.stringify(id)}: () => import(${JSON.stringify(module)}) };`,
          manifest: `export default ${JSON.stringify({ ...manifest, commands })};`,
          plugins: embeddedPluginsSource({ commands: [], hooks: pluginEntries().hooks }),
        }[args.path],
        resolveDir: root,
        loader: 'js',
      }));
    },
  };
}

/**
 * Packages only a rare path runs, each kept out of the command bundles as a bundle of its own (a SEA asset,
 * by name), evaluated on first import (scripts/sea/asset-module.ts): a bundle's source is copied into V8's
 * heap at every start, used or not. undici (openid-client's fetch when signing in or refreshing a session,
 * and its proxy agent) was 536 kB of the 1.3 MB of `gds list`'s bundle; openid-client with oauth4webapi
 * and jose another 83 kB. Each asset holds packages nothing else in the bundle imports, so no module is
 * evaluated twice. Specifier -> [asset, export of the asset that stands for it].
 */
const assetModules: Record<string, [asset: string, member: string]> = {
  undici: ['undici.cjs', 'undici'],
  'undici/lib/web/fetch/index.js': ['undici.cjs', 'fetch'],
  'openid-client': ['openid-client.cjs', 'openidClient'],
};

/** The asset bundles of assetModules, built in `dir`: asset name -> file. */
export async function buildAssetModules(
  dir: string,
  options: { minify: boolean },
  modules: Plugin,
): Promise<Record<string, string>> {
  const byAsset = new Map<string, Array<[specifier: string, member: string]>>();
  for (const [specifier, [asset, member]] of Object.entries(assetModules)) {
    byAsset.set(asset, [...(byAsset.get(asset) ?? []), [specifier, member]]);
  }
  const files: Record<string, string> = {};
  for (const [asset, members] of byAsset) {
    files[asset] = join(dir, asset);
    await build({
      ...scriptOptions(options),
      stdin: {
        contents: `module.exports = { ${members.map(([specifier, member]) => `${member}: require(${JSON.stringify(specifier)})`).join(', ')} };`,
        resolveDir: root,
        loader: 'js',
      },
      outfile: files[asset],
      banner: { js: bundleWrapper.head },
      footer: { js: bundleWrapper.tail },
      plugins: [modules],
    });
  }
  return files;
}

/** In a command bundle, each import of an assetModules package reads its asset bundle instead. */
export function assetModuleImports(): Plugin {
  const loader = join(root, 'scripts/sea/asset-module.ts');
  return {
    name: 'gds-asset-modules',
    setup(b) {
      const names = Object.keys(assetModules).map((specifier) => specifier.replace(/[./]/g, '\\$&'));
      b.onResolve({ filter: new RegExp(`^(?:${names.join('|')})$`) }, (args) => ({
        path: args.path,
        namespace: 'gds-asset-module',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-asset-module' }, (args) => {
        const [asset, member] = assetModules[args.path] ?? [];
        return {
          contents: `module.exports = require(${JSON.stringify(loader)}).assetModule(${JSON.stringify(asset)})[${JSON.stringify(member)}];`,
          resolveDir: root,
          loader: 'js',
        };
      });
    },
  };
}

/**
 * Every module that exists only in the bundle, and the redirects that put them in place. The npm package's
 * bundle (build-package-bundles.ts) loads the keychain addon and the WebAssembly of PostgreSQL's parser and
 * of jq from node_modules, as the rest of the package does: it takes none of the executable's redirects.
 */
export function bundleModules(
  gate1Validator: string,
  manifestFile: string,
  flavour: 'executable' | 'package' = 'executable',
): Plugin {
  const keyringShim = join(root, 'scripts/sea/keyring.ts');
  const schemaValidator = join(root, 'src/core/gate1/schema-validator.ts');
  const jqLoadOptions = join(root, 'src/cli/jq-load-options.ts');
  return {
    name: 'gds-bundle-modules',
    setup(b) {
      b.onResolve({ filter: /^gds:embedded-plugins$/ }, () => ({ path: 'plugins', namespace: 'gds' }));
      b.onLoad({ filter: /^plugins$/, namespace: 'gds' }, () => ({
        contents: embeddedPluginsSource(pluginEntries()),
        resolveDir: root,
        loader: 'js',
      }));
      b.onResolve({ filter: /^gds:gate1-standalone-validator$/ }, () => ({ path: gate1Validator }));
      // node:fs/promises loads readline's interface and the REPL's history at its top (+1 MiB resident and
      // 1 ms, measured beside node:http): gds's config reader and oclif's file helpers import it at their
      // top but call it only on some paths. Each of its functions is looked up on first call instead.
      b.onResolve({ filter: /^(?:node:)?fs\/promises$/ }, () => ({
        path: 'fs-promises',
        namespace: 'gds-lazy-builtin',
      }));
      b.onLoad({ filter: /.*/, namespace: 'gds-lazy-builtin' }, () => ({
        contents: Object.keys(fsPromises)
          .map(
            (name) =>
              `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => require('node:fs').promises[${JSON.stringify(name)}] });`,
          )
          .join('\n'),
        loader: 'js',
      }));
      b.onResolve({ filter: /^gds:embedded-manifest$/ }, () => ({ path: manifestFile }));
      // @inquirer/prompts' index re-exports every prompt; in a lazily loaded module esbuild keeps them all (the
      // editor prompt alone brings iconv-lite: +0.8 MB of bundle that every start-up reads, +10 MiB resident,
      // measured). Its importers get the prompts they use only (promptsUsed); another prompt fails the build.
      b.onResolve({ filter: /^@inquirer\/prompts$/ }, async (args) => {
        const importer = Object.keys(promptsUsed).find((file) => args.importer.includes(file));
        if (importer === undefined || args.pluginData === 'real') return;
        const { kind, resolveDir } = args;
        const real = await b.resolve(args.path, {
          kind,
          resolveDir,
          importer: args.importer,
          pluginData: 'real',
        });
        return { path: importer, namespace: 'gds-prompts', pluginData: dirname(real.path) };
      });
      b.onLoad({ filter: /.*/, namespace: 'gds-prompts' }, (args) => ({
        contents: (promptsUsed[args.path] ?? [])
          .map((prompt) => `export { default as ${prompt} } from '@inquirer/${prompt}';`)
          .join('\n'),
        resolveDir: args.pluginData as string,
        loader: 'js',
      }));
      b.onResolve({ filter: /[\\/]schema-validator\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts')) === schemaValidator
          ? { path: join(root, 'scripts/sea/gate1-schema-validator.ts') }
          : undefined,
      );
      // Each package module records that it ran, for the start-up tests; nothing is written unless asked.
      b.onLoad({ filter: markedModules }, async (args) => {
        const path = args.path.split(sep).join('/');
        const id = path.slice(path.indexOf('/node_modules/'));
        const contents = rewritten(id, await readFile(args.path, 'utf8'));
        return {
          contents: `${contents}\n;(globalThis.__gdsLoadedModules ??= new Set()).add(${JSON.stringify(id)});\n`,
          loader: 'js',
        };
      });
      if (flavour === 'package') return;
      b.onResolve({ filter: /^@napi-rs\/keyring$/ }, () => ({ path: keyringShim }));
      b.onResolve({ filter: /^gds:libpg-query-options$/ }, () => ({
        path: join(root, 'scripts/sea/libpg-query-options.ts'),
      }));
      // jq-wasm gets its WebAssembly from the asset jq.wasm (scripts/sea/jq-options.ts). Its ES module entry
      // finds its folder by import.meta.url, which a CommonJS bundle does not have: the bundle takes its
      // CommonJS entry, which reads __dirname only when no WebAssembly is given.
      b.onResolve({ filter: /^jq-wasm$/ }, () => ({
        path: join(root, 'node_modules/jq-wasm/dist/index.cjs'),
      }));
      b.onResolve({ filter: /[\\/]jq-load-options\.js$/ }, (args) =>
        resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts')) === jqLoadOptions
          ? { path: join(root, 'scripts/sea/jq-options.ts') }
          : undefined,
      );
    },
  };
}

/** Commands (from each plugin's manifest) and hooks of the plugins package.json's oclif section lists. */
export function pluginEntries(): PluginEntries {
  const pjson = readJson(join(root, 'package.json')) as { oclif: { plugins?: string[] } };
  const entries: PluginEntries = { commands: [], hooks: [] };
  for (const name of pjson.oclif.plugins ?? []) {
    const dir = join(root, 'node_modules', name);
    const plugin = readJson(join(dir, 'package.json')) as {
      oclif?: { hooks?: Record<string, HookSpec | HookSpec[]> };
    };
    const manifestFile = join(dir, 'oclif.manifest.json');
    if (!existsSync(manifestFile))
      throw new Error(`${name} ships no oclif.manifest.json: cannot list its commands`);
    const manifest = readJson(manifestFile) as { commands: Record<string, { relativePath?: string[] }> };
    for (const [id, command] of Object.entries(manifest.commands)) {
      if (command.relativePath === undefined) throw new Error(`${name}'s manifest has no path for ${id}`);
      entries.commands.push([id, join(dir, ...command.relativePath)]);
    }
    for (const [event, specs] of Object.entries(plugin.oclif?.hooks ?? {})) {
      for (const spec of [specs].flat()) {
        const { target, identifier } =
          typeof spec === 'string' ? { target: spec, identifier: 'default' } : spec;
        entries.hooks.push([event, moduleFile(join(dir, target)), identifier ?? 'default']);
      }
    }
  }
  return entries;
}

type HookSpec = string | { target: string; identifier?: string };

export function embeddedPluginsSource({ commands, hooks }: PluginEntries): string {
  const lines: string[] = [];
  const commandMap = commands.map(
    ([id, file]) => `${JSON.stringify(id)}: () => import(${JSON.stringify(file)})`,
  );
  lines.push(`export const PLUGIN_COMMANDS = { ${commandMap.join(', ')} };`);
  const events = new Map<string, string[]>();
  for (const [event, file, identifier] of hooks) {
    const loader = `() => import(${JSON.stringify(file)}).then((m) => m[${JSON.stringify(identifier)}])`;
    events.set(event, [...(events.get(event) ?? []), loader]);
  }
  const hookMap = [...events].map(([event, loaders]) => `${JSON.stringify(event)}: [${loaders.join(', ')}]`);
  lines.push(`export const PLUGIN_HOOKS = { ${hookMap.join(', ')} };`);
  return lines.join('\n');
}
