// auth as gh does it: auth set checks the token with the service before saving (tf_ client tokens
// refused), auth switch, auth token for piping, and a warning when SERVICE_TOKEN overrides --profile.
// gds in the test process against a real server.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

async function fresh(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'gds-e2e-auth-'));
}

function gds(cfg: string, args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: cfg,
      GDS_SECRET_STORAGE: 'file',
      SERVICE_TOKEN: undefined,
      SERVICE_API_URL: undefined,
      ...env,
    },
  });
}

async function config(
  cfg: string,
): Promise<{ activeProfile: string | null; profiles: Record<string, unknown> }> {
  return JSON.parse(await readFile(join(cfg, 'config.json'), 'utf8')) as never;
}

const exists = async (path: string) =>
  readFile(path).then(
    () => true,
    () => false,
  );

describe('gds auth set checks the token first', () => {
  it('a tf_ client token: exit 2 with the reason, nothing written, no request needed', async () => {
    const cfg = await fresh();
    const r = await gds(cfg, [
      'auth',
      'set',
      '--token',
      'tf_0123456789abcdef',
      '--base',
      server.url,
      '--json',
    ]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    const { error } = JSON.parse(r.stderr) as {
      error: { code: string; message: string; suggestion: string };
    };
    expect(error.code).toBe('client_token');
    expect(error.message).toContain('refuses client tokens with 401');
    expect(error.suggestion).toContain('access token');
    expect(r.stderr).not.toContain('tf_0123456789abcdef');
    expect(await exists(join(cfg, 'config.json'))).toBe(false);
  });

  it('a token the service refuses: exit 3 and nothing written', async () => {
    const cfg = await fresh();
    const r = await gds(cfg, ['auth', 'set', '--token', 'cli_unknown0123456789', '--base', server.url]);
    expect(r).toMatchObject({ code: 3, stdout: '' });
    expect(r.stderr).toContain('Unauthorized');
    expect(await exists(join(cfg, 'config.json'))).toBe(false);
  });

  it('a good token: saved, saying who it signs in as; --no-verify saves without asking', async () => {
    const cfg = await fresh();
    const token = server.user('OWNER').cliToken;
    const r = await gds(cfg, ['auth', 'set', '--token', token, '--base', server.url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('The token signs in as owner@example.com (OWNER).');
    expect(r.stdout + r.stderr).not.toContain(token);
    const offline = await gds(cfg, [
      'auth',
      'set',
      '--token',
      'cli_notcheckedatall01',
      '--base',
      'http://127.0.0.1:9',
      '--profile',
      'offline',
      '--no-verify',
      '--json',
    ]);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).toMatchObject({ profile: 'offline', verified: false });
    expect(Object.keys((await config(cfg)).profiles).sort()).toEqual(['default', 'offline']);
  });
});

describe('gds auth switch and gds auth token', () => {
  it('switch sets the active profile; off a terminal it needs --profile; token prints the token whole', async () => {
    const cfg = await fresh();
    const owner = server.user('OWNER').cliToken;
    const admin = server.user('ADMIN').cliToken;
    await gds(cfg, ['auth', 'set', '--token', owner, '--base', server.url]);
    await gds(cfg, ['auth', 'set', '--token', admin, '--base', server.url, '--profile', 'admin']);
    expect((await config(cfg)).activeProfile).toBe('default');

    const asked = await gds(cfg, ['auth', 'switch']);
    expect(asked).toMatchObject({ code: 2, stdout: '' });
    expect(asked.stderr).toContain('Known profiles: admin, default');

    const switched = await gds(cfg, ['auth', 'switch', '--profile', 'admin']);
    expect(switched.code).toBe(0);
    expect((await config(cfg)).activeProfile).toBe('admin');

    expect(await gds(cfg, ['auth', 'token'])).toMatchObject({ code: 0, stdout: `${admin}\n` });
    expect(await gds(cfg, ['auth', 'token', '--profile', 'default'])).toMatchObject({ stdout: `${owner}\n` });
    const json = await gds(cfg, ['auth', 'token', '--json']);
    expect(JSON.parse(json.stdout)).toEqual({ token: admin, tokenSource: 'profile:admin', profile: 'admin' });
    const whoami = await gds(cfg, ['whoami', '--json']);
    expect(JSON.parse(whoami.stdout)).toMatchObject({ user: { email: 'admin@example.com' } });
  });

  it('SERVICE_TOKEN still wins over --profile (flags, env, profile), with a warning on stderr', async () => {
    const cfg = await fresh();
    const owner = server.user('OWNER').cliToken;
    const member = server.user('MEMBER').cliToken;
    await gds(cfg, ['auth', 'set', '--token', owner, '--base', server.url]);
    const r = await gds(cfg, ['auth', 'token', '--profile', 'default'], { SERVICE_TOKEN: member });
    expect(r.stdout).toBe(`${member}\n`);
    expect(r.stderr).toBe(
      'Warning: SERVICE_TOKEN overrides --profile default; unset it to use the profile.\n',
    );
    const w = await gds(cfg, ['whoami', '--profile', 'default'], { SERVICE_TOKEN: member });
    expect(w.stderr).toContain('SERVICE_TOKEN overrides --profile default');
    expect(w.stdout).toContain('member@example.com');
  });
});
