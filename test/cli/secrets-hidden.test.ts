// Smaller leaks, on the CLI's side: the --token value and -H headers no longer show in `ps`
// while gds runs (process.title overwrites the argv memory /proc/PID/cmdline reads); DEBUG=* and GDS_DEBUG
// mask a URL's user name and password and every -H value; a symlink planted at config.json is refused, its
// target untouched (it used to be chmod-ed to 0600).
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  cliCommand,
  cliEnv,
  cliUnderTest,
  collect,
  ensureBuilt,
  repoRoot,
  runCli,
} from './helpers/cli-process.js';

const token = 'cli_PsMustNotShowThis0123456789';
const apiKey = 'supersecretkey99';
const password = 'pa55wordInUrl';
/** A token of no known shape: only knowing where it was given masks it. */
const opaque = 'opaqueSecretToken123';
let dir: string;
let service: Server;
let base: string;
let requests = 0;
let holding = false;
const held: ServerResponse[] = [];

function answer(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end('{}');
}

/** Answers the requests held so far, and the ones after at once. */
function release(): void {
  holding = false;
  for (const response of held.splice(0)) answer(response);
}

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-hidden-'));
  // While `holding`, requests wait unanswered: gds waits on the service for as long as a test looks at it
  // with ps, and gets its answer once the test is done looking.
  service = createServer((request, response) => {
    requests++;
    request.resume();
    if (holding) held.push(response);
    else answer(response);
  });
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
});

// A test that failed while holding leaves none held for the next.
afterEach(release);

afterAll(async () => {
  service.closeAllConnections();
  await new Promise((resolve) => service.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(process.platform === 'linux')('ps while gds waits on the service', () => {
  it('shows neither the --token value nor a -H header, masked in the command line', async () => {
    const before = requests;
    holding = true;
    const [command, args] = cliCommand([
      'api',
      '/api/me',
      '-H',
      `X-Api-Key: ${apiKey}`,
      '--token',
      token,
      '--base',
      base,
    ]);
    const child = spawn(command, args, {
      env: cliEnv({ GDS_CONFIG_DIR: join(dir, 'ps-config') }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    for (let waited = 0; requests === before && waited < 15_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(requests).toBeGreaterThan(before); // gds is past start-up, waiting for the answer
    const shown = execFileSync('ps', ['-o', 'args=', '-p', String(child.pid)], { encoding: 'utf8' });
    const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    release();
    await done;
    for (const text of [shown, cmdline]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(apiKey);
      expect(text).toContain('--token cli_…****');
      expect(text).toContain(`--base ${base}`);
    }
  });

  it('shows a token given as an argument (tokens revoke tf_…) masked too', async () => {
    const clientToken = 'tf_PsMustNotShowThisEither0123';
    const before = requests;
    holding = true;
    const [command, args] = cliCommand(['tokens', 'revoke', clientToken, '--yes', '--base', base]);
    const child = spawn(command, args, {
      env: cliEnv({ GDS_CONFIG_DIR: join(dir, 'ps-config'), SERVICE_TOKEN: 'cli_FromTheEnvironment01234' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    for (let waited = 0; requests === before && waited < 15_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(requests).toBeGreaterThan(before);
    const shown = execFileSync('ps', ['-o', 'args=', '-p', String(child.pid)], { encoding: 'utf8' });
    const cmdline = (await readFile(`/proc/${child.pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    release();
    await done;
    for (const text of [shown, cmdline]) {
      expect(text).not.toContain(clientToken);
      expect(text).toContain('tokens revoke tf_…**** --yes');
    }
  });
});

describe.runIf(process.platform === 'linux' && cliUnderTest === undefined)(
  'the command line before gds loads',
  () => {
    it.each([
      ['--token', ['list', '--token', token, '--base', 'http://127.0.0.1:1'], '--token cli_…****'],
      ['an argument', ['tokens', 'revoke', 'tf_NotEvenForAMoment0123', '--yes'], 'revoke tf_…**** --yes'],
      [
        'a --token given twice',
        ['list', '--token', 'a1234567890', `--token=${opaque}`, '--base', 'http://127.0.0.1:1'],
        '--token **** --token=****',
      ],
    ])('is masked before the first module of gds loads (%s)', async (_kind, args, masked) => {
      const file = join(dir, `cmdline-${args[0]}`);
      const result = await runCli(args, {
        nodeArgs: ['--import', join(repoRoot, 'test/cli/fixtures/cmdline-at-first-module.mjs')],
        env: { GDS_TEST_CMDLINE_FILE: file, GDS_CONFIG_DIR: join(dir, 'first-config') },
      });
      expect(result.code).not.toBe(0); // nothing to reach: only what it showed on the way matters
      const cmdline = (await readFile(file, 'utf8')).replaceAll('\0', ' ');
      expect(cmdline).toContain(masked);
      expect(cmdline).not.toContain(token);
      expect(cmdline).not.toContain('tf_NotEvenForAMoment0123');
      expect(cmdline).not.toContain(opaque);
    });
  },
);

describe('debug output', () => {
  it('DEBUG=* and GDS_DEBUG=1 mask every -H value', async () => {
    const r = await runCli(
      ['api', '/api/me', '-H', `X-Api-Key: ${apiKey}`, '--token', token, '--base', base],
      {
        env: { DEBUG: '*', GDS_DEBUG: '1', GDS_CONFIG_DIR: join(dir, 'debug-config') },
      },
    );
    expect(r.stderr).toContain('oclif:'); // the debug log did run
    expect(r.stderr).toContain('GET');
    expect(r.stdout + r.stderr).not.toContain(apiKey);
    expect(r.stdout + r.stderr).not.toContain(token);
  });

  it('DEBUG=* masks a second --token, and a mistyped --tok= is masked in its error', async () => {
    const twice = await runCli(['whoami', '--token', 'a1234567890', `--token=${opaque}`, '--base', base], {
      env: { DEBUG: '*', GDS_CONFIG_DIR: join(dir, 'twice-config') },
    });
    expect(twice.stderr).toContain('oclif:'); // the debug log did run
    expect(twice.stdout + twice.stderr).not.toContain(opaque);
    const mistyped = await runCli(['whoami', `--tok=${opaque}`, '--json'], {
      env: { GDS_CONFIG_DIR: join(dir, 'mistyped-config') },
    });
    expect(mistyped.code).toBe(2);
    expect(JSON.parse(mistyped.stderr)).toMatchObject({ error: { message: 'Unknown flag: --tok=****.' } });
  });

  it('DEBUG=* masks the user name and password of a --base URL', async () => {
    const r = await runCli(['whoami', '--token', token, '--base', `https://admin:${password}@gds.example`], {
      env: { DEBUG: '*', GDS_DEBUG: '1', GDS_CONFIG_DIR: join(dir, 'url-config') },
    });
    expect(r.stderr).toContain('oclif:');
    expect(r.stderr).toContain('https://****@gds.example');
    expect(r.stdout + r.stderr).not.toContain(password);
    expect(r.stdout + r.stderr).not.toContain('admin:');
  });
});

describe('a symlink planted at config.json', () => {
  it('is refused with a message, and the file it points at keeps its mode and content', async () => {
    const cfg = join(dir, 'planted', 'gds');
    await mkdir(cfg, { recursive: true, mode: 0o700 });
    const target = join(dir, 'someone-elses-file.json');
    const content = JSON.stringify({ version: 1, profiles: {} });
    await writeFile(target, content);
    await chmod(target, 0o644);
    await symlink(target, join(cfg, 'config.json'));
    for (const args of [
      ['auth', 'status', '--offline'],
      ['auth', 'set', '--no-verify', '--token', token, '--base', 'https://gds.example'],
    ]) {
      const r = await runCli(args, { env: { GDS_CONFIG_DIR: cfg, GDS_SECRET_STORAGE: 'file' } });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${join(cfg, 'config.json')} is a symbolic link, not a regular file`);
      expect((await stat(target)).mode & 0o777).toBe(0o644);
      expect(await readFile(target, 'utf8')).toBe(content);
    }
  });
});
