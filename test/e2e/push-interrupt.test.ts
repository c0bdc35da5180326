// Ctrl-C during `push --json --wait` must not lose the table it registered. The error line
// on stderr (exit 130) carries the table id and the baseline job id in its details. The server's jobs stay
// QUEUED until the test runs them, so the wait is certain to be under way when SIGINT arrives.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-push-int-'));
});

afterAll(async () => {
  await server?.close();
});

describe('push --json --wait interrupted', () => {
  it('exit 130; the error details name the registered table and its baseline job', async () => {
    const column = server.ready.warehouseObjects.find((o) => o.source === 'analytics_staging.customers')
      ?.columns[0]?.name;
    const file = join(dir, 'interrupted.yml');
    await writeFile(
      file,
      `table: interrupted_customers\nsource: analytics_staging.customers\ncolumns:\n  - name: ${column ?? ''}\n`,
    );
    const staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const [command, argv] = cliCommand([
      'push',
      file,
      '--connector',
      staging,
      '--wait',
      '--json',
      '--interval',
      '0.1',
    ]);
    const child = spawn(command, argv, {
      env: cliEnv({
        GDS_CONFIG_DIR: join(dir, 'config'),
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('ADMIN').cliToken,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const done = collect(child);
    let registered: Array<{ id: string }> = [];
    for (let i = 0; i < 300 && registered.length === 0; i += 1) {
      registered = await server.sql<{ id: string }>(
        `SELECT id FROM gds.tables WHERE name = 'interrupted_customers' AND active`,
      );
      if (registered.length === 0) await sleep(50);
    }
    expect(registered).toHaveLength(1);
    await sleep(300);
    child.kill('SIGINT');
    const r = await done;
    expect(r.code).toBe(130);
    expect(r.stdout).toBe('');
    const [line] = r.stderr.trim().split('\n');
    const { error } = JSON.parse(line ?? '') as { error: { code: string; details: Record<string, unknown> } };
    expect(error.details).toMatchObject({
      tableId: registered[0]?.id,
      jobId: expect.stringMatching(/^job_/),
    });
    const [job] = await server.sql<{ id: string }>('SELECT id FROM gds.jobs WHERE table_id = $1', [
      registered[0]?.id,
    ]);
    expect(error.details.jobId).toBe(job?.id);
  });
});
