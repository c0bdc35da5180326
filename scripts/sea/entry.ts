// Entry of the single executable (dist/gds), bundled by scripts/build-binary.ts. The same main() as
// bin/run.js, with package.json inlined at build time and every command and plugin hook in the bundle:
// oclif reads its command map and hooks through the embedded `require` (embedded-require.ts), so the
// root plugin is oclif's own, built from package.json, with no plugin discovery and no file read.
import type { Interfaces } from '@oclif/core';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import packageJson from '../../package.json' with { type: 'json' };
import { main } from '../../src/cli/main.js';
import { installEmbeddedModules } from './embedded-require.js';

const commandsTarget = './embedded/commands.cjs';

/** Where oclif thinks the CLI lives: the executable's folder (nothing is read from it). */
const root = dirname(process.execPath);
const pjson = structuredClone(packageJson) as unknown as Interfaces.PJSON;

async function prepare(): Promise<void> {
  const [{ COMMANDS }, { PLUGIN_COMMANDS, PLUGIN_HOOKS }] = await Promise.all([
    import('../../src/commands/index.js'),
    import('gds:embedded-plugins'),
  ]);
  const modules = new Map<string, unknown>([
    [join(root, commandsTarget), { COMMANDS: { ...PLUGIN_COMMANDS, ...COMMANDS } }],
  ]);
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
  installEmbeddedModules(modules);
  pjson.oclif.plugins = [];
  pjson.oclif.commands = { strategy: 'explicit', target: commandsTarget, identifier: 'COMMANDS' };
  pjson.oclif.hooks = hooks;
}

// The start-up test's window into the bundle: every package module that ran (build-binary.ts marks them),
// the same list test/cli/fixtures/record-loaded-modules.mjs writes for `node bin/run.js`.
const loadedModulesFile = process.env.GDS_TEST_LOADED_MODULES;
if (loadedModulesFile !== undefined) {
  process.on('exit', () => {
    const loaded = (globalThis as { __gdsLoadedModules?: Set<string> }).__gdsLoadedModules ?? [];
    writeFileSync(loadedModulesFile, JSON.stringify([...loaded]));
  });
}

/**
 * GDS_TEST_KEYRING_PROBE=1: load the keychain addon the way the credential store does and make a round trip
 * through it (store, read back, delete a random secret under a probe account), then print the outcome as
 * one JSON line: test/binary checks that the addon works inside the executable.
 */
async function probeKeyring(): Promise<void> {
  const { AsyncEntry } = await import('@napi-rs/keyring');
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

if (process.env.GDS_TEST_KEYRING_PROBE === '1') void probeKeyring();
else void main(process.argv.slice(2), root, { bundle: { pjson, prepare } });
