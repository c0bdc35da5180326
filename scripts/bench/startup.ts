// Cold start of the single executable (dist/gds), of `node bin/run.js` in the checkout and of the packed npm
// package (its manifest lets a command import only itself) against bare `node -e 0`, all on Node 24 from
// node_modules. One warm-up round, then RUNS rounds; each round runs the baseline and every
// command once, back to back, so each ratio is paired with the baseline of its own round (the machine's
// load drifts between rounds). Peak memory comes from `/usr/bin/time -f %M` in separate runs, so its fork
// does not touch the timings. Builds dist/ and dist/gds first when they are missing.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from '../../src/server/app.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const binary = join(root, 'dist/gds');
const runs = Math.max(10, Number(process.env.GDS_BENCH_RUNS ?? 15));
const gnuTime = '/usr/bin/time';

interface Invocation {
  command: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

interface Case extends Invocation {
  name: string;
}

/** The same gds arguments, once per way of running gds: the binary, the checkout, the npm package. */
function runners(
  gdsArgs: string[],
  packageDir: string,
  env?: NodeJS.ProcessEnv,
): Array<{ label: string } & Invocation> {
  return [
    { label: 'dist/gds', command: binary, args: gdsArgs, env },
    { label: 'node bin/run.js', command: node, args: [join(root, 'bin/run.js'), ...gdsArgs], env },
    { label: 'npm package', command: node, args: [join(packageDir, 'bin/run.js'), ...gdsArgs], env },
  ];
}

/**
 * What `npm install` of the packed gds holds (with the oclif.manifest.json prepack adds), unpacked into
 * `scratch`, with the checkout's node_modules beside it for its dependencies.
 */
async function unpackedPackage(scratch: string): Promise<string> {
  const packed = await output('npm', ['pack', '--silent', '--pack-destination', scratch]);
  await output('tar', ['-xzf', join(scratch, packed.trim().split('\n').pop() ?? ''), '-C', scratch]);
  const dir = join(scratch, 'package');
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function output(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
}

function spawnTimed({ command, args, env }: Invocation): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { cwd: root, stdio: 'ignore', env: { ...process.env, ...env } });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0 && code !== 1) reject(new Error(`${command} ${args.join(' ')} exited ${code}`));
      else resolve(ms);
    });
  });
}

/** GNU time (Debian package `time`), installed when missing and the bench runs as root with apt-get. */
async function ensureGnuTime(): Promise<void> {
  if (existsSync(gnuTime) || process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return;
  const install = 'apt-get install -y -qq time || (apt-get update -qq && apt-get install -y -qq time)';
  await new Promise<void>((resolve) => {
    const child = spawn('sh', ['-c', install], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

async function peakRssMiB({ command, args, env }: Invocation, scratch: string): Promise<string> {
  if (!existsSync(gnuTime)) return 'n/a (no /usr/bin/time)';
  const out = join(scratch, 'rss');
  await spawnTimed({ command: gnuTime, args: ['-f', '%M', '-o', out, command, ...args], env });
  const kib = Number((await readFile(out, 'utf8')).trim().split('\n').pop());
  return `${(kib / 1024).toFixed(0)} MiB`;
}

async function ensureBuilt(): Promise<void> {
  const missing: string[][] = [];
  if (!existsSync(join(root, 'dist/cli/main.js'))) missing.push(['run', 'build']);
  if (!existsSync(binary)) missing.push(['run', 'build:binary']);
  for (const args of missing) {
    await new Promise<void>((resolve, reject) => {
      const build = spawn('npm', args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
      build.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`npm ${args.join(' ')} failed`)),
      );
    });
  }
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  await ensureGnuTime();
  const scratch = await mkdtemp(join(tmpdir(), 'gds-bench-startup-'));
  const a = join(scratch, 'a.yml');
  const b = join(scratch, 'b.yml');
  await writeFile(
    a,
    'patternChecks:\n  - name: a\n    column: code\n    regex: "^[A-Z]+$"\n    severity: WARN\n',
  );
  await writeFile(
    b,
    'patternChecks:\n  - name: a\n    column: code\n    regex: "^[A-Z]+$"\n    severity: HARD_FAIL\n',
  );
  const packageDir = await unpackedPackage(scratch).catch(async (error: unknown) => {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  });
  // `gds list --json` talks to a local reference server (in this process, rate limit off).
  const server = await createServer({ port: 0, rateLimit: 1_000_000_000 });
  const owner = server.ready.users.find((u) => u.role === 'OWNER');
  const listEnv = {
    SERVICE_TOKEN: owner?.cliToken,
    SERVICE_API_URL: server.url,
    GDS_CONFIG_DIR: join(scratch, 'config'),
  };
  const baseline: Case = { name: 'node -e 0', command: node, args: ['-e', '0'] };
  const commands: Array<[string, string[], NodeJS.ProcessEnv?]> = [
    ['gds --version', ['--version']],
    ['gds --help', ['--help']],
    ['gds gate validate (small file)', ['gate', 'validate', '-f', b]],
    ['gds gate diff --semantic', ['gate', 'diff', '-f', b, '--against', a, '--semantic']],
    ['gds list --json (local server)', ['list', '--json'], listEnv],
  ];
  const cases: Case[] = commands.flatMap(([name, gdsArgs, env]) =>
    runners(gdsArgs, packageDir, env).map((r) => ({ ...r, name: `${name} (${r.label})` })),
  );
  try {
    const base: number[] = [];
    const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const ratios = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = -1; round < runs; round += 1) {
      const baseMs = await spawnTimed(baseline);
      for (const c of cases) {
        const ms = await spawnTimed(c);
        if (round < 0) continue; // warm-up: fills the page cache (and the addon/code caches), discarded
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
        note: `median of ${runs}, peak ${await peakRssMiB(baseline, scratch)}`,
      },
    ];
    for (const c of cases) {
      rows.push({
        section: 'startup',
        name: c.name,
        value: `${median(ratios.get(c.name) ?? []).toFixed(2)}x`,
        note: `median ${median(times.get(c.name) ?? []).toFixed(1)} ms, ratio paired per round, peak ${await peakRssMiB(c, scratch)}`,
      });
    }
    return rows;
  } finally {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
};
