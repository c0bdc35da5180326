// Which token and base a command uses: flags, then SERVICE_TOKEN/SERVICE_API_URL, then --profile or the
// active profile, each value on its own; and the errors when something is missing, unknown or malformed.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { configDir, configPath, loadConfig } from '../../src/auth/config.js';
import type { CredentialFlags } from '../../src/auth/credentials.js';
import { checkBaseUrl, credentialStatus, resolveCredentials } from '../../src/auth/credentials.js';
import { saveProfile, setStaticProfile } from '../../src/auth/profiles.js';

let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  env = {
    GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-cred-')), 'gds'),
    GDS_SECRET_STORAGE: 'file',
  };
});

async function twoProfiles(): Promise<void> {
  await setStaticProfile({ name: 'default', token: 'cli_default', base: 'https://default.example' }, { env });
  await setStaticProfile({ name: 'other', token: 'cli_other', base: 'https://other.example/api/' }, { env });
}

async function failure(flags: CredentialFlags, extraEnv: NodeJS.ProcessEnv = {}): Promise<CliError> {
  const error = await resolveCredentials(flags, { ...env, ...extraEnv }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('precedence, first match wins, token and base each on their own', () => {
  beforeEach(twoProfiles);

  it('the active profile when nothing else is given', async () => {
    expect(await resolveCredentials({}, env)).toEqual({
      token: 'cli_default',
      baseUrl: 'https://default.example',
      tokenSource: 'profile:default',
      baseSource: 'profile:default',
      profileName: 'default',
      profile: {
        kind: 'static',
        base: 'https://default.example',
        token: 'cli_default',
        savedId: expect.any(String),
      },
      tokenKind: 'static',
      storage: 'file',
    });
  });

  it('--profile selects another profile', async () => {
    const r = await resolveCredentials({ profile: 'other' }, env);
    expect(r).toMatchObject({
      token: 'cli_other',
      baseUrl: 'https://other.example/api',
      tokenSource: 'profile:other',
      baseSource: 'profile:other',
      profileName: 'other',
    });
  });

  it('SERVICE_TOKEN beats the profile for the token; the base still comes from the profile', async () => {
    const r = await resolveCredentials({ profile: 'other' }, { ...env, SERVICE_TOKEN: 'svc_env' });
    expect(r).toMatchObject({ token: 'svc_env', tokenSource: 'env', storage: 'none' });
    expect(r).toMatchObject({ baseUrl: 'https://other.example/api', baseSource: 'profile:other' });
  });

  it("SERVICE_API_URL naming another service: the profile's token is not sent there (exit 2, why)", async () => {
    await expect(
      resolveCredentials({}, { ...env, SERVICE_API_URL: 'http://127.0.0.1:9/' }),
    ).rejects.toMatchObject({ exitCode: 2, code: 'token_not_for_base' });
    await expect(resolveCredentials({ base: 'https://elsewhere.example' }, env)).rejects.toMatchObject({
      code: 'token_not_for_base',
      message: expect.stringContaining('https://default.example'),
    });
  });

  it('a profile whose own base gds cannot read: its token goes to no --base or SERVICE_API_URL (exit 2)', async () => {
    // As a hand edit, another tool or an older gds may leave it: http to a remote host, no scheme, a query,
    // a password in it.
    for (const bad of [
      'http://gds.corp.example:8080',
      'gds.corp.example',
      'https://gds.corp.example/?x=1',
      'https://ann:s3cret@gds.corp.example',
    ]) {
      await saveProfile('broken', { kind: 'static', base: bad }, { token: 'cli_brokenprofile' }, { env });
      for (const [flags, extra] of [
        [{ profile: 'broken', base: 'http://127.0.0.1:9' }, {}],
        [{ profile: 'broken' }, { SERVICE_API_URL: 'https://elsewhere.example' }],
      ] as const) {
        const error = await failure(flags, extra);
        expect(error, bad).toMatchObject({ exitCode: 2, code: 'token_not_for_base' });
        expect(error.message).toMatch(/the profile's own base URL \(.*\) is not one gds calls/);
        expect(JSON.stringify([error.message, error.suggestion, error.details])).not.toContain('s3cret');
        expect(JSON.stringify([error.message, error.details])).not.toContain('cli_brokenprofile');
      }
    }
  });

  it("SERVICE_API_URL naming the profile's own service: the token comes from the profile", async () => {
    const r = await resolveCredentials({}, { ...env, SERVICE_API_URL: 'https://default.example/' });
    expect(r).toMatchObject({ baseUrl: 'https://default.example', baseSource: 'env' });
    expect(r).toMatchObject({ token: 'cli_default', tokenSource: 'profile:default', storage: 'file' });
  });

  it('flags beat the environment, each one alone', async () => {
    const both = { ...env, SERVICE_TOKEN: 'svc_env', SERVICE_API_URL: 'https://env.example' };
    expect(await resolveCredentials({ token: 'cli_flag' }, both)).toMatchObject({
      token: 'cli_flag',
      tokenSource: 'flag',
      baseUrl: 'https://env.example',
      baseSource: 'env',
    });
    expect(await resolveCredentials({ base: 'https://flag.example' }, both)).toMatchObject({
      token: 'svc_env',
      tokenSource: 'env',
      baseUrl: 'https://flag.example',
      baseSource: 'flag',
    });
  });

  it('--token with the base of the profile', async () => {
    const r = await resolveCredentials({ token: 'cli_flag', profile: 'other' }, env);
    expect(r).toMatchObject({
      token: 'cli_flag',
      tokenSource: 'flag',
      baseSource: 'profile:other',
      profileName: 'other',
    });
  });

  it('an empty variable counts as unset', async () => {
    const r = await resolveCredentials({}, { ...env, SERVICE_TOKEN: '', SERVICE_API_URL: '' });
    expect(r).toMatchObject({ tokenSource: 'profile:default', baseSource: 'profile:default' });
  });

  it('a token with white space around it (a CI secret ending with a newline) is sent without it', async () => {
    for (const [flags, extraEnv] of [
      [{}, { SERVICE_TOKEN: 'cli_from_ci\n' }],
      [{ token: ' cli_from_ci\r\n' }, {}],
    ] as const) {
      const r = await resolveCredentials(flags, { ...env, ...extraEnv });
      expect(r).toMatchObject({ token: 'cli_from_ci', baseSource: 'profile:default' });
    }
    // Only white space: unset, as an empty variable is.
    const blank = await resolveCredentials({}, { ...env, SERVICE_TOKEN: ' \n' });
    expect(blank.tokenSource).toBe('profile:default');
  });

  it('a token with white space or a control character inside is exit 2 naming where it came from', async () => {
    for (const [flags, extraEnv, from] of [
      [{}, { SERVICE_TOKEN: 'cli_two words' }, 'SERVICE_TOKEN'],
      [{ token: 'cli_a\u0007b' }, {}, '--token'],
    ] as const) {
      const error = await failure(flags, extraEnv);
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_token' });
      expect(error.message).toBe(`The API token from ${from} contains spaces or control characters.`);
      expect(`${error.message} ${error.suggestion ?? ''}`).not.toContain('cli_');
    }
  });

  it('an unknown --profile is exit 2 naming the known profiles, even when flags give everything', async () => {
    for (const flags of [
      { profile: 'prod' },
      { profile: 'prod', token: 'cli_f', base: 'https://f.example' },
    ]) {
      const error = await failure(flags);
      expect(error).toMatchObject({ exitCode: 2, code: 'unknown_profile' });
      expect(error.message).toBe('No profile named prod. Known profiles: default, other.');
      expect(error.suggestion).toContain('gds auth set --profile prod');
    }
  });

  it('a session profile gives its access token, marked as a session', async () => {
    await saveProfile(
      'web',
      {
        kind: 'session',
        base: 'https://s.example',
        issuer: 'https://s.example',
        expiresAt: '2030-01-01T00:00:00Z',
      },
      { accessToken: 'at_1', refreshToken: 'rt_1' },
      { env },
    );
    const r = await resolveCredentials({ profile: 'web' }, env);
    expect(r).toMatchObject({ token: 'at_1', tokenKind: 'session', storage: 'file' });
    expect(r.profile).toMatchObject({ kind: 'session', issuer: 'https://s.example', refreshToken: 'rt_1' });
  });
});

describe('a CI job with SERVICE_TOKEN and SERVICE_API_URL', () => {
  it('reads no config at all: even a damaged one does not matter', async () => {
    await mkdir(configDir(env), { recursive: true });
    await writeFile(configPath(env), '{oops');
    const r = await resolveCredentials(
      {},
      { ...env, SERVICE_TOKEN: 'svc_ci', SERVICE_API_URL: 'https://ci.example' },
    );
    expect(r).toEqual({
      token: 'svc_ci',
      baseUrl: 'https://ci.example',
      tokenSource: 'env',
      baseSource: 'env',
      tokenKind: 'static',
      storage: 'none',
    });
  });
});

describe('--token - outside gds auth set', () => {
  it('is a usage error (exit 2) saying where a token from stdin goes, never "-" sent as the token', async () => {
    for (const extraEnv of [{}, { SERVICE_TOKEN: 'svc_ci', SERVICE_API_URL: 'https://ci.example' }]) {
      const error = await failure({ token: '-', base: 'https://ci.example' }, extraEnv);
      expect(error.exitCode).toBe(2);
      expect(error.code).toBe('token_from_stdin');
      expect(error.suggestion).toContain('gds auth set --token -');
    }
    const status = await credentialStatus({ token: '-' }, env).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(status).toMatchObject({ exitCode: 2, code: 'token_from_stdin' });
  });
});

describe('missing credentials: exit 3, saying exactly how to get them', () => {
  it('no token anywhere', async () => {
    const error = await failure({ base: 'https://b.example' });
    expect(error).toMatchObject({ exitCode: 3, code: 'no_token' });
    expect(error.message).toBe(
      `Unauthorized: no API token: no --token flag, no SERVICE_TOKEN, and no profile is configured in ${configPath(env)}.`,
    );
    expect(error.suggestion).toContain('gds auth set --token <t> --base <url>');
    expect(error.suggestion).toContain('gds auth login');
    expect(error.suggestion).toContain('SERVICE_TOKEN=<t> SERVICE_API_URL=<url>');
  });

  it('no base anywhere', async () => {
    const error = await failure({}, { SERVICE_TOKEN: 'svc_x' });
    expect(error).toMatchObject({ exitCode: 3, code: 'no_base_url' });
    expect(error.message).toContain('No API base URL: no --base flag, no SERVICE_API_URL');
    expect(error.suggestion).toContain('gds auth set --token <t> --base <url>');
  });

  it('a profile whose keychain token cannot be read (entry gone, or no keychain answering)', async () => {
    await mkdir(configDir(env), { recursive: true });
    const ref = { store: 'keychain', service: 'gds-cli', account: 'k@nowhere' };
    await writeFile(
      configPath(env),
      JSON.stringify({
        version: 1,
        activeProfile: 'k',
        profiles: { k: { kind: 'static', base: 'https://k', secretRef: ref } },
      }),
    );
    const error = await failure({});
    expect(error).toMatchObject({ exitCode: 3, code: 'no_token' });
    expect(error.message).toMatch(
      /^Unauthorized: no API token: no --token flag, no SERVICE_TOKEN, and profile k: /,
    );
  });
});

describe('base URLs', () => {
  it('http(s) only, exit 2 naming where the value came from; a trailing slash is dropped', async () => {
    expect(checkBaseUrl('https://a.example/x/', '--base')).toBe('https://a.example/x');
    expect(checkBaseUrl('http://127.0.0.1:8080', '--base')).toBe('http://127.0.0.1:8080');
    const fromEnv = await failure({ token: 'cli_t' }, { SERVICE_API_URL: 'ftp://files.example' });
    expect(fromEnv).toMatchObject({ exitCode: 2, code: 'invalid_base_url' });
    expect(fromEnv.message).toBe(
      'The API base URL from SERVICE_API_URL is not an http(s) URL: ftp://files.example',
    );
    const fromFlag = await failure({ token: 'cli_t', base: 'gds.example.com' });
    expect(fromFlag.message).toBe('The API base URL from --base is not an http(s) URL: gds.example.com');
  });

  it('a URL carrying a password is refused without echoing it', async () => {
    const error = await failure({ token: 'cli_t', base: 'https://me:hunter2@gds.example' });
    expect(error).toMatchObject({ exitCode: 2, code: 'invalid_base_url' });
    expect(error.message).not.toContain('hunter2');
  });

  it('a query or a fragment is refused, the URL shown without them (they may hold a secret)', async () => {
    for (const base of [
      'https://gds.example/v1?access_token=s3cr3t',
      'https://gds.example/v1#s3cr3t',
      'https://gds.example/v1?',
      'https://gds.example/v1/#',
    ]) {
      const error = await failure({ token: 'cli_t', base });
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_base_url' });
      expect(error.message).toMatch(
        /^The API base URL from --base has a query or a fragment: https:\/\/gds\.example\/v1\/?[?#]…\.$/,
      );
      expect(error.message).not.toContain('s3cr3t');
      expect(error.suggestion).toContain(' https://gds.example/v1 ');
    }
    // Nor does any other refusal echo what may hold a secret.
    for (const base of ['ftp://me:s3cr3t@files.example/x?key=s3cr3t', 'gds.example?key=s3cr3t#s3cr3t']) {
      const error = await failure({ token: 'cli_t', base });
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_base_url' });
      expect(error.message).not.toContain('s3cr3t');
    }
  });

  it('auth set refuses a bad base and a bad token and writes nothing', async () => {
    await expect(
      setStaticProfile({ name: 'x', token: 'cli_t', base: 'mailto:a@b' }, { env }),
    ).rejects.toMatchObject({ exitCode: 2, code: 'invalid_base_url' });
    await expect(
      setStaticProfile({ name: 'x', token: 'cli t', base: 'https://a' }, { env }),
    ).rejects.toMatchObject({
      exitCode: 2,
      code: 'invalid_token',
    });
    await expect(
      setStaticProfile({ name: 'a/b', token: 'cli_t', base: 'https://a' }, { env }),
    ).rejects.toMatchObject({ exitCode: 2, code: 'invalid_profile_name' });
    expect(await loadConfig({ env })).toEqual({ version: 1, activeProfile: null, profiles: {} });
  });
});

describe('status', () => {
  it('nothing configured: not signed in, with both problems, no throw', async () => {
    const s = await credentialStatus({}, env);
    expect(s).toMatchObject({ signedIn: false, token: null, baseUrl: null, profile: null, profiles: [] });
    expect(s.problems).toHaveLength(2);
  });

  it('masks the token and lists every profile with where its secret is', async () => {
    await twoProfiles();
    const s = await credentialStatus({}, { ...env, SERVICE_TOKEN: 'svc_abcdef' });
    expect(s).toMatchObject({
      signedIn: true,
      token: '****',
      tokenSource: 'env',
      baseSource: 'profile:default',
      storage: 'none',
      storageLocation: null,
      activeProfile: 'default',
      secretStorage: 'file',
    });
    expect(s.profiles).toEqual([
      {
        name: 'default',
        base: 'https://default.example',
        kind: 'static',
        storage: 'file',
        active: true,
        user: null,
      },
      {
        name: 'other',
        base: 'https://other.example/api',
        kind: 'static',
        storage: 'file',
        active: false,
        user: null,
      },
    ]);
  });
});
