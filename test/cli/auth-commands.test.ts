// gds auth set / status / logout run in the test process (real processes, node bin/run.js over dist/, where
// the modules start-up loads are checked), each with its own GDS_CONFIG_DIR and the file storage (the keychain
// has its own test file). Every output of every run is
// collected, and no run may print a token whole.
import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult, RunOptions } from './helpers/cli-process.js';
import { ensureBuilt, repoRoot, runCli } from './helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

const token = 'cli_S3cretValueNeverPrinted';
const otherToken = 'cli_AnotherSecretValue42';
const envToken = 'svc_FromTheEnvironment77';
const outputs: string[] = [];

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-auth-cli-'));
});

afterAll(() => {
  for (const output of outputs) {
    for (const secret of [token, otherToken, envToken]) expect(output).not.toContain(secret);
  }
});

let folders = 0;
async function freshConfigDir(): Promise<string> {
  folders += 1;
  return join(dir, `c${folders}`, 'gds');
}

/** gds in the test process; a process of its own with node options, or `spawned` (several writers at once). */
async function gds(
  configDir: string,
  args: string[],
  { spawned = false, ...options }: RunOptions & { spawned?: boolean } = {},
): Promise<CliResult> {
  const result = await (spawned || options.nodeArgs !== undefined ? runCli : runInProcess)(args, {
    ...options,
    env: {
      GDS_CONFIG_DIR: configDir,
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: undefined,
      ...options.env,
    },
  });
  outputs.push(result.stdout, result.stderr);
  return result;
}

function jsonLine(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as Record<string, unknown>;
}

function config(
  configDir: string,
): Promise<{ activeProfile: string | null; profiles: Record<string, unknown> }> {
  return readFile(join(configDir, 'config.json'), 'utf8').then((t) => JSON.parse(t) as never);
}

describe('gds auth set', () => {
  it('stores the token in the 0600 file of a 0700 folder, says where, and never prints the token', async () => {
    const cfg = await freshConfigDir();
    const r = await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      token,
      '--base',
      'https://gds.example.com/',
    ]);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe(
      '✓ Saved profile default: https://gds.example.com with token cli_…****.\n' +
        `The token is stored in the config file ${join(cfg, 'config.json')}.\n` +
        'default is the active profile.\n',
    );
    expect((await stat(cfg)).mode & 0o777).toBe(0o700);
    expect((await stat(join(cfg, 'config.json'))).mode & 0o777).toBe(0o600);
    expect(await config(cfg)).toEqual({
      version: 1,
      activeProfile: 'default',
      profiles: {
        default: { kind: 'static', base: 'https://gds.example.com', token, savedId: expect.any(String) },
      },
    });
  });

  it('--json: one line; a second profile does not take over the active one', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    const r = await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      otherToken,
      '--base',
      'http://127.0.0.1:8080',
      '--profile',
      'local',
      '--json',
    ]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(jsonLine(r.stdout)).toEqual({
      profile: 'local',
      base: 'http://127.0.0.1:8080',
      token: 'cli_…****',
      storage: 'file',
      storageLocation: `the config file ${join(cfg, 'config.json')}`,
      active: false,
      verified: false,
    });
    expect((await config(cfg)).activeProfile).toBe('default');
  });

  it('--token - reads the token from stdin', async () => {
    const cfg = await freshConfigDir();
    const r = await gds(cfg, ['auth', 'set', '--no-verify', '--token', '-', '--base', 'https://a.example'], {
      input: `${token}\n`,
    });
    expect(r.code).toBe(0);
    expect((await config(cfg)).profiles.default).toEqual({
      kind: 'static',
      base: 'https://a.example',
      token,
      savedId: expect.any(String),
    });
  });

  it('bad input is exit 2 with a clear message, the token masked, and nothing written', async () => {
    const cfg = await freshConfigDir();
    const cases: Array<[string[], RegExp]> = [
      [
        ['--token', token, '--base', 'ftp://x.example'],
        /^Error: The API base URL from --base is not an http\(s\) URL: ftp:\/\/x\.example\n/,
      ],
      [['--token', token], /^Error: gds auth set needs both --token and --base\.\n/],
      [
        ['--token', token, '--base', 'https://a', '--profile', 'a b'],
        /^Error: Invalid profile name: "a b"\.\n/,
      ],
    ];
    for (const [args, message] of cases) {
      const r = await gds(cfg, ['auth', 'set', '--no-verify', ...args]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const json = await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'nope', '--json']);
    expect(json.code).toBe(2);
    expect(jsonLine(json.stderr)).toMatchObject({ error: { code: 'invalid_base_url' } });
    await expect(stat(cfg)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses plain http to a host that is not loopback (exit 2, insecure_url, nothing written)', async () => {
    const cfg = await freshConfigDir();
    const human = await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      token,
      '--base',
      'http://gds.example.com',
    ]);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    expect(human.stderr).toMatch(/^Error: Refusing plain http to gds\.example\.com: .* must use https\.\n/);
    const json = await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      token,
      '--base',
      'http://10.0.0.1:8787',
      '--json',
    ]);
    expect(json.code).toBe(2);
    expect(jsonLine(json.stderr)).toMatchObject({ error: { code: 'insecure_url' } });
    await expect(stat(cfg)).rejects.toMatchObject({ code: 'ENOENT' });

    const loopback = await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      token,
      '--base',
      'http://127.0.0.1:8787/',
    ]);
    expect(loopback.code).toBe(0);
    expect((await config(cfg)).profiles).toMatchObject({ default: { base: 'http://127.0.0.1:8787' } });
  });

  it('a base URL with a query or a fragment is exit 2 up front, shown without them, and never saved', async () => {
    const cfg = await freshConfigDir();
    const secret = 's3cr3tQueryValue';
    const refused = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
      const r = await gds(cfg, [...args, '--json'], { env });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(jsonLine(r.stderr)).toMatchObject({ error: { code: 'invalid_base_url' } });
      expect(r.stderr).not.toContain(secret);
      return r;
    };
    const authSet = ['auth', 'set', '--no-verify', '--token', token, '--profile', 'q', '--base'];
    const set = await refused([...authSet, `https://gds.example/v1?stage=${secret}`]);
    expect(set.stderr).toContain('https://gds.example/v1');
    await refused(['whoami', '--token', token, '--base', `https://gds.example/v1?access_token=${secret}`]);
    await refused(['whoami', '--token', token], { SERVICE_API_URL: `https://gds.example/v1#${secret}` });
    await refused(['whoami', '--token', token, '--base', 'https://gds.example/v1?']);
    await refused(['auth', 'login', '--base', `https://gds.example/v1?x=${secret}`, '--no-browser']);
    await expect(stat(cfg)).rejects.toMatchObject({ code: 'ENOENT' });

    // One saved before gds refused them: each use of the profile says which it is, and how to mend it.
    expect((await gds(cfg, [...authSet, 'https://gds.example/v1'])).code).toBe(0);
    const file = join(cfg, 'config.json');
    await writeFile(file, (await readFile(file, 'utf8')).replace('/v1"', `/v1?stage=${secret}"`));
    const saved = await refused(['whoami', '--profile', 'q']);
    expect(jsonLine(saved.stderr)).toMatchObject({
      error: { message: expect.stringContaining('profile q') as unknown },
    });
  });

  it('16 processes setting 16 profiles at once leave one valid config holding all 16', async () => {
    const cfg = await freshConfigDir();
    const names = Array.from({ length: 16 }, (_, i) => `ci-${i}`);
    const results = await Promise.all(
      names.map((name, i) =>
        gds(
          cfg,
          [
            'auth',
            'set',
            '--no-verify',
            '--token',
            `${token}${i}`,
            '--base',
            `https://h${i}.example`,
            '--profile',
            name,
            '--json',
          ],
          { spawned: true },
        ),
      ),
    );
    for (const r of results) expect(r).toMatchObject({ code: 0, stderr: '' });
    const written = await config(cfg);
    expect(Object.keys(written.profiles).sort()).toEqual([...names].sort());
    names.forEach((name, i) =>
      expect(written.profiles[name]).toEqual({
        kind: 'static',
        base: `https://h${i}.example`,
        token: `${token}${i}`,
        savedId: expect.any(String),
      }),
    );
    expect(names).toContain(written.activeProfile);
    expect(results.filter((r) => jsonLine(r.stdout).active === true)).toHaveLength(1);
  });
});

describe('gds auth status', () => {
  it('nothing configured: exit 0, not signed in, says how to sign in; --json one line', async () => {
    const cfg = await freshConfigDir();
    const human = await gds(cfg, ['auth', 'status', '--offline']);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toContain('Not signed in:');
    expect(human.stdout).toContain('gds auth set --token <t> --base <url>');
    const json = await gds(cfg, ['auth', 'status', '--offline', '--json']);
    expect(json.code).toBe(0);
    expect(jsonLine(json.stdout)).toMatchObject({
      signedIn: false,
      token: null,
      baseUrl: null,
      profiles: [],
    });
    await expect(stat(cfg)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('nothing configured, asked for real: exit 1 as gh auth status, and still says how to sign in', async () => {
    const cfg = await freshConfigDir();
    const human = await gds(cfg, ['auth', 'status']);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('Not signed in:');
    expect(human.stdout).toContain('gds auth set --token <t> --base <url>');
    const json = await gds(cfg, ['auth', 'status', '--json']);
    expect(json.code).toBe(1);
    expect(jsonLine(json.stdout)).toMatchObject({ signedIn: false, token: null });
  });

  it('shows the masked token, the source of each value, the storage, and every profile', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      otherToken,
      '--base',
      'https://b.example',
      '--profile',
      'b',
    ]);
    const human = await gds(cfg, ['auth', 'status', '--offline']);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toBe(
      'API base:  https://a.example (from profile default)\n' +
        'Token:     cli_…**** (from profile default)\n' +
        `Stored in: the config file ${join(cfg, 'config.json')}\n` +
        'Profiles:\n' +
        '    b        https://b.example  -  static  token in file\n' +
        '  * default  https://a.example  -  static  token in file\n',
    );
    const fromEnv = await gds(cfg, ['auth', 'status', '--offline', '--profile', 'b'], {
      env: { SERVICE_TOKEN: envToken },
    });
    expect(fromEnv.stdout).toContain('API base:  https://b.example (from profile b)\n');
    expect(fromEnv.stdout).toContain('Token:     **** (from SERVICE_TOKEN)\n');
    const fromFlags = await gds(
      cfg,
      ['auth', 'status', '--offline', '--json', '--token', envToken, '--base', 'https://f.example'],
      {
        env: { SERVICE_TOKEN: token },
      },
    );
    expect(jsonLine(fromFlags.stdout)).toMatchObject({
      signedIn: true,
      token: '****',
      tokenSource: 'flag',
      baseUrl: 'https://f.example',
      baseSource: 'flag',
      storage: 'none',
      activeProfile: 'default',
      profiles: [{ name: 'b' }, { name: 'default' }],
    });
  });

  it('an unknown --profile is exit 2 naming the known ones; under --json one error line', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    const r = await gds(cfg, [
      'auth',
      'status',
      '--offline',
      '--profile',
      'prod',
      '--token',
      otherToken,
      '--json',
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(jsonLine(r.stderr)).toEqual({
      error: {
        code: 'unknown_profile',
        message: 'No profile named prod. Known profiles: default.',
        suggestion: 'Create it with: gds auth set --profile prod --token <t> --base <url>',
        details: { profile: 'prod', known: ['default'] },
      },
    });
  });

  it('a config file readable by others is set back to 0600, with a warning on stderr', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    await chmod(join(cfg, 'config.json'), 0o644);
    const r = await gds(cfg, ['auth', 'status', '--offline', '--json']);
    expect(r.code).toBe(0);
    // Under --json the warning is a JSON line too, so every line of stderr parses.
    expect(jsonLine(r.stderr)).toEqual({
      warning: { message: `${join(cfg, 'config.json')} had mode 644; it may hold tokens, so it is now 600.` },
    });
    expect(jsonLine(r.stdout)).toMatchObject({ signedIn: true });
    expect((await stat(join(cfg, 'config.json'))).mode & 0o777).toBe(0o600);
  });

  it('a damaged config: exit 2 naming the file and what to do, no stack trace', async () => {
    const cfg = await freshConfigDir();
    await mkdir(cfg, { recursive: true });
    await writeFile(join(cfg, 'config.json'), '{"version":1,"profiles":{"a":', { mode: 0o600 });
    const r = await gds(cfg, ['auth', 'status', '--offline']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(`^Error: The gds config file ${join(cfg, 'config.json')} is damaged: it is not valid JSON`),
    );
    expect(r.stderr).toContain('`gds auth logout` removes it');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('gds auth logout', () => {
  it('--profile removes one profile; the active one passes to a remaining profile; again is a no-op', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      otherToken,
      '--base',
      'https://b.example',
      '--profile',
      'b',
    ]);
    const r = await gds(cfg, ['auth', 'logout', '--profile', 'default']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe('✓ Removed profile default.\nActive profile: b.\n');
    expect(await config(cfg)).toMatchObject({ activeProfile: 'b', profiles: { b: { token: otherToken } } });
    expect(Object.keys((await config(cfg)).profiles)).toEqual(['b']);
    const again = await gds(cfg, ['auth', 'logout', '--profile', 'default', '--json']);
    expect(again.code).toBe(0);
    expect(jsonLine(again.stdout)).toEqual({
      removed: [],
      activeProfile: 'b',
      configFileRemoved: false,
      configPath: join(cfg, 'config.json'),
    });
  });

  it('without --profile removes the whole file; again is a no-op', async () => {
    const cfg = await freshConfigDir();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']);
    await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      otherToken,
      '--base',
      'https://b.example',
      '--profile',
      'b',
    ]);
    const r = await gds(cfg, ['auth', 'logout', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(jsonLine(r.stdout)).toMatchObject({
      removed: [
        { name: 'default', keychainEntry: false },
        { name: 'b', keychainEntry: false },
      ],
      configFileRemoved: true,
    });
    await expect(stat(join(cfg, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    const again = await gds(cfg, ['auth', 'logout']);
    expect(again).toMatchObject({ code: 0, stdout: '', stderr: 'Nothing to remove: no config file.\n' });
    const status = await gds(cfg, ['auth', 'status', '--offline', '--json']);
    expect(jsonLine(status.stdout)).toMatchObject({ signedIn: false });
  });

  it('removes a damaged config file too: the way out of it', async () => {
    const cfg = await freshConfigDir();
    await mkdir(cfg, { recursive: true });
    await writeFile(join(cfg, 'config.json'), '{"half');
    const r = await gds(cfg, ['auth', 'logout']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toContain(`✓ Removed ${join(cfg, 'config.json')}.\n`);
    await expect(stat(join(cfg, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('what loads when', () => {
  const preload = join(repoRoot, 'test/cli/fixtures/record-loaded-modules.mjs');
  const watched = /\/(node_modules\/(proper-lockfile|@napi-rs\/keyring|openid-client))\//;

  async function loaded(cfg: string, args: string[], env: Record<string, string> = {}): Promise<string[]> {
    folders += 1;
    const record = join(dir, `modules-${folders}.json`);
    const r = await gds(cfg, args, {
      nodeArgs: ['--import', preload],
      env: { GDS_TEST_LOADED_MODULES: record, ...env },
    });
    expect(r.code).toBe(0);
    const modules = JSON.parse(await readFile(record, 'utf8')) as string[];
    return [...new Set(modules.map((m) => watched.exec(m)?.[1]).filter((m) => m !== undefined))].sort();
  }

  it('start-up loads no lock library, keychain or OpenID client; reading credentials takes no lock; only a write locks', async () => {
    const cfg = await freshConfigDir();
    expect(await loaded(cfg, ['auth', '--help'])).toEqual([]);
    const ci = { SERVICE_TOKEN: envToken, SERVICE_API_URL: 'https://ci.example' };
    expect(await loaded(cfg, ['auth', 'status', '--offline'], ci)).toEqual([]);
    expect(
      await loaded(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example']),
    ).toEqual(['node_modules/proper-lockfile']);
    // The addon never loads in gds itself: a keychain call runs in a child process it can kill
    // (src/auth/keychain-child.ts), started only when the storage setting lets a secret go to the keychain.
    expect(
      await loaded(cfg, ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://a.example'], {
        GDS_SECRET_STORAGE: 'auto',
        DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(dir, 'no-bus')}`,
      }),
    ).toEqual(['node_modules/proper-lockfile']);
  });
});

describe('help', () => {
  it('the auth topic lists its commands, and each has examples', async () => {
    const topic = await runInProcess(['auth', '--help']);
    expect(topic.code).toBe(0);
    expect(topic.stdout).toMatch(/auth logout\s+Forget one profile/);
    expect(topic.stdout).toMatch(/auth set\s+Store a CLI token/);
    expect(topic.stdout).toMatch(/auth status\s+Show which API base and token/);
    for (const command of ['set', 'status', 'logout']) {
      const help = await runInProcess(['auth', command, '--help']);
      expect(help.stdout).toContain(`$ gds auth ${command}`);
      expect(help.stdout).toContain('EXAMPLES');
    }
  });
});
