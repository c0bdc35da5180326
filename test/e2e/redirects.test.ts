// Redirects as gds meets them (run in the test process): a service (loopback http, which gds allows) that answers
// every request with a redirect to another origin. The other origin is a second server that records
// what reaches it: nothing may, neither the refresh token's POST nor a sign-in's discovery or device code.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let elsewhere: string;
let redirecting: string;
let redirectingSignIn: string;
const reachedElsewhere: string[] = [];
let dir: string;

beforeAll(async () => {
  elsewhere = await serve((req, res) => {
    reachedElsewhere.push(`${req.method} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
  // "localhost" is another origin than "127.0.0.1" on the same machine.
  const other = elsewhere.replace('127.0.0.1', 'localhost');
  redirecting = await serve((req, res) => {
    req.resume();
    res.statusCode = 307;
    res.setHeader('location', `${other}${req.url}`);
    res.end();
  });
  // A service whose discovery answers in place, and whose device sign-in endpoint redirects elsewhere.
  redirectingSignIn = await serve((req, res) => {
    req.resume();
    if (req.url === '/.well-known/openid-configuration') {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer: redirectingSignIn,
          token_endpoint: `${redirectingSignIn}/oauth/token`,
          device_authorization_endpoint: `${redirectingSignIn}/oauth/device/code`,
        }),
      );
      return;
    }
    res.statusCode = 307;
    res.setHeader('location', `${other}${req.url}`);
    res.end();
  });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-redirect-'));
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function gds(args: string[], input?: string) {
  return runInProcess(args, {
    input,
    env: { GDS_CONFIG_DIR: join(dir, 'gds'), GDS_SECRET_STORAGE: 'file', SERVICE_API_URL: redirecting },
  });
}

describe('a service that redirects to another origin', () => {
  it('gds tokens refresh sends the refresh token nowhere else and exits 9 naming the Location', async () => {
    const refreshToken = 'rt_00112233aabbccdd.c2VjcmV0LXNlY3JldC1zZWNyZXQ';
    const result = await gds(['tokens', 'refresh'], refreshToken);
    expect(result.code).toBe(9);
    expect(result.stdout).toBe('');
    const location = `${elsewhere.replace('127.0.0.1', 'localhost')}/api/integration/refresh`;
    expect(result.stderr).toContain(location);
    expect(result.stderr).not.toContain(refreshToken);
    expect(reachedElsewhere).toEqual([]);
  });

  it('gds whoami (a GET with a token) does not follow it either', async () => {
    const token = 'cli_0123456789abcdef0123';
    const result = await runInProcess(['whoami', '--json'], {
      env: {
        GDS_CONFIG_DIR: join(dir, 'gds'),
        SERVICE_API_URL: redirecting,
        SERVICE_TOKEN: token,
      },
    });
    expect(result.code).toBe(9);
    expect(result.stdout).toBe('');
    const line = JSON.parse(result.stderr.trim()) as { error: { code: string; message: string } };
    expect(line.error.code).toBe('redirect_refused');
    expect(line.error.message).toContain('/api/me');
    expect(result.stderr).not.toContain(token);
    expect(reachedElsewhere).toEqual([]);
  });

  it('gds auth login stops at the redirected discovery, naming where it pointed', async () => {
    const result = await gds(['auth', 'login', '--base', redirecting, '--no-browser']);
    expect(result.code).toBe(9);
    expect(result.stderr).toContain(
      `${elsewhere.replace('127.0.0.1', 'localhost')}/.well-known/openid-configuration`,
    );
    expect(reachedElsewhere).toEqual([]);
  });

  it('gds auth login stops at a redirected device sign-in endpoint, naming where it pointed', async () => {
    const result = await gds(['auth', 'login', '--base', redirectingSignIn, '--no-browser']);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    const location = `${elsewhere.replace('127.0.0.1', 'localhost')}/oauth/device/code`;
    expect(result.stderr).toContain(
      `the server answered 307, redirecting to ${location}, which gds does not follow`,
    );
    expect(reachedElsewhere).toEqual([]);
  });
});
