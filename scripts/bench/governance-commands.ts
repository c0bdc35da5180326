// The governance commands as real processes against a reference server in this process (its gate jobs
// run by the worker): `gds list --json`, `gds status`, `gds push` (a replacement each run) and
// `gds push --wait` (until the auto-baseline job ends, polled every 0.1 s).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt } from '../../test/cli/helpers/cli-process.js';
import { startTestServer } from '../../test/helpers/server.js';
import { timedRun } from './commands.js';
import { median } from './lib/measure.js';
import { productsArtifact } from './lib/products-artifact.js';
import type { BenchModule, BenchRow } from './types.js';

const RUNS = 5;

export const run: BenchModule = async () => {
  await ensureBuilt();
  const server = await startTestServer({ rateLimit: 1_000_000_000 });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-gov-'));
  try {
    const { connector, file, env } = productsArtifact(server, dir);
    const first = await timedRun(['push', file, '--connector', connector, '--json'], env);
    const governanceId = (await server.sql(`SELECT id FROM gds.tables WHERE name = 'products' AND active`))[0]
      ?.id as string;
    const times = async (args: string[]) => {
      const ms: number[] = [];
      for (let i = 0; i < RUNS; i += 1) ms.push((await timedRun(args, env)).ms);
      return `${median(ms).toFixed(0)} ms`;
    };
    const note = `median of ${RUNS}, wall time of the whole process, server in the bench process`;
    const rows: BenchRow[] = [
      {
        section: 'governance-cli',
        name: 'gds push (first, process)',
        value: `${first.ms.toFixed(0)} ms`,
        note: 'one run',
      },
      {
        section: 'governance-cli',
        name: 'gds push --replace (process)',
        value: await times(['push', file, '--connector', connector, '--replace', governanceId, '--json']),
        note,
      },
      {
        section: 'governance-cli',
        name: 'gds push --replace --wait (process)',
        value: await times([
          'push',
          file,
          '--connector',
          connector,
          '--replace',
          governanceId,
          '--wait',
          '--interval',
          '0.1',
          '--json',
        ]),
        note: `${note}; includes the baseline job (profiling the warehouse object)`,
      },
      {
        section: 'governance-cli',
        name: 'gds list --json (process)',
        value: await times(['list', '--json']),
        note,
      },
      {
        section: 'governance-cli',
        name: 'gds status <id> (process)',
        value: await times(['status', governanceId]),
        note,
      },
    ];
    return rows;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
