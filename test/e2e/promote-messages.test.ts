// Issue 23 item 10: env promote's errors name its own flags. Promoting products to staging, whose
// warehouse has no products object, is refused by the service in push's words ("pass --source"): gds
// says what promote can do instead, and never advises a flag env promote does not have.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('env promote refusals', () => {
  it('a target without the warehouse object: no advice to pass --source', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-e2e-promote-'));
    const file = join(dir, 'products.yml');
    await writeFile(file, PRODUCTS_DEFINITION);
    const env = {
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      GDS_CONFIG_DIR: join(dir, 'config'),
    };
    const pushed = await runCli(['push', file, '--json'], { env });
    expect(pushed.code, pushed.stderr).toBe(0);
    const tableId = String((JSON.parse(pushed.stdout) as { governanceId: string }).governanceId);
    const human = await runCli(['env', 'promote', tableId, '--to', 'staging'], { env });
    expect(human.code).not.toBe(0);
    expect(human.stderr).not.toContain('--source');
    expect(human.stderr).toContain('--to');
    const json = await runCli(['env', 'promote', tableId, '--to', 'staging', '--json'], { env });
    const { error } = JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '') as {
      error: { message: string; suggestion: string };
    };
    expect(`${error.message} ${error.suggestion}`).not.toContain('--source');
  });
});
