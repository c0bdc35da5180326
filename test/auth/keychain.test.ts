// The OS keychain for real. With a Secret Service answering (CI runs this file under dbus-run-session with
// an unlocked gnome-keyring), `gds auth set` puts the token there and not in the file, and logout removes
// it; a Secret Service that stops answering falls back after the timeout. Without one, those tests skip
// and say why. The fallback to the 0600 file runs everywhere: no D-Bus at all.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CliResult, RunOptions } from '../cli/helpers/cli-process.js';
import { collect, ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { resolveCredentials } from '../../src/auth/credentials.js';
import { deleteKeychainEntry, keychainChildEnv } from '../../src/auth/secret-store.js';
import { loadConfig } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import { refreshUnderLock } from '../../src/auth/refresh.js';
import { needs, whyNoSecretService } from '../helpers/skip.js';

const token = 'cli_KeychainTokenNeverPrinted';
const outputs: string[] = [];
let dir: string;
let folders = 0;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-keychain-'));
});

afterAll(() => {
  for (const output of outputs) expect(output).not.toContain(token);
});

function freshConfigDir(): string {
  folders += 1;
  return join(dir, `c${folders}`, 'gds');
}

async function gds(configDir: string, args: string[], options: RunOptions = {}): Promise<CliResult> {
  const result = await runCli(args, {
    ...options,
    // each config folder its own machine: the keychain-fallback warning is said once per state folder
    env: {
      GDS_CONFIG_DIR: configDir,
      GDS_SECRET_STORAGE: undefined,
      XDG_STATE_HOME: join(configDir, 'state'),
      // a keychain that answers may take longer than the default 3 s on a loaded machine; tests of a keychain
      // that does not answer set their own limit
      GDS_KEYCHAIN_TIMEOUT_MS: '60000',
      ...options.env,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

function readConfig(configDir: string): Promise<string> {
  return readFile(join(configDir, 'config.json'), 'utf8');
}

/** The keychain account profile `name` of the config in `configDir` names: each save's entry has its own. */
async function accountOf(configDir: string, name = 'default'): Promise<string> {
  const config = JSON.parse(await readConfig(configDir)) as {
    profiles: Record<string, { secretRef?: { account: string } }>;
  };
  const account = config.profiles[name]?.secretRef?.account;
  if (account === undefined) throw new Error(`profile ${name} names no keychain entry`);
  expect(account).toMatch(new RegExp(`^${name}#[0-9a-f]+@`));
  return account;
}

function secretTool(args: string[], input = ''): Promise<CliResult> {
  const child = spawn('secret-tool', args, { stdio: ['pipe', 'pipe', 'pipe'], timeout: 5_000 });
  // `lookup` reads no input and may have ended before it is written: its exit code says how it went (an
  // EPIPE here, unheard, ended the test process and made CI red).
  child.stdin.on('error', () => undefined);
  child.stdin.end(input);
  return collect(child);
}

/** `secret-tool lookup`: the stored secret, or null when there is no such item (exit 1). */
async function lookup(account: string): Promise<string | null> {
  const r = await secretTool(['lookup', 'service', 'gds-cli', 'username', account]);
  if (r.code === 0) return r.stdout;
  if (r.code === 1 && r.stderr === '') return null;
  throw new Error(`secret-tool lookup failed: ${r.stderr}`);
}

describe('the keychain child', () => {
  it('starts without SERVICE_TOKEN and GDS_REFRESH_TOKEN in its environment; the rest is passed on', () => {
    const env = {
      SERVICE_TOKEN: 'cli_childEnv0123456789',
      GDS_REFRESH_TOKEN: 'rt_childEnv0123456789',
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      HOME: '/home/u',
    };
    expect(keychainChildEnv(env)).toEqual({
      DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/1000/bus',
      HOME: '/home/u',
    });
    expect(env.SERVICE_TOKEN).toBe('cli_childEnv0123456789');
  });
});

describe('with a Secret Service answering', needs(await whyNoSecretService()), () => {
  it('auth set puts the token in the keychain, not in the file; status and commands read it back', async () => {
    const cfg = freshConfigDir();
    const r = await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const account = await accountOf(cfg);
    expect(r.stderr).toContain(
      `The token is stored in the OS keychain (service gds-cli, account ${account}).`,
    );
    expect(JSON.parse((await lookup(account)) ?? 'null')).toEqual({ token });
    const file = await readConfig(cfg);
    expect(file).not.toContain(token);
    expect(JSON.parse(file)).toEqual({
      version: 1,
      activeProfile: 'default',
      profiles: {
        default: {
          kind: 'static',
          base: 'https://k.example',
          secretRef: { store: 'keychain', service: 'gds-cli', account },
          savedId: expect.any(String),
        },
      },
    });
    const status = await gds(cfg, ['auth', 'status', '--offline', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({
      signedIn: true,
      token: 'cli_…****',
      storage: 'keychain',
      storageLocation: `the OS keychain (service gds-cli, account ${account})`,
    });
    const resolved = await resolveCredentials({}, { GDS_CONFIG_DIR: cfg, GDS_KEYCHAIN_TIMEOUT_MS: '60000' });
    expect(resolved).toMatchObject({ token, storage: 'keychain', tokenSource: 'profile:default' });
  });

  it('GDS_SECRET_STORAGE=keychain stores there too; logout removes the entries, one profile or all', async () => {
    const cfg = freshConfigDir();
    const keychainOnly = { env: { GDS_SECRET_STORAGE: 'keychain' } };
    const accounts: Record<string, string> = {};
    for (const profile of ['a', 'b', 'c']) {
      const r = await gds(
        cfg,
        ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example', '--profile', profile],
        keychainOnly,
      );
      expect(r.code).toBe(0);
      accounts[profile] = await accountOf(cfg, profile);
    }
    // Entries no profile names (saves cut short before their config write): a's and b's, and the one entry of
    // before of a profile that is gone. And one of another config folder, which stays.
    const orphans = [`a#0123456789abcdef@${cfg}`, `b#0123456789abcdef@${cfg}`, `gone@${cfg}`];
    const elsewhere = `a#0123456789abcdef@${cfg}-elsewhere`;
    for (const orphan of [...orphans, elsewhere])
      expect(
        (await secretTool(['store', '--label=gds test', 'service', 'gds-cli', 'username', orphan], 'x')).code,
      ).toBe(0);
    const one = await gds(cfg, ['auth', 'logout', '--profile', 'a']);
    expect(one.stderr).toBe('✓ Removed profile a and its keychain entry.\nActive profile: b.\n');
    expect(await lookup(accounts.a!)).toBeNull();
    expect(await lookup(orphans[0]!)).toBeNull();
    expect(await lookup(accounts.b!)).not.toBeNull();
    expect(await lookup(orphans[1]!)).not.toBeNull();
    const all = await gds(cfg, ['auth', 'logout', '--json']);
    expect(JSON.parse(all.stdout)).toMatchObject({
      removed: [
        { name: 'b', keychainEntry: true },
        { name: 'c', keychainEntry: true },
      ],
      configFileRemoved: true,
    });
    for (const account of [accounts.b!, accounts.c!, ...orphans]) expect(await lookup(account)).toBeNull();
    expect(await lookup(elsewhere)).toBe('x');
    await secretTool(['clear', 'service', 'gds-cli', 'username', elsewhere]);
  });

  it('setting the profile again with GDS_SECRET_STORAGE=file removes the older copy from the keychain', async () => {
    const cfg = freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example']);
    const account = await accountOf(cfg);
    expect(await lookup(account)).not.toBeNull();
    const r = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example'],
      {
        env: { GDS_SECRET_STORAGE: 'file' },
      },
    );
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).not.toContain('Warning:');
    expect(await lookup(account)).toBeNull();
    expect(JSON.parse(await readConfig(cfg)).profiles.default).toEqual({
      kind: 'static',
      base: 'https://k.example',
      token,
      savedId: expect.any(String),
    });
  });

  it('a Secret Service that stops answering: after the timeout, the file (auto) or a clear error (keychain)', async () => {
    const proxy = await freezingBusProxy('CreateItem');
    try {
      const env = { DBUS_SESSION_BUS_ADDRESS: proxy.address, GDS_KEYCHAIN_TIMEOUT_MS: '300' };
      const cfg = freshConfigDir();
      const refused = await gds(
        cfg,
        ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example', '--json'],
        {
          env: { ...env, GDS_SECRET_STORAGE: 'keychain' },
        },
      );
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr)).toMatchObject({
        error: {
          code: 'keychain_unavailable',
          message:
            'The secret storage is set to keychain, but the OS keychain did not answer: no answer to a write within 300 ms (is it locked?).',
        },
      });
      await expect(stat(join(cfg, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
      const fallback = await gds(
        cfg,
        ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example'],
        {
          env,
        },
      );
      expect(fallback.code).toBe(0);
      expect(fallback.stderr).toMatch(/^Warning: No OS keychain answered, so the token is stored in /);
      expect(JSON.parse(await readConfig(cfg)).profiles.default.token).toBe(token);
    } finally {
      await proxy.close();
    }
  });

  it('a process that finds the session refreshed by another reads the keychain after letting the profile lock go', async () => {
    const configDir = freshConfigDir();
    const env = { GDS_CONFIG_DIR: configDir, GDS_KEYCHAIN_TIMEOUT_MS: '60000' };
    const fresh = { accessToken: 'gdsa_RefreshedByAnother', refreshToken: 'gdsr_RefreshedByAnother' };
    const expiresAt = new Date(Date.now() + 30 * 60_000).toISOString();
    const saved = await saveProfile(
      'work',
      { kind: 'session', base: 'http://127.0.0.1:9', expiresAt },
      fresh,
      {
        env,
      },
    );
    expect(saved.storage).toBe('keychain');
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
    const debug = process.env.GDS_DEBUG;
    process.env.GDS_DEBUG = '1';
    try {
      // This process read the old token before another one refreshed it: it waits for the lock, then adopts.
      const state = await refreshUnderLock('work', 'gdsa_TheOldOne', false, { env });
      expect(state).toEqual({ accessToken: fresh.accessToken, expiresAt });
    } finally {
      write.mockRestore();
      if (debug === undefined) delete process.env.GDS_DEBUG;
      else process.env.GDS_DEBUG = debug;
    }
    const letGo = lines.findIndex((line) => /lock .*profile-work\.lock: let go/.test(line));
    const read = lines.findIndex((line) => /keychain read: asked/.test(line));
    expect(letGo, lines.join('\n')).toBeGreaterThanOrEqual(0);
    expect(read, lines.join('\n')).toBeGreaterThan(letGo);
    await deleteKeychainEntry((await loadConfig({ env })).profiles.work!, { env });
  });

  it('a read that gets no answer is asked once more of a fresh keychain process, and succeeds', async () => {
    const cfg = freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://k.example']);
    const proxy = await freezingBusProxy('GetSecret', 1);
    try {
      // a limit a loaded machine's second keychain process meets, not one this test waits out for speed
      const env = {
        DBUS_SESSION_BUS_ADDRESS: proxy.address,
        GDS_KEYCHAIN_TIMEOUT_MS: '15000',
        GDS_DEBUG: '1',
      };
      const status = await gds(cfg, ['auth', 'status', '--offline', '--json'], { env });
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ signedIn: true, storage: 'keychain' });
      expect(status.stderr).toContain('gds: keychain read: asking a fresh process once more');
    } finally {
      await proxy.close();
    }
  });
});

describe('no keychain answering (no D-Bus session bus)', () => {
  const noBus = () => ({ DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus-here')}` });

  it('auto: the token goes to the 0600 file and stderr says so exactly once', async () => {
    const cfg = freshConfigDir();
    const r = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'],
      {
        env: noBus(),
      },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`The token is stored in the config file ${join(cfg, 'config.json')}.`);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('Warning:'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      new RegExp(
        `^Warning: No OS keychain answered, so the token is stored in ${join(cfg, 'config.json')} \\(mode 600\\); GDS_SECRET_STORAGE=keychain refuses instead, =file silences this\\.$`,
      ),
    );
    expect((await stat(join(cfg, 'config.json'))).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readConfig(cfg)).profiles.default).toEqual({
      kind: 'static',
      base: 'https://f.example',
      token,
      savedId: expect.any(String),
    });
    // Once per profile: the same profile saved again (its secrets already in the file) says nothing.
    const again = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'],
      { env: noBus() },
    );
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('Warning:');
    // Once per machine: another profile falling back to the file on this machine says nothing either.
    const other = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--profile', 'second', '--token', token, '--base', 'https://f.example'],
      { env: noBus() },
    );
    expect(other.code).toBe(0);
    expect(other.stderr).not.toContain('Warning:');
    expect(JSON.parse(await readConfig(cfg)).profiles.second.token).toBe(token);
    // Under --json the warning (on a machine that has not seen it) is one JSON line: stderr stays machine-readable.
    const json = await gds(
      cfg,
      [
        'auth',
        'set',
        '--no-verify',
        '--profile',
        'other',
        '--token',
        token,
        '--base',
        'https://f.example',
        '--json',
      ],
      { env: { ...noBus(), XDG_STATE_HOME: join(cfg, 'another-machine') } },
    );
    expect(json.code).toBe(0);
    const lines = json.stderr.split('\n').filter((l) => l !== '');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { warning: { message: expect.stringMatching(/^No OS keychain answered, so the token is stored in /) } },
    ]);
  });

  it('a relative XDG_STATE_HOME is ignored, as everywhere: the marker goes to ~/.local/state/gds', async () => {
    const cfg = freshConfigDir();
    const home = join(cfg, 'home');
    const cwd = join(cfg, 'cwd');
    await mkdir(cwd, { recursive: true });
    const r = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'],
      { cwd, env: { ...noBus(), HOME: home, XDG_STATE_HOME: 'relative-state' } },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^Warning: No OS keychain answered/);
    expect(existsSync(join(home, '.local/state/gds/keychain-fallback-said'))).toBe(true);
    expect(existsSync(join(cwd, 'relative-state'))).toBe(false);
  });

  it('keychain: refuses with a clear error and writes nothing; file: no warning', async () => {
    const cfg = freshConfigDir();
    const refused = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'],
      {
        env: { ...noBus(), GDS_SECRET_STORAGE: 'keychain' },
      },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^Error: The secret storage is set to keychain, but the OS keychain did not answer: /,
    );
    expect(refused.stderr).toContain('GDS_SECRET_STORAGE=auto (or file)');
    await expect(stat(join(cfg, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    const file = await gds(
      cfg,
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'],
      {
        env: { ...noBus(), GDS_SECRET_STORAGE: 'file' },
      },
    );
    expect(file).toMatchObject({ code: 0, stdout: '' });
    expect(file.stderr).not.toContain('Warning:');
    const bad = await gds(cfg, ['auth', 'status', '--offline'], { env: { GDS_SECRET_STORAGE: 'cloud' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('GDS_SECRET_STORAGE=cloud is not a secret storage.');
  });

  it('a profile kept in an unreachable keychain: status explains, logout still forgets it and says how to clean up', async () => {
    const cfg = freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://f.example'], {
      env: noBus(),
    });
    const config = JSON.parse(await readConfig(cfg)) as { profiles: { default: Record<string, unknown> } };
    config.profiles.default = {
      kind: 'static',
      base: 'https://f.example',
      secretRef: { store: 'keychain', service: 'gds-cli', account: 'default@elsewhere' },
    };
    await writeFile(join(cfg, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const status = await gds(cfg, ['auth', 'status', '--offline', '--json'], { env: noBus() });
    expect(status.code).toBe(0);
    const body = JSON.parse(status.stdout) as { signedIn: boolean; problems: string[] };
    expect(body.signedIn).toBe(false);
    expect(body.problems[0]).toMatch(
      /^Unauthorized: no API token: .* profile default: its token is in the OS keychain, and the OS keychain did not answer: /,
    );
    const logout = await gds(cfg, ['auth', 'logout'], { env: noBus() });
    expect(logout.code).toBe(0);
    expect(logout.stderr).toContain('✓ Removed profile default; its keychain entry could not be removed.');
    expect(logout.stderr).toContain('secret-tool clear service gds-cli username default@elsewhere');
  });
});

/** A D-Bus session socket that forwards to the real bus until the client sends `trigger`, then goes silent. */
/**
 * A proxy of the session bus whose connections go silent from the first message naming `trigger` on (only
 * the first `connections` connections that name it, when given; the others pass through).
 */
async function freezingBusProxy(
  trigger: string,
  connections = Infinity,
): Promise<{ address: string; close(): Promise<void> }> {
  let frozenConnections = 0;
  const real = /unix:(path|abstract)=([^,]+)/.exec(process.env.DBUS_SESSION_BUS_ADDRESS ?? '');
  if (real === null)
    throw new Error(`cannot proxy DBUS_SESSION_BUS_ADDRESS=${process.env.DBUS_SESSION_BUS_ADDRESS}`);
  const target = real[1] === 'abstract' ? `\0${real[2]}` : (real[2] ?? '');
  const path = join(dir, `bus-${folders}.sock`);
  const sockets = new Set<{ destroy(): void }>();
  const server: Server = createServer((client) => {
    const upstream = connect(target);
    sockets.add(client).add(upstream);
    let frozen = false;
    client.on('data', (data) => {
      if (!frozen && data.includes(trigger) && frozenConnections < connections) {
        frozenConnections += 1;
        frozen = true;
      }
      if (!frozen) upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (!frozen) client.write(data);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    address: `unix:path=${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
