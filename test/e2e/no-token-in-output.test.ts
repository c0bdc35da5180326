// No credential whole in anything gds prints (except `tokens issue`'s deliberate stdout):
// oclif's debug log, a stray argument echoed back, a server that quotes a credential in its error. Human
// output carries no bidi override; files gds writes honour the umask (bundles 0600 whatever it is).
// gds runs in the test process (runInProcess), but under DEBUG or a umask of its own (a real gds process).
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult, RunOptions } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let folders = 0;
let cliToken: string;
let refreshToken: string;
let accessToken: string;
const echoServers: Server[] = [];

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-redact-'));
  cliToken = server.user('OWNER').cliToken;
  const issued = await server.issueToken('ADMIN', {
    name: 'redact',
    env: '*',
    scopes: ['workspace:read:audit'],
  });
  refreshToken = issued.tokens.refreshToken;
  accessToken = issued.tokens.accessToken;
});

afterAll(async () => {
  for (const echo of echoServers) {
    echo.closeAllConnections();
    await new Promise((resolve) => echo.close(resolve));
  }
  await server?.close();
});

function freshDir(): string {
  folders += 1;
  return join(dir, `c${folders}`);
}

function gdsOptions(options: RunOptions): RunOptions {
  return {
    ...options,
    env: {
      GDS_CONFIG_DIR: join(freshDir(), 'gds'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      ...options.env,
    },
  };
}

/** gds in the test process. */
function gds(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runInProcess(args, gdsOptions(options));
}

/** A gds process: oclif's debug log reads DEBUG once, as it loads. */
function gdsProcess(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return runCli(args, gdsOptions(options));
}

/** gds run by a shell that sets the umask first, in a folder of its own. */
function gdsUnderUmask(umask: string, args: string[], cwd: string): Promise<CliResult> {
  const [command, argv] = cliCommand(args);
  const child = spawn('sh', ['-c', `umask ${umask} && exec "$@"`, 'sh', command, ...argv], {
    cwd,
    env: cliEnv({
      GDS_CONFIG_DIR: join(cwd, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: cliToken,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

function expectNoneOf(result: CliResult, secrets: string[]) {
  for (const secret of secrets) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

describe("oclif's debug log", () => {
  it('DEBUG=* gds whoami --token cli_… logs argv with the token masked', async () => {
    const result = await gdsProcess(['whoami', '--token', cliToken], { env: { DEBUG: '*' } });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('oclif:'); // the debug log did run
    expect(result.stderr).toContain('cli_…****');
    expectNoneOf(result, [cliToken]);
  });

  it('DEBUG=* with SERVICE_TOKEN (a JWT) and --token=… of no known shape', async () => {
    const env = await gdsProcess(['whoami'], { env: { DEBUG: '*', SERVICE_TOKEN: accessToken } });
    expect(env.code, env.stderr).toBe(0);
    expectNoneOf(env, [accessToken]);
    const odd = 'plainsecretvalue1234';
    const flag = await gdsProcess(['whoami', `--token=${odd}`], { env: { DEBUG: '*' } });
    expect(flag.code).toBe(3);
    expect(flag.stderr).toContain('oclif:');
    expectNoneOf(flag, [odd]);
  });

  it('DEBUG=* masks a --token that oclif logs escaped (a pasted carriage return, a backslash)', async () => {
    for (const token of ['plainsecretvalue1234\r', 'plain\\secretvalue1234']) {
      const result = await gdsProcess(['whoami', '--token', token], { env: { DEBUG: '*' } });
      expect(result.stderr).toContain('oclif:');
      expect(result.stdout + result.stderr).not.toContain('secretvalue1234');
    }
  });
});

describe('stray arguments echoed back', () => {
  it('gds auth set cli_… (the --token flag forgotten) masks it in the not-found warning', async () => {
    const result = await gds(['auth', 'set', cliToken]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cli_…****');
    expectNoneOf(result, [cliToken]);
  });

  it('gds tokens refresh <refresh token> as an argument: masked in "Unexpected argument", never spent', async () => {
    const result = await gds(['tokens', 'refresh', '--refresh-token', '-', refreshToken], {
      input: refreshToken,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('rt_…****');
    expectNoneOf(result, [refreshToken]);
    const still = await server.request('POST', '/api/integration/refresh', { body: { refreshToken } });
    expect(still.status).toBe(200);
    refreshToken = (still.body as { tokens: { refreshToken: string } }).tokens.refreshToken;
  });
});

describe('a server that quotes the credential in its error', () => {
  async function echoing(): Promise<string> {
    const echo = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const sent = (JSON.parse(body || '{}') as { refreshToken?: string }).refreshToken ?? '';
        res.statusCode = 400;
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            error: {
              code: 'bad_token',
              message: `The refresh token ${sent} is malformed (seen as ${req.headers.authorization ?? 'none'})`,
              details: { refresh_token: sent, echo: `token=${sent}` },
            },
          }),
        );
      });
    });
    echoServers.push(echo);
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  }

  it('gds tokens refresh masks an rt_ refresh token the server sends back, human and --json', async () => {
    const base = await echoing();
    const given = 'rt_9f8e7d6c5b4a3921.Zm9vYmFyYmF6cXV4cXV1eA';
    for (const json of [[], ['--json']]) {
      const result = await gds(['tokens', 'refresh', ...json], {
        input: given,
        env: { SERVICE_API_URL: base },
      });
      expect(result.code).toBe(7);
      expect(result.stderr).toContain('rt_…****');
      expectNoneOf(result, [given, 'Zm9vYmFyYmF6cXV4cXV1eA']);
    }
  });
});

describe('human output', () => {
  it('strips a bidi override (U+202E) and isolates from a server string', async () => {
    const owner = server.user('OWNER');
    const [before] = await server.sql<{ display_name: string }>(
      'SELECT display_name FROM gds.users WHERE id = $1',
      [owner.userId],
    );
    await server.sql('UPDATE gds.users SET display_name = $2 WHERE id = $1', [
      owner.userId,
      'Eve \u202Egnp.exe\u202C \u2066x\u2069 \u200Bz',
    ]);
    try {
      const result = await gds(['whoami'], { env: { SERVICE_TOKEN: cliToken } });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('Eve gnp.exe x z');
      expect(result.stdout).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B]/);
    } finally {
      await server.sql('UPDATE gds.users SET display_name = $2 WHERE id = $1', [
        owner.userId,
        before?.display_name,
      ]);
    }
  });
});

describe('files gds writes', () => {
  it('gate get -o honours a umask of 077 (0600), and never exceeds 0644 under 000', async () => {
    const table = server.table('crm_contacts').id;
    const gate =
      'customPredicates:\n  - name: has_email\n    sql: email IS NOT NULL\n    severity: HARD_FAIL\n';
    const applied = await server.request('PUT', `/api/tables/${table}/gate1`, {
      token: cliToken,
      body: { content: gate },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    const strict = freshDir();
    const loose = freshDir();
    for (const folder of [strict, loose]) await mkdir(folder, { recursive: true });
    const a = await gdsUnderUmask('077', ['gate', 'get', table, '-o', 'g.yml'], strict);
    expect(a.code, a.stderr).toBe(0);
    expect((await stat(join(strict, 'g.yml'))).mode & 0o777).toBe(0o600);
    const b = await gdsUnderUmask('000', ['gate', 'get', table, '-o', 'g.yml'], loose);
    expect(b.code, b.stderr).toBe(0);
    expect((await stat(join(loose, 'g.yml'))).mode & 0o777).toBe(0o644);
  });

  it('env promote --bundle-out writes the bundle 0600 under the usual umask 022', async () => {
    const folder = freshDir();
    await mkdir(folder, { recursive: true });
    const customers = server.table('customers').id;
    const result = await gdsUnderUmask(
      '022',
      ['env', 'promote', customers, '--to', 'staging', '--bundle-out', 'c.bundle.json'],
      folder,
    );
    expect(result.code, result.stderr).toBe(0);
    expect((await stat(join(folder, 'c.bundle.json'))).mode & 0o777).toBe(0o600);
  });
});
