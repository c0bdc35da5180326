// The gate and contract commands as real processes (node bin/run.js over dist/) against a reference server in
// this process: what a CI step waits for. gate apply of an invalid file is refused locally (no request), so
// its figure is the price of the local validation in a process; the others include one or two round trips.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  cliEntry,
  cliEnv,
  collect,
  ensureBuilt,
  node24,
  repoRoot,
} from '../../test/cli/helpers/cli-process.js';
import { startTestServer } from '../../test/helpers/server.js';
import type { BenchModule, BenchRow } from './types.js';

const RUNS = 5;

export const run: BenchModule = async () => {
  await ensureBuilt();
  const server = await startTestServer({ rateLimit: 1_000_000_000, jobs: 'manual' });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-gate-cert-'));
  try {
    const orders = server.table('orders').id;
    const customers = server.table('customers').id;
    const env = {
      GDS_CONFIG_DIR: join(dir, 'gds'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    };
    const gate = join(dir, 'gate1.yml');
    const invalid = join(dir, 'invalid.yml');
    writeFileSync(
      gate,
      'customPredicates:\n  - name: amount_known\n    sql: amount IS NOT NULL\n    severity: WARN\n',
    );
    writeFileSync(
      invalid,
      'customPredicates:\n  - name: x\n    sql: "pg_sleep(1)"\n    severity: HARD_FAIL\n',
    );
    const measures: Array<[name: string, args: () => string[], expectedCode: number]> = [
      ['gds gate apply (valid)', () => ['gate', 'apply', orders, '-f', gate], 0],
      ['gds gate apply (invalid, refused locally)', () => ['gate', 'apply', orders, '-f', invalid], 2],
      ['gds gate get', () => ['gate', 'get', orders], 0],
      ['gds gate run --json (Gate 1 dry run)', () => ['gate', 'run', orders, '--json'], 0],
      ['gds gate suggest', () => ['gate', 'suggest', orders], 0],
      [
        'gds env promote --bundle-out',
        () => [
          'env',
          'promote',
          customers,
          '--to',
          'staging',
          '--bundle-out',
          join(dir, `${performance.now()}.json`),
        ],
        0,
      ],
    ];
    const rows: BenchRow[] = [];
    for (const [name, args, expectedCode] of measures) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        const argv = args();
        const started = performance.now();
        const result = await collect(
          spawn(node24, [cliEntry, ...argv], {
            cwd: repoRoot,
            env: cliEnv(env),
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
        );
        times.push(performance.now() - started);
        if (result.code !== expectedCode)
          throw new Error(`gds ${argv.join(' ')} exited ${result.code}: ${result.stderr}`);
      }
      times.sort((a, b) => a - b);
      rows.push({
        section: 'gate-cert',
        name: `${name} (process)`,
        value: `${(times[Math.floor(RUNS / 2)] ?? Number.NaN).toFixed(0)} ms`,
        note: `median of ${RUNS}, wall time of the whole process`,
      });
    }
    return rows;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
