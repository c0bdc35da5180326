// The REST door under its stage (`{origin}/v1/api/…`): the real gds works against the ready file's base URL,
// and behind a reverse proxy that adds a path prefix of its own (`/gateway/v1/api/…` → `/v1/api/…`); the
// dashboard page gds names is beside the stage, there too. A base URL without the stage is refused with a
// 404 that names the REST base URL.
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { passThrough } from '../helpers/pass-through.js';
import { ensureBuilt } from '../cli/helpers/cli-process.js';
import type { Workspace } from './login-helpers.js';
import { ndjson, newWorkspace } from './login-helpers.js';

const PREFIX = '/gateway';
let server: TestServer;
let w: Workspace;
let proxyBase = '';
const heard: string[] = [];

/** A reverse proxy that serves the server under PREFIX: it strips the prefix and names the server as Host. */
const proxy = createHttpServer((req, res) => {
  const url = req.url ?? '/';
  heard.push(`${req.method} ${url.split('?')[0]}`);
  if (!url.startsWith(`${PREFIX}/`)) {
    res.writeHead(404).end();
    return;
  }
  passThrough(server.origin, req, res, { path: url.slice(PREFIX.length) });
});

beforeAll(async () => {
  [server, w] = await Promise.all([startTestServer(), newWorkspace(), ensureBuilt()]);
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${PREFIX}`;
});

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await w?.remove();
  await server?.close();
});

const asOwner = (base: string) => ({ SERVICE_API_URL: base, SERVICE_TOKEN: server.user('OWNER').cliToken });

describe('the REST base URL has a stage segment', () => {
  it('is the ready file’s baseUrl, and gds lists the tables through it', async () => {
    expect(server.ready.baseUrl).toBe(`${server.origin}/v1`);
    const listed = await w.run(['list', '--json'], asOwner(server.ready.baseUrl));
    expect(listed.code, listed.stderr).toBe(0);
    expect(ndjson(listed.stdout).map((t: { id: string }) => t.id)).toContain(server.table('orders').id);
  });

  it('gds auth status shows the base URL of each door, as the service publishes them', async () => {
    const env = asOwner(server.ready.baseUrl);
    const json = await w.run(['auth', 'status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(ndjson(json.stdout)[0].doors).toEqual(server.ready.doors);
    const shown = await w.run(['auth', 'status'], env);
    expect(shown.code, shown.stderr).toBe(0);
    const { rest, graphql, mcp } = server.ready.doors;
    expect(shown.stdout).toContain(`REST ${rest}  GraphQL ${graphql}  MCP ${mcp}`);
  });

  it('a base URL without the stage is refused (exit 5), naming the REST base URL', async () => {
    const listed = await w.run(['list'], asOwner(server.origin));
    expect(listed.code).toBe(5);
    expect(listed.stdout).toBe('');
    expect(listed.stderr).toContain(`${server.origin}/v1`);
  });
});

describe('behind a reverse proxy that adds a path prefix', () => {
  it('gds lists, reads a table’s status and names its dashboard page under the prefix', async () => {
    const orders = server.table('orders').id;
    heard.length = 0;
    const listed = await w.run(['list', '--json'], asOwner(`${proxyBase}/v1`));
    expect(listed.code, listed.stderr).toBe(0);
    expect(ndjson(listed.stdout).map((t: { id: string }) => t.id)).toContain(orders);
    expect(heard.some((line) => line.startsWith(`GET ${PREFIX}/v1/api/tables`))).toBe(true);

    const status = await w.run(['status', orders, '--json'], asOwner(`${proxyBase}/v1`));
    expect(status.code, status.stderr).toBe(0);
    expect(ndjson(status.stdout)[0]).toMatchObject({ id: orders });

    const web = await w.run(['status', orders, '--web', '--json'], {
      ...asOwner(`${proxyBase}/v1`),
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      BROWSER: undefined,
      GDS_BROWSER: undefined,
    });
    expect(web.code, web.stderr).toBe(0);
    const page = ndjson(web.stdout)[0] as { url: string };
    expect(page.url).toBe(`${proxyBase}/dashboard/tables/${orders}`);
    const shown = await fetch(page.url, {
      headers: { authorization: `Bearer ${server.user('OWNER').cliToken}` },
    });
    expect(shown.status).toBe(200);
  });

  it('reads records with a DATA-API token through the prefix', async () => {
    const crm = server.table('crm_contacts').id;
    const issued = await server.issueToken('OWNER', {
      name: 'through-proxy',
      env: 'dev',
      scopes: [{ tableId: crm, permissions: ['read'] }],
    });
    const listed = await w.run(['records', 'list', crm, '--json'], {
      SERVICE_API_URL: `${proxyBase}/v1`,
      SERVICE_TOKEN: issued.tokens.accessToken,
    });
    expect(listed.code, listed.stderr).toBe(0);
    expect(ndjson(listed.stdout).length).toBeGreaterThan(0);
  });
});
