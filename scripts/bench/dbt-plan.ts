// `gds plan --dbt` as a real process against a reference server in this process:
// on the largest real manifest of ../shared/fixtures (its tables new, then all applied, so each is compared
// with what the service holds) and on a generated 2,000-model project (all new). Wall time of the whole
// process, and its peak memory (maximum resident set, read by /usr/bin/time when there is one).
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEntry, cliEnv, ensureBuilt, node24, repoRoot } from '../../test/cli/helpers/cli-process.js';
import { sharedFixturesDir } from '../../test/helpers/fixtures.js';
import { startTestServer } from '../../test/helpers/server.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { writeDbtProject } from './dbt-manifest.js';
import { benchCliEnv } from './lib/cli-env.js';
import type { BenchModule, BenchRow } from './types.js';

const TIME = '/usr/bin/time';
const REAL = join(sharedFixturesDir, 'real/dbt/sfa_1.4.9_generate_snapshots.manifest.json');

/** One gds process: wall time, and peak RSS in MB when /usr/bin/time can tell. */
function measured(args: string[], env: Record<string, string>): Promise<{ ms: number; peakMb?: number }> {
  const timed = existsSync(TIME);
  const [file, argv] = timed
    ? [TIME, ['-f', 'peak-kb %M', node24, cliEntry, ...args]]
    : [node24, [cliEntry, ...args]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, argv, { cwd: repoRoot, env: cliEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) reject(new Error(`gds ${args.join(' ')} exited ${code}: ${stderr}`));
      const kb = /peak-kb (\d+)/.exec(stderr)?.[1];
      resolve({ ms, ...(kb === undefined ? {} : { peakMb: Number(kb) / 1024 }) });
    });
  });
}

const figure = (m: { ms: number; peakMb?: number }) =>
  `${m.ms.toFixed(0)} ms${m.peakMb === undefined ? '' : `, ${m.peakMb.toFixed(0)} MB peak`}`;

export const run: BenchModule = async () => {
  await ensureBuilt();
  const server = await startTestServer({ rateLimit: 1_000_000_000 });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-plan-'));
  try {
    const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    const env = benchCliEnv(server, dir);
    const rows: BenchRow[] = [];
    if (existsSync(REAL)) {
      const real = join(dir, 'real');
      mkdirSync(join(real, 'target'), { recursive: true });
      copyFileSync(REAL, join(real, 'target', 'manifest.json'));
      const project = await loadDbtProject(real, {});
      for (const d of project.declarations) {
        const columns = d.columns.map((c) => `"${c.name}" text`).join(', ');
        await server.sql(`CREATE TABLE IF NOT EXISTS analytics_dev."${d.name}" (${columns})`);
      }
      const args = ['plan', '--dbt', real, '--connector', connector, '--schema', 'analytics_dev', '--json'];
      const nodes = project.declarations.length + project.refusals.length;
      rows.push({
        section: 'dbt-plan',
        name: `gds plan, real manifest (${nodes} nodes, all new)`,
        value: figure(await measured(args, env)),
        note: `${project.declarations.length} declared, ${project.refusals.length} refused (no catalog)`,
      });
      await measured(['apply', ...args.slice(1), '--yes'], env);
      rows.push({
        section: 'dbt-plan',
        name: `gds plan, real manifest (${project.declarations.length} tables applied)`,
        value: figure(await measured(args, env)),
        note: 'each applied table compared: its definition, gate1.yml and contract read, 8 at a time',
      });
    }
    const generated = writeDbtProject(2_000, { dir: join(dir, 'generated'), schema: 'analytics_dev' });
    rows.push({
      section: 'dbt-plan',
      name: 'gds plan, generated 2,000-model project (all new)',
      value: figure(await measured(['plan', '--dbt', generated, '--connector', connector, '--json'], env)),
      note: 'manifest and catalog read, every table planned as + create with its diffs',
    });
    // The 2,000 relations in one schema, then one model applied: its push reads its relation's columns (once
    // read as the whole schema's 20,000, so apply and --dbt were quadratic in the project's size).
    const declared = await loadDbtProject(generated, {});
    for (const d of declared.declarations) {
      const columns = d.columns.map((c) => `"${c.name}" text`).join(', ');
      await server.sql(`CREATE TABLE IF NOT EXISTS analytics_dev."${d.name}" (${columns})`);
    }
    const last = declared.declarations.at(-1)?.name ?? '';
    const one = ['apply', '--dbt', generated, '--connector', connector, '--select', last, '--yes', '--json'];
    rows.push({
      section: 'dbt-plan',
      name: 'gds apply of one model, 2,000 relations in its schema',
      value: figure(await measured(one, env)),
      note: 'register, gate1.yml and contract intent of one table; its relation described alone',
    });
    return rows;
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
};
