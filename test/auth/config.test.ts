// The config file on disk: where it lives, its modes, atomic replacement under the lock, clear errors for a
// damaged file, and a writer killed with SIGKILL mid-loop leaving a file that still loads.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, readFile, rmdir, stat, utimes, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import type { GdsConfig, Profile } from '../../src/auth/config.js';
import { configDir, configPath, loadConfig, updateConfig, withProfileLock } from '../../src/auth/config.js';
import { ensureBuilt, node24 } from '../cli/helpers/cli-process.js';

const fixture = new URL('./fixtures/config-writer.mjs', import.meta.url).pathname;

async function freshEnv(): Promise<NodeJS.ProcessEnv> {
  return { GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-config-')), 'gds') };
}

const profile = (base: string): Profile => ({ kind: 'static', base, token: 'cli_t' });

function modeOf(path: string): Promise<number> {
  return stat(path).then((s) => s.mode & 0o777);
}

async function caught(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('where the config lives', () => {
  it('GDS_CONFIG_DIR wins, then an absolute XDG_CONFIG_HOME, then ~/.config/gds', () => {
    expect(configDir({ GDS_CONFIG_DIR: '/x/y', XDG_CONFIG_HOME: '/xdg' })).toBe('/x/y');
    expect(configPath({ XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/gds/config.json');
    expect(configDir({ XDG_CONFIG_HOME: 'relative/dir' })).toBe(join(homedir(), '.config/gds'));
    expect(configDir({})).toBe(join(homedir(), '.config/gds'));
  });
});

describe('loading and writing', () => {
  it('no file: an empty config, and nothing is created by reading', async () => {
    const env = await freshEnv();
    expect(await loadConfig({ env })).toEqual({ version: 1, activeProfile: null, profiles: {} });
    await expect(stat(configDir(env))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('updateConfig creates the folder 0700 and the file 0600, and keeps fields it does not know', async () => {
    const env = await freshEnv();
    await updateConfig(
      (c) => {
        c.profiles.s = { kind: 'session', base: 'https://a', issuer: 'https://a', loginHint: 'x' } as Profile;
        c.activeProfile = 's';
      },
      { env },
    );
    expect(await modeOf(configDir(env))).toBe(0o700);
    expect(await modeOf(configPath(env))).toBe(0o600);
    const config = await loadConfig({ env });
    expect(config.profiles.s).toEqual({
      kind: 'session',
      base: 'https://a',
      issuer: 'https://a',
      loginHint: 'x',
    });
    expect(JSON.parse(await readFile(configPath(env), 'utf8'))).toEqual(config);
  });

  it('a loosened file mode is set back to 0600 on load, with a warning; a loosened folder on write', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    await chmod(configPath(env), 0o644);
    await chmod(configDir(env), 0o755);
    const warnings: string[] = [];
    await loadConfig({ env, warn: (m) => warnings.push(m) });
    expect(await modeOf(configPath(env))).toBe(0o600);
    expect(warnings).toEqual([`${configPath(env)} had mode 644; it may hold tokens, so it is now 600.`]);
    await updateConfig((c) => void (c.profiles.b = profile('https://b')), { env });
    expect(await modeOf(configDir(env))).toBe(0o700);
  });

  it('a config left without profiles or settings is removed, not written empty', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    await updateConfig((c) => void delete c.profiles.a, { env });
    await expect(stat(configPath(env))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('temp files of a killed writer are removed by the next write', async () => {
    const env = await freshEnv();
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    await writeFile(join(configDir(env), 'config.json.999.dead.tmp'), '{"half":');
    await updateConfig((c) => void (c.profiles.b = profile('https://b')), { env });
    expect(await readdir(configDir(env))).toEqual(['config.json']);
  });
});

describe('damaged files: a clear error naming the file, exit 2', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['half-written JSON', '{"version":1,"activeProfile":"a","prof', /is not valid JSON/],
    // V8 quotes the file's text around an unexpected token, here a token's start: the error says none of it.
    [
      'a token not in quotes',
      '{"version":1,"profiles":{"a":{"kind":"static","base":"https://a","token": cli_SECRETsecret0123456789}}}',
      /is not valid JSON \(Unexpected token 'c' at line 1 column 75\)\.$/,
    ],
    ['not an object', '[1,2]', /is not a JSON object/],
    ['no profiles', '{"version":1}', /"profiles" is not an object/],
    [
      'a profile without base',
      '{"version":1,"profiles":{"a":{"kind":"static"}}}',
      /profile "a" has no "base"/,
    ],
    [
      'an active profile that does not exist',
      '{"version":1,"activeProfile":"b","profiles":{}}',
      /"activeProfile" names no profile/,
    ],
    [
      'a bad secret storage',
      '{"version":1,"secretStorage":"cloud","profiles":{}}',
      /"secretStorage" is not one of auto, keychain, file/,
    ],
  ];
  for (const [name, text, reason] of cases) {
    it(name, async () => {
      const env = await freshEnv();
      await mkdir(configDir(env), { recursive: true });
      await writeFile(configPath(env), text, { mode: 0o600 });
      const error = await caught(loadConfig({ env }));
      expect(error).toMatchObject({ exitCode: 2, code: 'config_invalid' });
      expect(error.message).toContain(`The gds config file ${configPath(env)} is damaged:`);
      expect(error.message).toMatch(reason);
      expect(error.suggestion).toContain('gds auth logout');
      // An update refuses too, and leaves the file as it was.
      await caught(updateConfig(() => undefined, { env }));
      expect(await readFile(configPath(env), 'utf8')).toBe(text);
    });
  }

  it('a file from a newer gds asks for an upgrade', async () => {
    const env = await freshEnv();
    await mkdir(configDir(env), { recursive: true });
    await writeFile(configPath(env), '{"version":2,"profiles":{}}');
    const error = await caught(loadConfig({ env }));
    expect(error).toMatchObject({ exitCode: 2, code: 'config_too_new' });
    expect(error.suggestion).toContain('Upgrade gds');
  });
});

describe('locks', () => {
  it('concurrent updates in one process all land (each re-reads under the lock)', async () => {
    const env = await freshEnv();
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        updateConfig((c) => void (c.profiles[`p${i}`] = profile(`https://h${i}`)), { env }),
      ),
    );
    expect(Object.keys((await loadConfig({ env })).profiles).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `p${i}`).sort(),
    );
  });

  it('withProfileLock lets one holder at a time in per profile, and different profiles side by side', async () => {
    const env = await freshEnv();
    const inside = new Map<string, number>();
    const most = new Map<string, number>();
    const hold = (name: string) =>
      withProfileLock(
        name,
        async () => {
          inside.set(name, (inside.get(name) ?? 0) + 1);
          most.set(name, Math.max(most.get(name) ?? 0, inside.get(name) ?? 0));
          await new Promise((r) => setTimeout(r, 20));
          inside.set(name, (inside.get(name) ?? 0) - 1);
        },
        { env },
      );
    await Promise.all([hold('a'), hold('a'), hold('a'), hold('b'), hold('b')]);
    expect(most.get('a')).toBe(1);
    expect(most.get('b')).toBe(1);
    await expect(withProfileLock('../x', async () => 1, { env })).rejects.toMatchObject({
      code: 'invalid_profile_name',
      exitCode: 2,
    });
  });

  it('withProfileLock taken again inside its holder runs at once; a call from outside still waits', async () => {
    const env = await freshEnv();
    const events: string[] = [];
    let entered!: () => void;
    const holderInside = new Promise<void>((resolve) => (entered = resolve));
    const holder = withProfileLock(
      'a',
      async () => {
        events.push('holder');
        entered();
        await new Promise((r) => setTimeout(r, 50));
        await withProfileLock('a', async () => void events.push('nested'), { env });
        events.push('holder done');
      },
      { env },
    );
    await holderInside;
    const outsider = withProfileLock('a', async () => void events.push('outsider'), { env });
    await Promise.all([holder, outsider]);
    expect(events).toEqual(['holder', 'nested', 'holder done', 'outsider']);
  });

  it('work a holder left running takes the lock again once the holder is done', async () => {
    const env = await freshEnv();
    const events: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let detached: Promise<void> | undefined;
    await withProfileLock(
      'a',
      async () => {
        detached = (async () => {
          await gate;
          await withProfileLock('a', async () => void events.push('detached'), { env });
        })();
      },
      { env },
    );
    let entered!: () => void;
    const otherInside = new Promise<void>((resolve) => (entered = resolve));
    const other = withProfileLock(
      'a',
      async () => {
        events.push('other in');
        entered();
        await new Promise((r) => setTimeout(r, 50));
        events.push('other out');
      },
      { env },
    );
    await otherInside;
    open();
    await Promise.all([other, detached]);
    expect(events).toEqual(['other in', 'other out', 'detached']);
  });

  it('a stale lock left by a killed process is taken over', async () => {
    const env = await freshEnv();
    const lockDir = `${configPath(env)}.lock`;
    await mkdir(lockDir, { recursive: true });
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lockDir, longAgo, longAgo);
    await updateConfig((c) => void (c.profiles.a = profile('https://a')), { env });
    expect(Object.keys((await loadConfig({ env })).profiles)).toEqual(['a']);
  });

  it('a profile lock another process took over is no longer held, and letting go leaves it to them', async () => {
    const env = await freshEnv();
    const lockDir = join(configDir(env), 'profile-a.lock');
    let inside: { before: boolean; after: boolean } | undefined;
    await withProfileLock(
      'a',
      async (stillHeld) => {
        const before = await stillHeld();
        // What a process that found this lock stale does: remove it and make its own.
        await rmdir(lockDir);
        await mkdir(lockDir);
        inside = { before, after: await stillHeld() };
      },
      { env },
    );
    expect(inside).toEqual({ before: true, after: false });
    expect((await stat(lockDir)).isDirectory()).toBe(true);
  });
});

describe('a writer killed with SIGKILL', () => {
  beforeAll(ensureBuilt);

  it('never leaves a config that fails to load', async () => {
    // Killed at different moments after its first write: mostly in the middle of the next one. A fresh
    // folder each time, so no writer waits for the lock the previous one left (stale after 5 s).
    for (const delayMs of [0, 7, 19, 33, 50]) {
      const env = await freshEnv();
      const child = spawn(node24, [fixture], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let killed = false;
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          if (!killed && chunk.includes('wrote')) {
            killed = true;
            setTimeout(() => child.kill('SIGKILL'), delayMs);
          }
        });
        child.on('close', (_code, signal) =>
          signal === 'SIGKILL' ? resolve() : reject(new Error(`writer ended without the kill: ${stderr}`)),
        );
      });
      const config: GdsConfig = await loadConfig({ env });
      expect(Object.keys(config.profiles).length).toBe(4000);
    }
  });
});
