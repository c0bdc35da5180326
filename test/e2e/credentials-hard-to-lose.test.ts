// Credentials that are hard to lose, with gds against a real server:
// auth set does not silently replace a live sign-in or another user's token; auth status asks the
// service (user, role, exit 1 when the token is refused; --offline skips); a profile's token goes only to
// its own base; auth logout without --profile removes every profile, on a terminal or not, and says which.
// gds runs in the test process (runInProcess), but on a terminal (a real gds in a pseudo-terminal).
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
});

afterAll(async () => {
  await server?.close();
});

const fresh = () => mkdtemp(join(tmpdir(), 'gds-e2e-creds-'));

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

async function config(cfg: string) {
  return JSON.parse(await readFile(join(cfg, 'config.json'), 'utf8')) as {
    activeProfile: string | null;
    profiles: Record<string, { kind: string; token?: string; accessToken?: string; user?: string }>;
  };
}

/** A profile as `gds auth login` leaves it: a live browser session of `role`. */
async function sessionProfile(cfg: string, name: string, role: 'OWNER' | 'MEMBER'): Promise<void> {
  const env = { ...process.env, GDS_CONFIG_DIR: cfg, GDS_SECRET_STORAGE: 'file' };
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
  await withProfileLock(
    name,
    () =>
      saveProfile(
        name,
        { kind: 'session', base: server.url, expiresAt },
        { accessToken: server.user(role).accessToken },
        { env },
      ),
    { env },
  );
}

const errorOf = (r: CliResult) =>
  (JSON.parse(r.stderr) as { error: { code: string; message: string } }).error;

describe('gds auth set does not silently replace a live credential', () => {
  it('a live browser session: exit 2 without --force, the session kept; --force replaces it', async () => {
    const cfg = await fresh();
    await sessionProfile(cfg, 'default', 'OWNER');
    const member = server.user('MEMBER').cliToken;
    const refused = await gds(cfg, ['auth', 'set', '--token', member, '--base', server.url, '--json']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(errorOf(refused)).toMatchObject({ code: 'profile_in_use' });
    expect(errorOf(refused).message).toContain('session');
    expect((await config(cfg)).profiles.default).toMatchObject({ kind: 'session' });

    const forced = await gds(cfg, ['auth', 'set', '--token', member, '--base', server.url, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect((await config(cfg)).profiles.default).toMatchObject({ kind: 'static', token: member });
  });

  it("a live CLI token of another user: exit 2; the same user's new token is stored", async () => {
    const cfg = await fresh();
    const owner = server.user('OWNER').cliToken;
    expect((await gds(cfg, ['auth', 'set', '--token', owner, '--base', server.url])).code).toBe(0);
    expect((await config(cfg)).profiles.default?.user).toBe(server.user('OWNER').email);
    const other = await gds(cfg, [
      'auth',
      'set',
      '--token',
      server.user('MEMBER').cliToken,
      '--base',
      server.url,
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain(server.user('OWNER').email);
    expect((await config(cfg)).profiles.default?.token).toBe(owner);
    const same = await gds(cfg, ['auth', 'set', '--token', owner, '--base', server.url]);
    expect(same.code, same.stderr).toBe(0);
  });
});

describe('gds auth status asks the service', () => {
  it('user and role from GET /api/me; exit 0', async () => {
    const cfg = await fresh();
    await gds(cfg, ['auth', 'set', '--token', server.user('OWNER').cliToken, '--base', server.url]);
    const human = await gds(cfg, ['auth', 'status']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`Signed in: ${server.user('OWNER').email} (OWNER)`);
    // Aligned: every value starts in one column, and the profile list names the user by e-mail.
    const lines = human.stdout.split('\n');
    const labelled = lines.slice(0, lines.indexOf('Profiles:'));
    expect(labelled.length).toBeGreaterThanOrEqual(3);
    expect(new Set(labelled.map((line) => /^[A-Za-z ]+:\s+/.exec(line)?.[0].length)).size).toBe(1);
    expect(lines[lines.indexOf('Profiles:') + 1]).toMatch(
      new RegExp(`^ {2}\\* default {2}\\S+ {2}${server.user('OWNER').email.replace('.', '\\.')} {2}static`),
    );
    const json = await gds(cfg, ['auth', 'status', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      verified: true,
      email: server.user('OWNER').email,
      role: 'OWNER',
    });
  });

  it('a token the service refuses: exit 1 and the reason; --offline does not ask (exit 0)', async () => {
    const cfg = await fresh();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', 'cli_revoked0123456789', '--base', server.url]);
    const human = await gds(cfg, ['auth', 'status']);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('Refused:');
    // What to do next, gds's lines of it each a line: the ways to get a token one under another.
    expect(human.stdout).toMatch(/^ {2}The token from .* was refused\. Use one the service accepts:$/m);
    expect(human.stdout).toMatch(/^ {4}gds auth login +sign in with the browser$/m);
    const json = await gds(cfg, ['auth', 'status', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ verified: false, refused: { code: expect.any(String) } });
    expect(JSON.stringify(JSON.parse(json.stdout).refused)).toMatch(/unauthori[sz]ed|401/i);
    const offline = await gds(cfg, ['auth', 'status', '--offline', '--json']);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout)).not.toHaveProperty('verified');
  });
});

describe("a profile's token goes only to that profile's base", () => {
  it('--base <other> without a token: exit 2 with the reason, and the other host hears nothing', async () => {
    const heard: string[] = [];
    const other = createServer((request, response) => {
      heard.push(String(request.headers.authorization));
      response.end('{}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      const cfg = await fresh();
      await gds(cfg, ['auth', 'set', '--token', server.user('OWNER').cliToken, '--base', server.url]);
      const r = await gds(cfg, ['members', 'list', '--base', otherBase, '--json']);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(errorOf(r)).toMatchObject({ code: 'token_not_for_base' });
      expect(errorOf(r).message).toContain(server.url);
      const fromEnv = await gds(cfg, ['whoami'], { SERVICE_API_URL: otherBase });
      expect(fromEnv.code).toBe(2);
      expect(heard).toEqual([]);
      // With a token for it, --base goes there.
      const withToken = await gds(cfg, [
        'api',
        '/api/me',
        '--base',
        otherBase,
        '--token',
        'cli_forOther0123456',
      ]);
      expect(withToken.code, withToken.stderr).toBe(0);
      expect(heard).toEqual(['Bearer cli_forOther0123456']);
    } finally {
      other.close();
    }
  });
});

/** `gds <args>` in a pseudo-terminal, once `question` is on the screen (or gds has ended). */
async function onTerminal(cfg: string, args: string[], question: string) {
  const [command, argv] = cliCommand(args);
  const line = `stty cols 100 rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
  const { child, result } = runInTerminal(line, { GDS_CONFIG_DIR: cfg, GDS_SECRET_STORAGE: 'file' });
  let seen = '';
  let ended = false;
  child.stdout?.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
  const end = () => (ended = true);
  void result.then(end, end);
  for (let i = 0; i < 200 && !seen.includes(question) && !ended; i += 1) await sleep(50);
  return { seen: () => seen, type: (keys: string) => child.stdin?.write(keys), result };
}

describe('gds auth logout', () => {
  // The spec's `cli auth logout`: "Clear one profile, or the whole config file when no profile is given";
  // gds keeps that off a terminal and asks that it say what it removed (docs/gh-comparison.md, A11).
  it('off a terminal: removes every profile and the config file, and says which', async () => {
    const cfg = await fresh();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', 'cli_aaaaaaaaaaaaaaaa', '--base', server.url]);
    await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      'cli_bbbbbbbbbbbbbbbb',
      '--base',
      server.url,
      '--profile',
      'b',
    ]);
    const r = await gds(cfg, ['auth', 'logout']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `✓ Removed profile default.\n✓ Removed profile b.\n✓ Removed ${join(cfg, 'config.json')}.\n`,
    );
    expect(existsSync(join(cfg, 'config.json'))).toBe(false);
  });

  it('on a terminal too: removes every profile and the config file, asking nothing', async () => {
    const cfg = await fresh();
    await gds(cfg, ['auth', 'set', '--no-verify', '--token', 'cli_aaaaaaaaaaaaaaaa', '--base', server.url]);
    await gds(cfg, [
      'auth',
      'set',
      '--no-verify',
      '--token',
      'cli_bbbbbbbbbbbbbbbb',
      '--base',
      server.url,
      '--profile',
      'b',
    ]);
    const { result } = await onTerminal(cfg, ['auth', 'logout'], 'Removed');
    const r = await result;
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain('Removed profile default');
    expect(r.stdout).toContain('Removed profile b');
    expect(existsSync(join(cfg, 'config.json'))).toBe(false);
  });
});

describe('gds auth set on a terminal', () => {
  it('without --token: asks for it, masked, and stores it', async () => {
    const cfg = await fresh();
    const token = server.user('OWNER').cliToken;
    const { seen, type, result } = await onTerminal(
      cfg,
      ['auth', 'set', '--base', server.url],
      'Paste the CLI token',
    );
    type(`${token}\r`);
    const r = await result;
    expect(r.code, r.stdout).toBe(0);
    expect(seen()).not.toContain(token);
    expect(r.stdout).toContain('*'.repeat(8));
    expect((await config(cfg)).profiles.default).toMatchObject({ kind: 'static', token });
  });

  it('--token - on a terminal: exit 2 saying how to pipe a token', async () => {
    const cfg = await fresh();
    const { result } = await onTerminal(
      cfg,
      ['auth', 'set', '--token', '-', '--base', server.url],
      'nothing',
    );
    const r = await result;
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('printf %s "$TOKEN" | gds auth set --token -');
    expect(r.stdout).not.toContain('gate1.yml');
  });
});
