// A refresh whose answer is lost after it went out (the connection dropped once the service rotated the tokens):
// on the spec's service (single-use refresh tokens, no reuse grace) the new tokens are gone with the answer, and
// nothing gds does can get them back. What gds can do is say so: exit 9 that the service may have spent the
// refresh token (not "the saved tokens are unchanged, run again" alone), then, on the next run, exit 3 with the
// one command that issues the token again, the profile kept. A proxy in front of the server drops the answer.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

let server: TestServer;
let w: Workspace;
let proxyUrl: string;
let dropRefresh = false;
let dropped = 0;
const proxy = createServer((request, response) => {
  void (async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = new URL(server.url);
    const answer = await fetch(`${target.origin}${request.url ?? '/'}`, {
      method: request.method ?? 'GET',
      headers: Object.fromEntries(
        Object.entries(request.headers).filter(([k, v]) => typeof v === 'string' && k !== 'host'),
      ) as Record<string, string>,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    if (dropRefresh && request.method === 'POST' && request.url?.endsWith('/api/integration/refresh')) {
      // The service rotated the tokens; the answer never reaches gds.
      dropped += 1;
      request.socket.destroy();
      return;
    }
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
    response.end(body);
  })();
});

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace()]);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  proxyUrl = `http://127.0.0.1:${port}${new URL(server.url).pathname}`.replace(/\/$/, '');
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  server?.clock.reset();
  await w?.remove();
  await server?.close();
});

describe('a refresh whose answer is lost after the service rotated the tokens', () => {
  it('exit 9 saying the token may be spent; the next run exit 3 with the command that issues it again', async () => {
    const issued = await w.run(
      ['tokens', 'issue', '--name', 'nightly', '--env', 'dev', '--scope', 'workspace:read:audit'].concat([
        '--save-profile',
        'ci',
      ]),
      { SERVICE_TOKEN: server.user('OWNER').cliToken, SERVICE_API_URL: proxyUrl },
    );
    expect(issued.code, issued.stderr).toBe(0);
    server.clock.advance(61 * 60_000);

    dropRefresh = true;
    const lost = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(dropped).toBe(1);
    expect(lost.code).toBe(9);
    expect(lost.stdout).toBe('');
    expect(ndjson(lost.stderr)).toEqual([
      {
        error: expect.objectContaining({
          code: 'refresh_failed',
          suggestion: expect.stringContaining('the service may have spent the refresh token'),
        }),
      },
    ]);

    dropRefresh = false;
    const next = await w.run(['audit', 'list', '--profile', 'ci', '--limit', '1', '--json']);
    expect(next.code).toBe(3);
    expect(ndjson(next.stderr)).toEqual([
      {
        error: expect.objectContaining({
          code: 'integration_token_expired',
          message: expect.stringContaining('had already spent it'),
          suggestion: expect.stringContaining('gds tokens issue --save-profile ci --force'),
        }),
      },
    ]);
    const config = JSON.parse(await readFile(join(w.configDir, 'config.json'), 'utf8'));
    expect(config.profiles.ci.kind).toBe('integration');
    const outputs = w.outputs.join('\n');
    expect(outputs).not.toContain(config.profiles.ci.refreshToken);
    expect(outputs).not.toContain(config.profiles.ci.accessToken);
  });
});
