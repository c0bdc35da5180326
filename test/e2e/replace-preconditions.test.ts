// A replacement computed from a version carries it (`If-Match`), so a write that lands
// between gds's read and its own is refused (412 precondition_failed, exit 6) instead of being overwritten
// unseen. `env promote --replace` reads the replaced table's definition version first; the race is made
// real by a proxy between gds and the reference server that, once it has answered that read, lets a
// second `gds push --replace` change the table before gds's promotion goes through. `definitions push
// --replace` (a MANAGEMENT token, which cannot read a definition) takes the version with --if-match.
import { mkdtemp, writeFile } from 'node:fs/promises';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { PRICE_POSITIVE_GATE, PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;
let proxy: Server;
let proxyUrl: string;
let dir: string;
let owner: string;
/** Runs once after the proxy has answered a GET whose path it matches, before that answer reaches gds. */
let afterRead: { path: string; then: () => Promise<void> } | undefined;

const file = (name: string) => join(dir, name);

/** gds in the test process; `process`: a `gds` process of its own, which runs while the in-process one waits. */
async function gds(
  args: string[],
  options: { url?: string; token?: string; process?: boolean } = {},
): Promise<CliResult> {
  return (options.process ? runCli : runInProcess)(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: options.url ?? server.url,
      SERVICE_TOKEN: options.token ?? owner,
    },
  });
}

const record = (result: CliResult) => JSON.parse(result.stdout.trim()) as Record<string, unknown>;

/** Forwards every request to the reference server; runs `afterRead` between a matching read and its answer. */
async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
  }
  const answer = await fetch(`${server.url}${request.url ?? '/'}`, {
    method: request.method ?? 'GET',
    headers,
    ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
  });
  const body = Buffer.from(await answer.arrayBuffer());
  const hook = afterRead;
  if (hook && request.method === 'GET' && request.url?.startsWith(hook.path)) {
    afterRead = undefined;
    await hook.then();
  }
  response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
  response.end(body);
}

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  owner = server.user('OWNER').cliToken;
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-if-match-'));
  proxy = createServer((request, response) => {
    forward(request, response).catch((error: unknown) => {
      response.writeHead(502).end(String(error));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

describe('env promote --replace', () => {
  it('a push to the replaced table between gds reading it and promoting: exit 6 precondition_failed, the push kept', async () => {
    await server.sql('CREATE TABLE analytics_staging.products AS SELECT * FROM analytics_dev.products');
    await writeFile(file('products.yml'), PRODUCTS_DEFINITION);
    await writeFile(file('gate1.yml'), PRICE_POSITIVE_GATE);
    const pushed = await gds(['push', file('products.yml'), '--json']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const table = String(record(pushed).governanceId);
    const promoted = await gds(['env', 'promote', table, '--to', 'staging', '--json']);
    expect(promoted.code, promoted.stderr).toBe(0);
    const staging = String(record(promoted).tableId);
    const [{ name } = { name: '' }] = await server.sql<{ name: string }>(
      'SELECT name FROM gds.tables WHERE id = $1',
      [staging],
    );
    const stagingDefinition = PRODUCTS_DEFINITION.replace('analytics_dev', 'analytics_staging').replace(
      'table: products',
      `table: ${name}`,
    );
    // The source changes (new rules), so promoting again replaces the staging table.
    expect((await gds(['gate', 'apply', table, '-f', file('gate1.yml')])).code).toBe(0);
    // Someone else's change to the staging table, made while gds is between its read and its write.
    await writeFile(
      file('staging.yml'),
      stagingDefinition.replace('  - { name: price, type: numeric }\n', ''),
    );
    let concurrent: CliResult | undefined;
    afterRead = {
      path: `/api/tables/${staging}/definition`,
      then: async () => {
        concurrent = await gds(['push', file('staging.yml'), '--replace', staging, '--json'], {
          process: true,
        });
      },
    };
    const before = await server.sql<{ v: number }>(
      'SELECT definition_version AS v FROM gds.tables WHERE id = $1',
      [staging],
    );

    const raced = await gds(['env', 'promote', table, '--to', 'staging', '--replace', staging], {
      url: proxyUrl,
    });

    expect(concurrent?.code, concurrent?.stderr).toBe(0);
    expect(raced.code, raced.stderr).toBe(6);
    expect(raced.stdout).toBe('');
    const v = Number(before[0]?.v);
    expect(raced.stderr).toContain(`is now v${v + 1}, not v${v}`);
    expect(raced.stderr).toContain('--dry-run');
    // The concurrent push is what the table holds: three columns, one version more; no promotion landed.
    const [after] = await server.sql<{ v: number; columns: unknown[] }>(
      'SELECT definition_version AS v, columns FROM gds.tables WHERE id = $1',
      [staging],
    );
    expect(after?.v).toBe(v + 1);
    expect(after?.columns).toHaveLength(3);

    // The same under --json: one error line with the code and both versions.
    afterRead = {
      path: `/api/tables/${staging}/definition`,
      then: async () => {
        await writeFile(file('staging.yml'), stagingDefinition);
        concurrent = await gds(['push', file('staging.yml'), '--replace', staging, '--json'], {
          process: true,
        });
      },
    };
    const json = await gds(['env', 'promote', table, '--to', 'staging', '--replace', staging, '--json'], {
      url: proxyUrl,
    });
    expect(concurrent?.code, concurrent?.stderr).toBe(0);
    expect(json.code).toBe(6);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '')).toMatchObject({
      error: {
        code: 'precondition_failed',
        details: { status: 412, server: { currentVersion: v + 2, expectedVersion: v + 1 } },
      },
    });

    // Nothing in between: the promotion replaces the table.
    const replaced = await gds(['env', 'promote', table, '--to', 'staging', '--replace', staging, '--json'], {
      url: proxyUrl,
    });
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(record(replaced)).toMatchObject({ changed: true, tableId: staging });
  });
});

describe('definitions push --replace --if-match', () => {
  it('a stale version is exit 6 precondition_failed and changes nothing; the current one replaces', async () => {
    const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    const issued = await server.issueToken('ADMIN', {
      name: 'ci-definitions',
      env: 'dev',
      scopes: ['workspace:write:definition'],
    });
    const token = issued.tokens.accessToken;
    await server.sql('CREATE TABLE analytics_dev.products_ci AS SELECT * FROM analytics_dev.products');
    const definition = PRODUCTS_DEFINITION.replace('table: products', 'table: products_ci').replace(
      'analytics_dev.products',
      'analytics_dev.products_ci',
    );
    await writeFile(file('products_ci.yml'), definition);
    const registered = await gds(
      ['definitions', 'push', file('products_ci.yml'), '--connector', connector, '--json'],
      {
        token,
      },
    );
    expect(registered.code, registered.stderr).toBe(0);
    const id = String(record(registered).governanceId);
    const version = Number(record(registered).definitionVersion ?? 1);
    // Another pipeline replaces it meanwhile.
    await writeFile(file('products_ci.yml'), definition.replace('  - { name: price, type: numeric }\n', ''));
    const other = await gds(
      ['definitions', 'push', file('products_ci.yml'), '--connector', connector, '--replace', id, '--json'],
      { token },
    );
    expect(other.code, other.stderr).toBe(0);
    const [held] = await server.sql<{ v: number }>(
      'SELECT definition_version AS v FROM gds.tables WHERE governance_id = $1 OR id = $1',
      [id],
    );
    expect(held?.v).toBe(version + 1);

    await writeFile(file('products_ci.yml'), definition);
    const stale = await gds(
      [
        'definitions',
        'push',
        file('products_ci.yml'),
        '--connector',
        connector,
        '--replace',
        id,
        '--if-match',
        String(version),
      ],
      { token },
    );
    expect(stale.code).toBe(6);
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toContain(`is now v${version + 1}, not v${version}`);
    const [kept] = await server.sql<{ v: number; columns: unknown[] }>(
      'SELECT definition_version AS v, columns FROM gds.tables WHERE governance_id = $1 OR id = $1',
      [id],
    );
    expect(kept?.v).toBe(version + 1);
    expect(kept?.columns).toHaveLength(3);

    const current = await gds(
      [
        'definitions',
        'push',
        file('products_ci.yml'),
        '--connector',
        connector,
        '--replace',
        id,
        '--if-match',
        String(version + 1),
        '--json',
      ],
      { token },
    );
    expect(current.code, current.stderr).toBe(0);
    expect(record(current)).toMatchObject({ replaced: true, definitionVersion: version + 2 });

    const withoutReplace = await gds(
      ['definitions', 'push', file('products_ci.yml'), '--connector', connector, '--if-match', '1'],
      { token },
    );
    expect(withoutReplace.code).toBe(2);
    expect(withoutReplace.stderr).toContain('--replace');
  });
});
