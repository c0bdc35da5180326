// Cold start of the single executable (dist/gds), of `node bin/run.js` in the checkout and of the packed npm
// package (its manifest lets a command import only itself) against bare `node -e 0`, all on Node 24 from
// node_modules, and of `gh` when it is on the PATH (the anchor of issue 16's budget).
//
// Every process is started directly by hyperfine (`-N`: no shell and no Node parent in between; a Node
// parent's spawn adds about 10 ms to both sides of a ratio and flatters it). One warm-up round, then RUNS
// rounds; each round is one hyperfine call that starts the baseline and every command once, back to back,
// so each ratio is paired with the baseline of its own round (the machine's load drifts between rounds).
// Peak memory comes from GNU time in separate runs, so its fork does not touch the timings. hyperfine and
// GNU time are Debian packages, installed when missing (as root with apt-get). Builds dist/ and dist/gds
// first when they are missing.
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
const runs = Math.max(15, Number(process.env.GDS_BENCH_RUNS ?? 15));
const gnuTime = '/usr/bin/time';

/** Issue 16's budget for the single executable: ratio to `node -e 0`, and peak memory. */
const binaryBudget: Record<string, number> = {
  'gds --version': 1.2,
  'gds --help': 1.8,
  'gds gate validate (small file)': 2.0,
  'gds list --json (local server)': 2.5,
};
const memoryBudgetMiB = 64;

interface Invocation {
  command: string;
  args: string[];
}

interface Case extends Invocation {
  name: string;
  /** The command's name without the runner, the key of `binaryBudget`. */
  commandName: string;
  runner: string;
}

/** The same gds arguments, once per way of running gds: the binary, the checkout, the npm package. */
function runners(gdsArgs: string[], packageDir: string): Array<{ label: string } & Invocation> {
  return [
    { label: 'dist/gds', command: binary, args: gdsArgs },
    { label: 'node bin/run.js', command: node, args: [join(root, 'bin/run.js'), ...gdsArgs] },
    { label: 'npm package', command: node, args: [join(packageDir, 'bin/run.js'), ...gdsArgs] },
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

/** Runs a command to its end and answers its stdout; its stderr is shown only when it fails. */
function output(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}\n${err.trim()}`)),
    );
  });
}

/**
 * One round: hyperfine starts every case once, in the order given, and reports each wall time in ms.
 * `-i`: `gate diff` exits 1 when the files differ, which is its answer, not a failure.
 */
async function hyperfineRound(
  cases: Invocation[],
  env: NodeJS.ProcessEnv,
  scratch: string,
): Promise<number[]> {
  const exported = join(scratch, 'round.json');
  const commandLines = cases.map((c) => [c.command, ...c.args].join(' '));
  await output(
    'hyperfine',
    ['-N', '--runs', '1', '-i', '--style', 'none', '--export-json', exported, ...commandLines],
    { ...process.env, ...env },
  );
  const { results } = JSON.parse(await readFile(exported, 'utf8')) as {
    results: Array<{ times: number[] }>;
  };
  return results.map((r) => (r.times[0] ?? Number.NaN) * 1000);
}

/** A Debian package's command, installed when missing and the bench runs as root with apt-get. */
async function ensureDebianCommand(path: string, debianPackage: string): Promise<void> {
  if (existsSync(path) || process.getuid?.() !== 0 || !existsSync('/usr/bin/apt-get')) return;
  const install = `apt-get install -y -qq ${debianPackage} || (apt-get update -qq && apt-get install -y -qq ${debianPackage})`;
  await new Promise<void>((resolve) => {
    const child = spawn('sh', ['-c', install], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

/** Peak resident memory in MiB, from GNU time, or undefined without it. */
async function peakRssMiB(
  { command, args }: Invocation,
  env: NodeJS.ProcessEnv,
  scratch: string,
): Promise<number | undefined> {
  if (!existsSync(gnuTime)) return undefined;
  const out = join(scratch, 'rss');
  await new Promise<void>((resolve, reject) => {
    const child = spawn(gnuTime, ['-f', '%M', '-o', out, command, ...args], {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, ...env },
    });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  return Number((await readFile(out, 'utf8')).trim().split('\n').pop()) / 1024;
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

function budgetNote(c: Case, ratio: number, peakMiB: number | undefined): string {
  const limit = c.runner === 'dist/gds' ? binaryBudget[c.commandName] : undefined;
  if (limit === undefined) return '';
  const withinTime = ratio <= limit;
  const withinMemory = peakMiB === undefined || peakMiB <= memoryBudgetMiB;
  return withinTime && withinMemory
    ? `, within budget (${limit}x, ${memoryBudgetMiB} MiB)`
    : `, OVER budget (${limit}x, ${memoryBudgetMiB} MiB)`;
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  await ensureDebianCommand(gnuTime, 'time');
  await ensureDebianCommand('/usr/bin/hyperfine', 'hyperfine');
  if (!onPath('hyperfine')) {
    throw new Error(
      'The start-up bench needs hyperfine (Debian package `hyperfine`): run `apt-get install hyperfine` as root.',
    );
  }
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
  // A 300-line view with no schema on its name: push parses it (PostgreSQL's own grammar), then stops
  // for want of a source (exit 2) before any request, so the row times the local parse.
  const view = join(scratch, 'wide_orders.sql');
  const selectList = Array.from(
    { length: 297 },
    (_, i) => `  CASE WHEN o.amount_${i} > 0 THEN o.amount_${i} ELSE NULL END AS amount_${i}`,
  );
  await writeFile(
    view,
    `CREATE VIEW wide_orders AS\nSELECT\n${selectList.join(',\n')}\nFROM raw.orders o;\n`,
  );
  const packageDir = await unpackedPackage(scratch).catch(async (error: unknown) => {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  });
  // `gds list --json` talks to a local reference server (in this process, rate limit off; the process
  // only waits on hyperfine meanwhile). Every case runs with the same environment, as a CI job would.
  const server = await createServer({ port: 0, rateLimit: 1_000_000_000 });
  const owner = server.ready.users.find((u) => u.role === 'OWNER');
  const env: NodeJS.ProcessEnv = {
    SERVICE_TOKEN: owner?.cliToken,
    SERVICE_API_URL: server.url,
    GDS_CONFIG_DIR: join(scratch, 'config'),
    GH_CONFIG_DIR: join(scratch, 'gh'),
    GH_NO_UPDATE_NOTIFIER: '1',
  };
  const baseline: Case = {
    name: 'node -e 0',
    commandName: 'node -e 0',
    runner: 'node',
    command: node,
    args: ['-e', '0'],
  };
  const commands: Array<[string, string[]]> = [
    ['gds --version', ['--version']],
    ['gds --help', ['--help']],
    ['gds gate validate (small file)', ['gate', 'validate', '-f', b]],
    ['gds gate diff --semantic', ['gate', 'diff', '-f', b, '--against', a, '--semantic']],
    ['gds list --json (local server)', ['list', '--json']],
    ['gds push (local parse of a 300-line view)', ['push', view]],
  ];
  const cases: Case[] = commands.flatMap(([name, gdsArgs]) =>
    runners(gdsArgs, packageDir).map((r) => ({
      ...r,
      name: `${name} (${r.label})`,
      commandName: name,
      runner: r.label,
    })),
  );
  const gh = onPath('gh');
  if (gh) {
    for (const flag of ['--version', '--help']) {
      cases.push({
        name: `gh ${flag} (anchor)`,
        commandName: `gh ${flag}`,
        runner: 'gh',
        command: gh,
        args: [flag],
      });
    }
  }
  try {
    const base: number[] = [];
    const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const ratios = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = -1; round < runs; round += 1) {
      const [baseMs = Number.NaN, ...caseMs] = await hyperfineRound([baseline, ...cases], env, scratch);
      if (round < 0) continue; // warm-up: fills the page cache (and the addon/code caches), discarded
      base.push(baseMs);
      cases.forEach((c, i) => {
        const ms = caseMs[i] ?? Number.NaN;
        times.get(c.name)?.push(ms);
        ratios.get(c.name)?.push(ms / baseMs);
      });
    }
    const mib = (value: number | undefined) =>
      value === undefined ? 'n/a (no /usr/bin/time)' : `${value.toFixed(0)} MiB`;
    const rows: BenchRow[] = [
      {
        section: 'startup',
        name: baseline.name,
        value: `${median(base).toFixed(1)} ms`,
        note: `median of ${runs}, hyperfine -N, peak ${mib(await peakRssMiB(baseline, env, scratch))}`,
      },
    ];
    for (const c of cases) {
      const ratio = median(ratios.get(c.name) ?? []);
      const peak = await peakRssMiB(c, env, scratch);
      rows.push({
        section: 'startup',
        name: c.name,
        value: `${ratio.toFixed(2)}x`,
        note: `median ${median(times.get(c.name) ?? []).toFixed(1)} ms, ratio paired per round, peak ${mib(peak)}${budgetNote(c, ratio, peak)}`,
      });
    }
    return rows;
  } finally {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
};
