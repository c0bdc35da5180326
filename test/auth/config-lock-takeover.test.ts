// The files of the config folder (config.json, settings.json) written by a process that lost their lock to
// another one after writing its temporary copy and before renaming it over the file, or before removing the
// file: the other process's file stays as it wrote it, no temporary copy is left, and the loser fails with
// config_lock_lost. Nobody had noticed the loss yet (proper-lockfile checks its lock once a second).
import type * as FsPromises from 'node:fs/promises';
import { mkdir, mkdtemp, readdir, readFile, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Profile } from '../../src/auth/config.js';
import { configPath, loadConfig, removeConfigFile, updateConfig } from '../../src/auth/config.js';
import { forgetSettings, settingsPath, updateSettings } from '../../src/cli/settings.js';
import { CliError } from '../../src/core/errors.js';

// Every temporary file the config module writes goes through `written` once written and closed (when set).
// And every stat of a file (not the lock folder's) goes through `statted` after it answered (when set).
const moment = vi.hoisted(() => ({
  written: undefined as ((temp: string) => Promise<void>) | undefined,
  statted: undefined as ((path: string) => Promise<void>) | undefined,
}));
vi.mock('node:fs/promises', async (actual) => {
  const fs = await actual<typeof FsPromises>();
  return {
    ...fs,
    open: async (...args: Parameters<typeof fs.open>) => {
      const handle = await fs.open(...args);
      const [path] = args;
      if (typeof path === 'string' && path.endsWith('.tmp')) {
        const close = handle.close.bind(handle);
        handle.close = async () => {
          await close();
          await moment.written?.(path);
        };
      }
      return handle;
    },
    stat: async (...args: Parameters<typeof fs.stat>) => {
      const stats = await fs.stat(...args);
      const [path] = args;
      if (typeof path === 'string' && !path.endsWith('.lock')) await moment.statted?.(path);
      return stats;
    },
  };
});
afterEach(() => {
  moment.written = undefined;
  moment.statted = undefined;
  forgetSettings();
});

async function freshEnv(): Promise<NodeJS.ProcessEnv> {
  return { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-config-takeover-')), 'gds') };
}

const profile = (base: string): Profile => ({ kind: 'static', base, token: 'cli_t' });

/**
 * What a process that found `target`'s lock stale does: removes the folder, makes its own, writes `theirs`.
 * Its lock's mtime is its own: a real takeover comes 5 s or more after this holder's last update.
 */
async function takeOver(target: string, theirs: string): Promise<void> {
  await rmdir(`${target}.lock`);
  await mkdir(`${target}.lock`);
  const later = new Date(Date.now() + 5_000);
  await utimes(`${target}.lock`, later, later);
  await writeFile(target, theirs);
}

async function lockLost(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  expect(error).toMatchObject({ code: 'config_lock_lost', exitCode: 1 });
  return error as CliError;
}

/** The file is `theirs` byte for byte, no temporary copy is left, and the lock is still the other process's. */
async function leftToTheOther(target: string, theirs: string): Promise<void> {
  expect(await readFile(target, 'utf8')).toBe(theirs);
  expect((await readdir(join(target, '..'))).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  expect((await stat(`${target}.lock`)).isDirectory()).toBe(true);
}

describe('a lock taken over by another process while gds writes under it', () => {
  it('config.json: taken over after the temporary copy is written, the other one keeps its file', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    const path = configPath(env);
    const theirs = `${JSON.stringify({ version: 1, activeProfile: null, profiles: { b: profile('https://b') } })}\n`;
    const seen: string[] = [];
    moment.written = async (temp) => {
      seen.push(temp);
      await takeOver(path, theirs);
    };
    const error = await lockLost(updateConfig((c) => void (c.profiles.c = profile('https://c')), { env }));
    expect(error.message).toContain(`${path}.lock`);
    expect(seen).toHaveLength(1);
    await leftToTheOther(path, theirs);
    expect(Object.keys((await loadConfig({ env })).profiles)).toEqual(['b']);

    // Once the other process lets go, the next update lands on its file.
    moment.written = undefined;
    await rmdir(`${path}.lock`);
    await updateConfig((c) => void (c.profiles.c = profile('https://c')), { env });
    expect(Object.keys((await loadConfig({ env })).profiles).sort()).toEqual(['b', 'c']);
  });

  it('config.json: taken over before its last profile is removed, the other one keeps its file', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    const path = configPath(env);
    const theirs = `${JSON.stringify({ version: 1, activeProfile: null, profiles: { b: profile('https://b') } })}\n`;
    await lockLost(
      updateConfig(
        async (c) => {
          delete c.profiles.a;
          await takeOver(path, theirs);
        },
        { env },
      ),
    );
    await leftToTheOther(path, theirs);
  });

  it('config.json removed whole (logout of every profile): taken over first, the other one keeps its file', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    const path = configPath(env);
    const theirs = `${JSON.stringify({ version: 1, activeProfile: null, profiles: { b: profile('https://b') } })}\n`;
    // removeConfigFile looks whether the file is there, under the lock, before it removes it.
    moment.statted = async (statted) => {
      if (statted !== path) return;
      moment.statted = undefined;
      await takeOver(path, theirs);
    };
    await lockLost(removeConfigFile({ env }));
    await leftToTheOther(path, theirs);
  });

  it('settings.json: taken over after the temporary copy is written, the other one keeps its file', async () => {
    const env = await freshEnv();
    await updateSettings((file) => void (file.settings.pager = 'never'), { env });
    const path = settingsPath(env);
    const theirs = `${JSON.stringify({ version: 1, settings: { color: 'never' }, aliases: {} }, null, 2)}\n`;
    const seen: string[] = [];
    moment.written = async (temp) => {
      seen.push(temp);
      await takeOver(path, theirs);
    };
    await lockLost(updateSettings((file) => void (file.settings.prompt = 'disabled'), { env }));
    expect(seen).toEqual([expect.stringMatching(/settings\.json\.[^/]*\.tmp$/)]);
    await leftToTheOther(path, theirs);
  });
});
