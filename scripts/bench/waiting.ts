// Adaptive waiting: `gds push --replace --wait` as a real process, with the default --interval
// (3 s), against a reference server in this process whose baseline job ends within 50 ms of the
// registration (a worker here runs queued jobs every 10 ms). The first poll comes at once, the second
// after 0.25 s: the whole command should take well under a second, not the 3 s of a fixed interval.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../../test/cli/helpers/cli-process.js';
import { startTestServer } from '../../test/helpers/server.js';
import { timedRun } from './commands.js';
import { median } from './lib/measure.js';
import { productsArtifact } from './lib/products-artifact.js';
import type { BenchModule } from './types.js';

const RUNS = 5;

export const run: BenchModule = async () => {
  await ensureBuilt();
  const server = await startTestServer({ rateLimit: 1_000_000_000, jobs: 'manual' });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-wait-'));
  let working = true;
  const worker = (async () => {
    while (working) {
      await server.jobs.runPending();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  try {
    const { connector, file, write, columnCount, env } = productsArtifact(server, dir);
    await timedRun(['push', file, '--connector', connector, '--json'], env);
    const [table] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE name = 'products' AND active`,
    );
    const waited: number[] = [];
    const unwaited: number[] = [];
    const push = (i: number, wait: boolean) => {
      // A different definition each time, so every run registers a replacement (and a job to wait for).
      write(columnCount - (i % 2));
      const args = ['push', file, '--connector', connector, '--replace', table?.id ?? ''];
      return timedRun(wait ? [...args, '--wait'] : args, env);
    };
    // Interleaved, so a busy machine weighs on both alike.
    for (let i = 0; i < 2 * RUNS; i += 2) {
      unwaited.push((await push(i, false)).ms);
      waited.push((await push(i + 1, true)).ms);
    }
    const jobs = await server.sql<{ ms: number }>(
      `SELECT extract(epoch FROM finished_at - created_at) * 1000 AS ms FROM gds.jobs
        WHERE table_id = $1 AND finished_at IS NOT NULL ORDER BY created_at DESC LIMIT $2`,
      [table?.id ?? '', 2 * RUNS],
    );
    const slowest = Math.max(...jobs.map((j) => Number(j.ms)));
    return [
      {
        section: 'waiting',
        name: 'gds push --replace --wait (process)',
        value: `${median(waited).toFixed(0)} ms`,
        note: `median of ${RUNS}, default --interval 3 s; jobs ended ≤ ${slowest.toFixed(0)} ms after registration; budget < 1000 ms`,
      },
      {
        section: 'waiting',
        name: 'gds push --replace (process, no wait)',
        value: `${median(unwaited).toFixed(0)} ms`,
        note: `median of ${RUNS}, interleaved with the row above: the difference is the waiting; load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`,
      },
    ];
  } finally {
    working = false;
    await worker;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
