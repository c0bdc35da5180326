// `gds auth login` and `gds whoami` as a person uses them: the real gds process, the reference server
// in this process (device-flow interval 1 s), the test approving or denying on the verification page.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer } from '../server/oauth/oauth-server.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

let server: OAuthTestServer;
const workspaces: Workspace[] = [];
const tokensSeen: string[] = [];

beforeAll(async () => {
  [server] = await Promise.all([
    startOAuthServer({ intervalSeconds: 1, expiresInSeconds: 30 }),
    ensureBuilt(),
  ]);
});

afterAll(async () => {
  // No token ever printed whole, by any run of this file.
  const outputs = workspaces.flatMap((w) => w.outputs).join('\n');
  for (const token of tokensSeen) expect(outputs).not.toContain(token);
  expect(outputs).not.toMatch(/eyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/);
  await Promise.all(workspaces.map((w) => w.remove()));
  await server.close();
});

async function workspace() {
  const w = await newWorkspace();
  workspaces.push(w);
  return w;
}

function remember(profile: { accessToken?: string; refreshToken?: string }) {
  for (const token of [profile.accessToken, profile.refreshToken]) if (token) tokensSeen.push(token);
}

async function approvedLogin(w: Workspace, extra: string[] = [], email = 'steward@example.com') {
  const login = w.start(['auth', 'login', '--base', server.url, '--no-browser', ...extra]);
  const code = await login.code;
  expect((await server.decide(code, email, 'approve')).status).toBe(200);
  return login.result;
}

describe('gds auth login', () => {
  it('signs in once the code is approved, saves a session profile, and whoami shows who it is', async () => {
    const w = await workspace();
    const result = await approvedLogin(w, ['--json']);
    expect(result.code).toBe(0);
    // Under --json every line of stderr is JSON: the code and where to enter it as one.
    const said = ndjson(result.stderr) as Array<{ signIn?: Record<string, unknown> }>;
    expect(said).toHaveLength(1);
    expect(said[0]?.signIn).toMatchObject({
      message: expect.stringMatching(
        new RegExp(`^To sign in, open ${server.origin}/device and enter the code [A-Z]{4}-[A-Z]{4}$`),
      ) as unknown,
      verificationUri: `${server.origin}/device`,
      userCode: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/) as unknown,
      expiresIn: expect.any(Number) as unknown,
    });
    const [line, ...rest] = ndjson(result.stdout);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({
      profile: 'default',
      base: server.url,
      kind: 'session',
      issuer: server.url,
      storage: 'file',
      active: true,
    });
    expect(Date.parse(line.expiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);
    const profile = (await w.config()).profiles.default;
    remember(profile);
    expect(profile).toMatchObject({
      kind: 'session',
      base: server.url,
      tokenEndpoint: `${server.origin}/oauth/token`,
    });
    expect(profile.refreshToken).toMatch(/^gdsr_/);

    const who = await w.run(['whoami', '--json']);
    expect(who.code).toBe(0);
    expect(ndjson(who.stdout)).toEqual([
      expect.objectContaining({
        profile: 'default',
        tokenSource: 'profile:default',
        user: expect.objectContaining({ email: 'steward@example.com' }),
        role: 'STEWARD',
        token: { kind: 'session', audience: 'session', scopes: [], environment: null },
        effectiveEnvironmentScope: ['dev', 'staging'],
      }),
    ]);
    const human = await w.run(['whoami']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('default (browser sign-in)');
    expect(human.stdout).toMatch(/Role:\s+STEWARD/);
    expect(human.stdout).toMatch(/Environments:\s+dev, staging/);
  });

  it('refuses to replace a live sign-in without --force, and replaces it with --force', async () => {
    const w = await workspace();
    expect((await approvedLogin(w)).code).toBe(0);
    const before = (await w.config()).profiles.default;
    remember(before);
    const refused = await w.run(['auth', 'login', '--base', server.url, '--no-browser']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('already holds a live token');
    expect(refused.stderr).toContain('--force');
    expect((await w.config()).profiles.default).toEqual(before);

    const forced = await approvedLogin(w, ['--force'], 'admin@example.com');
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain('✓ Signed in as admin@example.com (ADMIN) to ');
    const after = (await w.config()).profiles.default;
    remember(after);
    expect(after.accessToken).not.toBe(before.accessToken);
    const who = await w.run(['whoami', '--json']);
    expect(ndjson(who.stdout)[0].role).toBe('ADMIN');
  });

  it('stops with exit 3 and writes nothing when the sign-in is denied', async () => {
    const w = await workspace();
    const login = w.start(['auth', 'login', '--base', server.url, '--no-browser', '--profile', 'work']);
    expect((await server.decide(await login.code, 'member@example.com', 'deny')).status).toBe(200);
    const result = await login.result;
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('denied');
    expect(result.stdout).toBe('');
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });

  it('stops with exit 3 when the code expires unapproved, as one JSON error line under --json', async () => {
    const w = await workspace();
    const login = w.start(['auth', 'login', '--base', server.url, '--no-browser', '--json']);
    await login.code;
    server.clock.advance(31_000);
    const result = await login.result;
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    // Every line of stderr is JSON: the code shown, then the error.
    const lines = ndjson(result.stderr);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toHaveProperty('signIn.userCode');
    expect(lines[1]).toMatchObject({ error: { code: 'login_expired' } });
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });

  it('stops with exit 130 on Ctrl-C while waiting, and writes nothing', async () => {
    const w = await workspace();
    const login = w.start(['auth', 'login', '--base', server.url, '--no-browser']);
    await login.code;
    login.kill('SIGINT');
    const result = await login.result;
    expect(result.code).toBe(130);
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });

  it('without a terminal and without --no-browser, refuses and says how CI authenticates', async () => {
    const w = await workspace();
    const result = await w.run(['auth', 'login', '--base', server.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('SERVICE_TOKEN');
    expect(result.stderr).toContain('--no-browser');
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });

  it('refuses plain http to a host that is not loopback, and a login with no service address', async () => {
    const w = await workspace();
    const insecure = await w.run(['auth', 'login', '--base', 'http://gds.example.com', '--no-browser']);
    expect(insecure.code).toBe(2);
    expect(insecure.stderr).toContain('must use https');
    const nowhere = await w.run(['auth', 'login', '--no-browser']);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toContain('--base');
  });
});

describe('gds auth login when the service refuses new sign-ins for now', () => {
  let busy: OAuthTestServer;
  beforeAll(async () => {
    busy = await startOAuthServer({ maxPendingCodes: 0 });
  });
  afterAll(async () => busy?.close());

  it('exits 8 with the wait the service asked for, not as a failed sign-in, and writes nothing', async () => {
    const w = await workspace();
    const result = await w.run(['auth', 'login', '--base', busy.url, '--no-browser', '--json']);
    expect(result.code, result.stderr).toBe(8);
    expect(result.stdout).toBe('');
    const { error } = JSON.parse(result.stderr.trim()) as {
      error: { code: string; message: string; suggestion: string; details: { retryAfterSeconds: number } };
    };
    expect(error.code).toBe('rate_limited');
    expect(error.message).toMatch(/refus\w* new sign-ins/);
    expect(error.details.retryAfterSeconds).toBeGreaterThan(0);
    expect(error.suggestion).toMatch(/^Wait \d+ (s|min) and run gds auth login again\.$/);
    expect(existsSync(join(w.configDir, 'config.json'))).toBe(false);
  });
});
