// A generated 2,000-model dbt project on each engine (PGlite; PostgreSQL when GDS_TEST_DATABASE_URL is set):
// its first `gds apply`, then a no-change `gds plan --json`, then three such plans at once. Each row: wall
// time of the gds process, its requests (counted from GDS_DEBUG's one line per request), 429s met, and its
// peak memory (maximum resident set, read by /usr/bin/time when there is one).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry, cliEnv, ensureBuilt, node24, repoRoot } from '../../test/cli/helpers/cli-process.js';
import { startTestServer } from '../../test/helpers/server.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { writeDbtProject } from './dbt-manifest.js';
import type { BenchModule, BenchRow } from './types.js';

const TIME = '/usr/bin/time';
const MODELS = Number(process.env.GDS_BENCH_MODELS ?? 2_000);

interface Measured {
  ms: number;
  requests: number;
  tooMany: number;
  peakMb?: number;
}

function measured(args: string[], env: Record<string, string>): Promise<Measured> {
  const timed = existsSync(TIME);
  const [file, argv] = timed
    ? [TIME, ['-f', 'peak-kb %M', node24, cliEntry, ...args]]
    : [node24, [cliEntry, ...args]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, argv, {
      cwd: repoRoot,
      env: cliEnv({ ...env, GDS_DEBUG: '1' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) reject(new Error(`gds ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      const kb = /peak-kb (\d+)/.exec(stderr)?.[1];
      resolve({
        ms,
        requests: (stderr.match(/^.*→ [A-Z]+ /gm) ?? []).length,
        tooMany: (stderr.match(/← 429 /g) ?? []).length,
        ...(kb === undefined ? {} : { peakMb: Number(kb) / 1024 }),
      });
    });
  });
}

const figure = (m: Measured) =>
  `${(m.ms / 1000).toFixed(1)} s, ${m.requests} requests${m.peakMb === undefined ? '' : `, ${m.peakMb.toFixed(0)} MiB peak`}`;

async function engineRows(engine: 'PGlite' | 'PostgreSQL'): Promise<BenchRow[]> {
  const server = await startTestServer({
    rateLimit: 1_000_000_000,
    ...(engine === 'PostgreSQL' ? { database: 'postgres' } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-scale-'));
  try {
    const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    const env = {
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('ADMIN').cliToken,
    };
    const generated = writeDbtProject(MODELS, { dir: join(dir, 'generated'), schema: 'analytics_dev' });
    const declared = await loadDbtProject(generated, {});
    for (const d of declared.declarations) {
      const columns = d.columns.map((c) => `"${c.name}" text`).join(', ');
      await server.sql(`CREATE TABLE IF NOT EXISTS analytics_dev."${d.name}" (${columns})`);
    }
    const project = ['--dbt', generated, '--connector', connector];
    const section = `project-scale (${engine})`;
    const apply = await measured(['apply', ...project, '--yes', '--json', '--concurrency', '8'], env);
    const plan = await measured(['plan', ...project, '--json'], env);
    const together = await Promise.all([1, 2, 3].map(() => measured(['plan', ...project, '--json'], env)));
    const slowest = together.reduce((a, b) => (a.ms > b.ms ? a : b));
    return [
      {
        section,
        name: `gds apply, ${MODELS} models, first`,
        value: figure(apply),
        note: `${apply.tooMany} 429s (rate limit off); register, gate1.yml and contract per model`,
      },
      {
        section,
        name: `gds plan --json, ${MODELS} models, no change`,
        value: figure(plan),
        note: 'budget: ≤ 25 requests, ≤ 5 s on PostgreSQL, ≤ 10 s on PGlite',
      },
      {
        section,
        name: `3 × gds plan --json at once, ${MODELS} models`,
        value: `slowest ${(slowest.ms / 1000).toFixed(1)} s (${(slowest.ms / plan.ms).toFixed(1)}× one alone)`,
        note: 'budget: each within 2× of one alone',
      },
    ];
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  const rows = await engineRows('PGlite');
  if (process.env.GDS_TEST_DATABASE_URL) rows.push(...(await engineRows('PostgreSQL')));
  return rows;
};
