// Entry of the single executable (dist/gds), bundled by scripts/build-binary.ts, and of the npm package's
// bundle (dist/bundle/gds.cjs, buildPackageBundle), which bin/run.js requires for every command line. The
// same main() as bin/run.js, with package.json inlined at build time and every command and plugin
// hook in the bundle.
// oclif gets its root plugin ready-made, with the command manifest computed at build time (help and the
// command list need no command class), and main() imports only the command being run. Plugin hooks are
// loaded through the embedded `require` (embedded-require.ts). Nothing is read from disk.
import type * as OclifCore from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import manifest from 'gds:embedded-manifest';
import { dirname, join } from 'node:path';
import { isSea } from 'node:sea';
import packageJson from '../../package.json' with { type: 'json' };
import { KEYCHAIN_CHILD_ARG, runKeychainChild } from '../../src/auth/keychain-child.js';
import { main } from '../../src/cli/main.js';
import type { CommandLoaders } from '../../src/cli/main.js';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';
import { installEmbeddedModules } from './embedded-require.js';
import { recordLoadedModules } from './loaded-modules.js';

/**
 * Where oclif thinks the CLI lives (nothing is read from it): the executable's folder, or the npm package's
 * (its bundle is in dist/bundle).
 */
const root = isSea() ? dirname(process.execPath) : join(__dirname, '..', '..');
const pjson = structuredClone(packageJson) as unknown as Interfaces.PJSON;

async function prepare(
  oclif: typeof OclifCore,
): Promise<{ rootPlugin: Interfaces.Plugin; commands: CommandLoaders }> {
  const { PLUGIN_COMMANDS, PLUGIN_HOOKS } = await import('gds:embedded-plugins');
  const modules = new Map<string, unknown>();
  const hooks: Record<string, string[]> = {};
  for (const [event, loaders] of Object.entries(PLUGIN_HOOKS)) {
    hooks[event] = loaders.map((load, index) => {
      const target = `./embedded/hooks/${event}-${index}.cjs`;
      modules.set(join(root, target), {
        default: async function (this: unknown, options: unknown) {
          const hook = await load();
          return hook.call(this as never, options as never);
        },
      });
      return target;
    });
  }
  // The help class (src/cli/help.ts), imported only when oclif loads it to print help: oclif awaits what
  // `require` returns, so a thenable stands in for the module.
  const helpModule = `./embedded/help.cjs`;
  modules.set(join(root, helpModule), {
    then(resolve: (module: unknown) => void, reject: (error: unknown) => void) {
      import('../../src/cli/help.js').then(resolve, reject);
    },
  });
  pjson.oclif.helpClass = helpModule;
  installEmbeddedModules(modules);
  pjson.oclif.plugins = [];
  pjson.oclif.hooks = hooks;
  const rootPlugin = new oclif.Plugin({ root, pjson, isRoot: true });
  // oclif reads a plugin's manifest from a file next to it (a private method, no option): the bundle has
  // it inline. The binary's end-to-end suite fails if a new @oclif/core stops calling this.
  const withManifest = rootPlugin as unknown as { _manifest(): Promise<Interfaces.Manifest> };
  withManifest._manifest = async () => {
    rootPlugin.commandIDs = Object.keys(manifest.commands);
    rootPlugin.hasManifest = true;
    return manifest;
  };
  return { rootPlugin, commands: { ...PLUGIN_COMMANDS, ...COMMAND_LOADERS } };
}

recordLoadedModules();

/**
 * GDS_TEST_KEYRING_PROBE=1: load the keychain addon the way the credential store does and make a round trip
 * through it (store, read back, delete a random secret under a probe account), then print the outcome as
 * one JSON line: test/binary checks that the addon works inside the executable.
 */
async function probeKeyring(): Promise<void> {
  const { AsyncEntry } = await import('@napi-rs/keyring');
  const { randomUUID } = process.getBuiltinModule('node:crypto');
  const secret = randomUUID();
  let call: string;
  try {
    const entry = new AsyncEntry('gds-binary-probe', `probe-${process.pid}`, {
      linux: { store: 'secret-service' },
    });
    await entry.setPassword(secret);
    const readBack = await entry.getPassword();
    await entry.deletePassword();
    call = readBack === secret ? 'round trip' : 'read back something else';
  } catch (error) {
    call = `refused: ${(error as Error).message}`;
  }
  process.stdout.write(`${JSON.stringify({ asyncEntry: typeof AsyncEntry, call })}\n`);
}

// The keychain child (src/auth/keychain-child.ts): gds starts itself with this argument to run one keychain
// call in a process it can kill (secret-store.ts).
if (process.argv[2] === KEYCHAIN_CHILD_ARG) void runKeychainChild();
else if (process.env.GDS_TEST_KEYRING_PROBE === '1') void probeKeyring();
else void main(process.argv.slice(2), root, { bundle: { pjson, prepare } });

// For the npm package's bin/run.js, which writes the bundle's code cache as the process exits: V8's flags a
// command set (a plan's young generation held) go back first, so that the next run's V8 takes the cache; and
// none is written after a usage error, whatever its exit code.
export { restoreV8Flags } from '../../src/io/young-generation.js';
export { usageErrorEnded } from '../../src/cli/usage-ending.js';
