// The suite's own home folder (isolated-home.ts, a setup file of vitest.config.ts). A developer who ran
// `gds settings set color always` (or prompt disabled, a pager, aliases, profiles) saw unit tests fail that
// give gds functions a bare environment (`env: {}`): folders.ts resolved it to their ~/.config/gds.
// Here: the folders gds falls back to are in a temp home, never in the home of whoever started vitest; the
// CLI the tests start reads that temp home; and a run under a hostile home passes the tests it failed.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { configPath, loadConfig } from '../../src/auth/config.js';
import { completionCacheDir } from '../../src/cli/completion-values.js';
import { readSettings, settingsPath } from '../../src/cli/settings.js';
import { configDir } from '../../src/core/folders.js';
import { apiCacheDir } from '../../src/services/api-cache.js';
import { collect, node24, repoRoot, runCli } from '../cli/helpers/cli-process.js';

/**
 * The variables that name gds's folders, which the setup unsets (listed here, not imported: importing the
 * setup module would make the home this file checks for).
 */
const folderVariables = ['GDS_CONFIG_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME'];

/** The homes no test may touch: HOME as vitest was started, and the account's own (from the user database). */
const realHomes = [inject('invokingHome'), userInfo().homedir];

const inside = (path: string, folder: string) => {
  const rest = relative(folder, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
};

/** Non-default values for every setting, aliases, and an active profile: what a developer may have. */
const hostileSettings = {
  version: 1,
  settings: { prompt: 'disabled', browser: 'false', pager: 'false', color: 'always' },
  aliases: { st: 'status', co: '!echo hostile alias ran' },
};
const hostileConfig = {
  version: 1,
  activeProfile: 'hostile',
  secretStorage: 'file',
  profiles: {
    hostile: { kind: 'static', base: 'http://127.0.0.1:9', token: 'gds_hostile_0123456789abcdef' },
  },
};

async function plantGdsFiles(folder: string): Promise<void> {
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await writeFile(join(folder, 'settings.json'), JSON.stringify(hostileSettings), { mode: 0o600 });
  await writeFile(join(folder, 'config.json'), JSON.stringify(hostileConfig), { mode: 0o600 });
}

describe('every test file has a home folder of its own', () => {
  it('is neither the home vitest was started with nor the account’s, and is in the temp folder', () => {
    expect(realHomes[0]).not.toBe('');
    for (const real of realHomes) expect(inside(homedir(), real), `${homedir()} in ${real}`).toBe(false);
    expect(inside(homedir(), tmpdir())).toBe(true);
    expect(process.env.USERPROFILE).toBe(homedir());
    for (const name of folderVariables) expect(process.env[name], name).toBeUndefined();
  });

  it('is where a bare environment puts every gds folder, and it starts empty', async () => {
    const folders = [
      configDir({}),
      configPath({}),
      settingsPath({}),
      apiCacheDir({}),
      completionCacheDir({}),
      configDir(process.env),
    ];
    for (const folder of folders) {
      expect(inside(folder, homedir()), folder).toBe(true);
      for (const real of realHomes) expect(inside(folder, real), `${folder} in ${real}`).toBe(false);
    }
    expect(readSettings({})).toEqual({ version: 1, settings: {}, aliases: {} });
    expect(await loadConfig({ env: {} })).toEqual({ version: 1, activeProfile: null, profiles: {} });
  });

  it('is the home of the CLI a test starts: it reads the settings there', async () => {
    for (const real of realHomes) expect(inside(homedir(), real)).toBe(false); // never plant in a real home
    await plantGdsFiles(configDir({}));
    try {
      const result = await runCli(['settings', 'get', 'color', '--json']);
      expect(result.stderr).toBe('');
      expect(JSON.parse(result.stdout)).toMatchObject({ key: 'color', value: 'always', source: 'settings' });
    } finally {
      await rm(configDir({}), { recursive: true, force: true });
    }
  });
});

describe('a run of vitest by a developer with settings, aliases and a profile of their own', () => {
  it('passes the tests that read settings through a bare environment, and leaves the files as they were', async () => {
    for (const real of realHomes) expect(inside(homedir(), real)).toBe(false); // never plant in a real home
    const hostile = join(homedir(), 'developer');
    const gdsFolder = join(hostile, '.config', 'gds');
    await plantGdsFiles(gdsFolder);
    const before = await Promise.all(
      ['settings.json', 'config.json'].map((f) => readFile(join(gdsFolder, f))),
    );
    // The colour and prompt tests give functions env: {} (they failed with these settings); XDG_CONFIG_HOME
    // set as some desktops do. The nested run's own report goes beside, not over this run's.
    const child = spawn(
      node24,
      [
        join(repoRoot, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--reporter=default',
        'test/cli/prompt.test.ts',
        'test/cli/output.test.ts',
      ],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HOME: hostile,
          USERPROFILE: hostile,
          XDG_CONFIG_HOME: join(hostile, '.config'),
          GDS_VITEST_REPORT: join(homedir(), 'report.json'),
          NO_COLOR: '1',
          CI: '1',
        },
      },
    );
    const result = await collect(child);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Test Files\s+2 passed/);
    const after = await Promise.all(
      ['settings.json', 'config.json'].map((f) => readFile(join(gdsFolder, f))),
    );
    expect(after).toEqual(before);
  });
});
