// Cold start of `node bin/run.js …` against bare `node -e 0`, both on Node 24 from node_modules/.bin.
// One warm-up round, then RUNS rounds; each round runs the baseline and every command once, back to back,
// so each ratio is paired with the baseline of its own round (the machine's load drifts between rounds).
// Peak memory comes from `/usr/bin/time -f %M` in separate runs, so its fork does not touch the timings.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule, BenchRow } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const cli = join(root, 'bin/run.js');
const runs = Number(process.env.GDS_BENCH_RUNS ?? 15);
const gnuTime = '/usr/bin/time';

interface Case {
  name: string;
  args: string[];
}

function spawnTimed(command: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { cwd: root, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0 && code !== 1) reject(new Error(`${command} ${args.join(' ')} exited ${code}`));
      else resolve(ms);
    });
  });
}

async function peakRssMiB(args: string[], scratch: string): Promise<string> {
  if (!existsSync(gnuTime)) return 'n/a';
  const out = join(scratch, 'rss');
  await spawnTimed(gnuTime, ['-f', '%M', '-o', out, node, ...args]);
  const kib = Number((await readFile(out, 'utf8')).trim().split('\n').pop());
  return `${(kib / 1024).toFixed(0)} MiB`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

async function ensureBuilt(): Promise<void> {
  if (existsSync(join(root, 'dist/cli/main.js'))) return;
  await new Promise<void>((resolve, reject) => {
    const build = spawn('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    build.on('close', (code) => (code === 0 ? resolve() : reject(new Error('npm run build failed'))));
  });
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  const scratch = await mkdtemp(join(tmpdir(), 'gds-bench-startup-'));
  await writeFile(join(scratch, 'a.yml'), 'patternChecks:\n  - name: a\n    severity: error\n');
  await writeFile(join(scratch, 'b.yml'), 'patternChecks:\n  - name: a\n    severity: warn\n');
  const baseline: Case = { name: 'node -e 0', args: ['-e', '0'] };
  const cases: Case[] = [
    { name: 'gds --version', args: [cli, '--version'] },
    { name: 'gds --help', args: [cli, '--help'] },
    {
      name: 'gds gate diff --semantic',
      args: [
        cli,
        'gate',
        'diff',
        '-f',
        join(scratch, 'b.yml'),
        '--against',
        join(scratch, 'a.yml'),
        '--semantic',
      ],
    },
  ];
  try {
    const base: number[] = [];
    const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const ratios = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = -1; round < runs; round += 1) {
      const baseMs = await spawnTimed(node, baseline.args);
      for (const c of cases) {
        const ms = await spawnTimed(node, c.args);
        if (round < 0) continue; // warm-up: fills the page cache, discarded
        times.get(c.name)?.push(ms);
        ratios.get(c.name)?.push(ms / baseMs);
      }
      if (round >= 0) base.push(baseMs);
    }
    const rows: BenchRow[] = [
      {
        section: 'startup',
        name: baseline.name,
        value: `${median(base).toFixed(1)} ms`,
        note: `median of ${runs}, peak ${await peakRssMiB(baseline.args, scratch)}`,
      },
    ];
    for (const c of cases) {
      rows.push({
        section: 'startup',
        name: `${c.name} (node bin/run.js)`,
        value: `${median(ratios.get(c.name) ?? []).toFixed(2)}x`,
        note: `median ${median(times.get(c.name) ?? []).toFixed(1)} ms, ratio paired per round, peak ${await peakRssMiB(c.args, scratch)}`,
      });
    }
    return rows;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};
