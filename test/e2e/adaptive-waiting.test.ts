// push --wait, status --watch and gate status --watch in human mode, piped, as real `gds` processes against a
// reference server whose jobs stay QUEUED until the test runs them: stdout keeps the record, how the wait
// ended is ONE final line on stderr, and the same status is never printed on both. (The spacing of the
// polls is asserted with a fake clock in test/commands/poll.test.ts; speed is a bench row.)
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let files = 0;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-wait-'));
});

afterAll(async () => {
  await server?.close();
});

/** gds started and left running (human mode unless --json is in args), stdout and stderr piped. */
function startGds(args: string[]): { done: Promise<CliResult>; stdout: () => string } {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, {
    cwd: dir,
    env: cliEnv({
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('ADMIN').cliToken,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  return { done: collect(child), stdout: () => stdout };
}

const nonEmpty = (text: string) => text.split('\n').filter((l) => l !== '');

/** Registers a new artifact over the staging customers object; its baseline job stays QUEUED. */
async function registered(): Promise<{ tableId: string; jobId: string }> {
  files += 1;
  // One active artifact per source: the one an earlier test left goes first.
  await server.sql(
    `UPDATE gds.tables SET active = false WHERE source = 'analytics_staging.customers' AND name LIKE 'wait%'`,
  );
  const object = server.ready.warehouseObjects.find((o) => o.source === 'analytics_staging.customers');
  const response = await server.request('POST', '/api/artifacts', {
    token: server.user('ADMIN').accessToken,
    body: {
      filename: `wait${files}.yml`,
      content: `table: wait_customers_${files}\nsource: analytics_staging.customers\ncolumns:\n  - name: ${object?.columns[0]?.name ?? ''}\n`,
      connectorId: server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id,
    },
  });
  expect(response.status).toBe(202);
  const body = response.body as { governanceId: string; job: { id: string } };
  return { tableId: body.governanceId, jobId: body.job.id };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error('timed out');
}

describe('push --wait, piped, human mode', () => {
  it('stdout: the registration; stderr: one line, how the job ended; no status printed twice', async () => {
    files += 1;
    const column = server.ready.warehouseObjects.find((o) => o.source === 'analytics_staging.customers')
      ?.columns[0]?.name;
    const file = join(dir, `p${files}.yml`);
    await writeFile(
      file,
      `table: waited_customers\nsource: analytics_staging.customers\ncolumns:\n  - name: ${column ?? ''}\n`,
    );
    const staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const push = startGds(['push', file, '--connector', staging, '--wait', '--interval', '0.1']);
    await until(() => push.stdout().includes('Status:'));
    await server.jobs.runPending();
    const r = await push.done;
    expect(r.code, r.stderr).toBe(0);
    const out = nonEmpty(r.stdout);
    expect(out).toHaveLength(3);
    expect(out[0]).toMatch(/^Registered tbl_\w+ \(QUARANTINED\)$/);
    expect(out[2]).toMatch(/^Status: +baseline job (job_\w+) QUEUED$/);
    const jobId = /(job_\w+)/.exec(out[2] ?? '')?.[1];
    expect(nonEmpty(r.stderr)).toEqual([`✓ Baseline job ${jobId} SUCCEEDED`]);
    expect(r.stdout).not.toContain('SUCCEEDED');
  });

  it('a job that fails: the error is the one final line on stderr (said once), exit 1', async () => {
    const production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
    const column = server.ready.warehouseObjects.find((o) => o.source === 'analytics_prod.orders')?.columns[0]
      ?.name;
    const file = join(dir, 'failing.yml');
    await writeFile(
      file,
      `table: waited_failing\nsource: analytics_prod.orders\ncolumns:\n  - name: ${column ?? ''}\n`,
    );
    const push = startGds(['push', file, '--connector', production, '--wait', '--interval', '0.1']);
    await until(() => push.stdout().includes('Status:'));
    await server.sql('ALTER TABLE analytics_prod.orders RENAME TO orders_away');
    try {
      await server.jobs.runPending();
    } finally {
      await server.sql('ALTER TABLE analytics_prod.orders_away RENAME TO orders');
    }
    const r = await push.done;
    expect(r.code).toBe(1);
    const err = nonEmpty(r.stderr);
    expect(err[0]).toMatch(/^Error: The baseline job job_\w+ ended FAILED/);
    expect(r.stderr.split('ended FAILED')).toHaveLength(2);
    expect(r.stdout).not.toContain('FAILED');
    await server.sql('UPDATE gds.tables SET active = false WHERE name = $1', ['waited_failing']);
  });
});

describe('status --watch, piped, human mode', () => {
  it('stdout: the status, then each change while a job runs; stderr: one final line', async () => {
    const { tableId } = await registered();
    const watch = startGds(['status', tableId, '--watch', '--interval', '0.1']);
    await until(() => /Jobs:.*QUEUED/.test(watch.stdout()));
    await server.jobs.startPending();
    await until(() => watch.stdout().includes('RUNNING'));
    await server.jobs.runPending();
    const r = await watch.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(${tableId})`);
    const changes = nonEmpty(r.stdout).filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatch(/QUARANTINED {2}jobs: .*RUNNING/);
    expect(nonEmpty(r.stderr)).toEqual([expect.stringMatching(/^\S+Z {2}QUARANTINED {2}no active job\.$/)]);
    expect(r.stdout).not.toContain('no active job');
  });

  it('--json: every status on stdout, nothing on stderr', async () => {
    const { tableId } = await registered();
    const watch = startGds(['status', tableId, '--watch', '--interval', '0.1', '--json']);
    await until(() => watch.stdout().includes('QUEUED'));
    await server.jobs.runPending();
    const r = await watch.done;
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const statuses = nonEmpty(r.stdout).map((l) => JSON.parse(l) as { activeJobs: unknown[] });
    expect(statuses.at(-1)?.activeJobs).toEqual([]);
  });
});

describe('gate status --watch, piped, human mode', () => {
  it('stdout: the job, then its changes while it runs; stderr: one line, how it ended', async () => {
    const { jobId } = await registered();
    const watch = startGds(['gate', 'status', jobId, '--gate', '1', '--watch', '--interval', '0.1']);
    await until(() => watch.stdout().includes('QUEUED'));
    await server.jobs.runPending();
    const r = await watch.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(jobId);
    expect(r.stdout).not.toContain('SUCCEEDED');
    expect(nonEmpty(r.stderr)).toEqual([
      expect.stringMatching(new RegExp(`Job ${jobId} ended SUCCEEDED\\.$`)),
    ]);
  });

  it('a job that has already ended: its record on stdout, nothing more on stderr', async () => {
    const { jobId } = await registered();
    await server.jobs.runPending();
    const watch = startGds(['gate', 'status', jobId, '--gate', '1', '--watch']);
    const r = await watch.done;
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('SUCCEEDED');
  });
});
