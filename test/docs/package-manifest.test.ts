// The npm package as installed: `npm pack` adds oclif.manifest.json (prepack), and with it a command imports
// only its own module. Laid out here as npm installs it (bin/, dist/, package.json, the manifest made by
// `oclif manifest`, node_modules beside), in a temp folder, so the checkout itself never has a manifest.
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, collect, ensureBuilt, node24, repoRoot } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';

let dir: string;
let installed: string;
let server: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-package-'));
  installed = join(dir, 'gds');
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  await mkdir(join(installed, 'bin'), { recursive: true });
  await copyFile(join(repoRoot, 'bin/run.js'), join(installed, 'bin/run.js'));
  await copyFile(join(repoRoot, 'package.json'), join(installed, 'package.json'));
  await symlink(join(repoRoot, 'dist'), join(installed, 'dist'));
  await symlink(join(repoRoot, 'node_modules'), join(installed, 'node_modules'));
  const manifest = await collect(
    spawn(node24, [join(repoRoot, 'node_modules/oclif/bin/run.js'), 'manifest', installed], {
      cwd: installed,
      env: cliEnv(),
    }),
  );
  expect(manifest.code, manifest.stderr).toBe(0);
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs the installed copy, recording every module it loads (test/cli/fixtures/record-loaded-modules.mjs). */
async function runInstalled(
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult & { commandModules: string[]; modules: string[] }> {
  const record = join(dir, `modules-${args.join('_').replace(/[^\w]/g, '')}.json`);
  const preload = join(repoRoot, 'test/cli/fixtures/record-loaded-modules.mjs');
  const result = await collect(
    spawn(node24, ['--import', preload, join(installed, 'bin/run.js'), ...args], {
      cwd: dir,
      env: cliEnv({ ...env, GDS_TEST_LOADED_MODULES: record, GDS_CONFIG_DIR: join(dir, 'config') }),
    }),
  );
  const modules = JSON.parse(await readFile(record, 'utf8')) as string[];
  const commandModules = modules
    .filter((url) => url.includes('/dist/commands/'))
    .map((url) => url.slice(url.indexOf('/dist/commands/') + '/dist/commands/'.length))
    .sort();
  return { ...result, commandModules, modules };
}

describe('the installed npm package, with the manifest npm pack adds', () => {
  it('gds list --json imports the list command alone, and answers as always', async () => {
    const r = await runInstalled(['list', '--json'], {
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      SERVICE_API_URL: server.url,
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    const names = lines.map((line) => (JSON.parse(line) as { name: string }).name);
    expect(names).toContain('customers');
    expect(r.commandModules).toEqual(['list.js', 'loaders.js']);
    // The transport sends on node:http: no undici module loads (src/client/transport.ts).
    expect(r.modules.filter((url) => url.includes('/node_modules/undici/'))).toEqual([]);
  });

  it('help lists every command from the manifest without importing one', async () => {
    const r = await runInstalled(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s+whoami\s/m);
    expect(r.commandModules).toEqual(['loaders.js']);
  });

  it("a command's help shows its flags from the manifest", async () => {
    const r = await runInstalled(['gate', 'diff', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--semantic');
    expect(r.commandModules).toEqual(['loaders.js']);
  });

  it('a flag error still exits 2 with the error on stderr', async () => {
    const r = await runInstalled(['list', '--nope']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('Unknown flag: --nope.');
  });
});

describe('an oclif.manifest.json that lists other commands than the installed ones', () => {
  it('is set aside: every installed command runs, and none the manifest alone names', async () => {
    const stale = join(dir, 'stale');
    await mkdir(join(stale, 'bin'), { recursive: true });
    for (const file of ['bin/run.js', 'package.json'])
      await copyFile(join(installed, file), join(stale, file));
    await symlink(join(repoRoot, 'dist'), join(stale, 'dist'));
    await symlink(join(repoRoot, 'node_modules'), join(stale, 'node_modules'));
    const manifest = JSON.parse(await readFile(join(installed, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, { id: string }>;
    };
    manifest.commands.ghost = { ...manifest.commands.whoami!, id: 'ghost' };
    delete manifest.commands.whoami;
    await writeFile(join(stale, 'oclif.manifest.json'), JSON.stringify(manifest));
    const run = (args: string[]) =>
      collect(
        spawn(node24, [join(stale, 'bin/run.js'), ...args], {
          cwd: dir,
          env: cliEnv({ SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: server.url }),
        }),
      );
    const whoami = await run(['whoami', '--json']);
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ role: 'OWNER' });
    const ghost = await run(['ghost', '--json']);
    expect(ghost.code).toBe(2);
    expect(JSON.parse(ghost.stderr)).toMatchObject({ error: { code: 'command_not_found' } });
  });
});

describe('a checkout, where no manifest exists', () => {
  it('oclif imports the whole command map, so every command is there', async () => {
    const [command, args] = [node24, [join(repoRoot, 'bin/run.js'), '--help']];
    const r = await collect(spawn(command, args, { cwd: dir, env: cliEnv() }));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s+whoami\s/m);
  });
});
