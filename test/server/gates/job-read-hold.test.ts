// A status read of a gate job queued moments ago waits for the job's end (up to
// jobReadHoldMs after it was queued, 250 ms by default) instead of answering QUEUED: `push --wait` reads
// at once after the registration and hears of a job that ends in a few milliseconds then. The window is
// made long here so that nothing depends on how fast this machine runs the job; the bench row
// (scripts/bench/waiting.ts) measures the default.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushDevDefinition } from '../../helpers/push.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';

const HOLD_MS = 60_000;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual', jobReadHoldMs: HOLD_MS });
});

afterAll(async () => {
  await server?.close();
});

const status = (jobId: string) =>
  server.request('GET', `/api/gate-jobs/${jobId}?gate=1`, { token: server.user('ADMIN').cliToken });

describe('GET /api/gate-jobs/{id} of a job just queued', () => {
  it('answers once the job has ended, not QUEUED', async () => {
    const pushed = await pushDevDefinition(server, 'products', ['id', 'sku', 'name', 'price']);
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    expect(pushed.body.job.status).toBe('QUEUED');
    const read = status(pushed.body.job.id);
    // The read is held while the job waits for a worker (a read answered at once would be QUEUED, below);
    // the worker runs the job once the read has been waiting a while.
    const early = await Promise.race([read, sleep(500).then(() => undefined)]);
    if (early === undefined) await server.jobs.runPending();
    const answer = early ?? (await read);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: pushed.body.job.id, status: 'SUCCEEDED' });
  });

  it('a job queued longer ago than the window is answered at once, as it is', async () => {
    const [products] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE name = 'products' AND active`,
    );
    // Another definition of products: a replacement, and a new job.
    const pushed = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: {
        filename: 'products.yml',
        content: 'table: products\nsource: analytics_dev.products\ncolumns:\n  - id\n  - sku\n',
        replaceId: products?.id,
      },
    });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    expect(pushed.body.job.status).toBe('QUEUED');
    server.clock.advance(HOLD_MS + 1000);
    try {
      const answer = await status(pushed.body.job.id);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: pushed.body.job.id, status: 'QUEUED' });
    } finally {
      server.clock.reset();
    }
  });
});
