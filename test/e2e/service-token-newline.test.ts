// A CI secret often reaches SERVICE_TOKEN with a newline at its end (read from a file or a secret mount, or
// pasted so). No HTTP header may hold one: gds failed every command with exit 9, "Could not reach the
// service", and sent the person to check the base URL. The token is used without the white space around it;
// one with white space inside is exit 2 saying so, the token never shown. gds runs in the test process.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let config: string;

beforeAll(async () => {
  server = await startTestServer();
  config = join(await mkdtemp(join(tmpdir(), 'gds-e2e-token-newline-')), 'gds');
});

afterAll(async () => {
  await server?.close();
});

const whoami = (token: string) =>
  runInProcess(['whoami', '--json'], {
    env: { GDS_CONFIG_DIR: config, SERVICE_API_URL: server.url, SERVICE_TOKEN: token },
  });

describe('SERVICE_TOKEN as a CI secret holds it', () => {
  it('with a newline at its end: the command works', async () => {
    const token = server.user('ADMIN').cliToken;
    for (const given of [`${token}\n`, `${token}\r\n`, ` ${token} `]) {
      const r = await whoami(given);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ role: 'ADMIN' });
    }
  });

  it('with a space inside: exit 2 naming SERVICE_TOKEN, nothing sent, the token not shown', async () => {
    const token = server.user('ADMIN').cliToken;
    const r = await whoami(`${token.slice(0, 10)} ${token.slice(10)}`);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: { code: 'invalid_token', message: expect.stringContaining('SERVICE_TOKEN') },
    });
    expect(r.stderr).not.toContain(token.slice(10));
  });
});
