// Cold start of the single executable (dist/gds), of `node bin/run.js` in the checkout and of the packed npm
// package (one bundle of the whole CLI) against bare `node -e 0`, all on Node 24 from
// node_modules, and of `gh` when it is on the PATH (the anchor of the start-up budgets), for what
// people run: help piped and on a terminal, a gate1.yml with predicates, push of a real view.
//
// On a terminal: each such command runs under `script -qec 'exec …' /dev/null` (a pseudo-terminal), and so
// does a terminal baseline `node -e 0`; the row's time is the command's under script minus script's own
// cost in that round (the terminal baseline minus the bare one), so its ratio is to bare `node -e 0` too.
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
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from '../../src/server/app.js';
import { demoGate1 } from '../demo-gate1.js';
import { median } from './lib/measure.js';
import { unpackedPackage } from './lib/npm-package.js';
import { execText } from '../bundle/tools.js';
import type { BenchModule, BenchRow } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const binary = join(root, 'dist/gds');
const runs = Math.max(1, Number(process.env.GDS_BENCH_RUNS ?? 15));
const gnuTime = '/usr/bin/time';

/**
 * The start-up budget of the single executable (docs/bench.md): ratio to
 * `node -e 0`, and peak memory (memoryBudgetMiB). Help on a terminal is held to gh's own time on a terminal
 * when gh is on the PATH (see ghBudget), else to 1.5x.
 */
const binaryBudget: Record<string, number> = {
  'gds --version': 1.2,
  'gds --help (terminal)': 1.5,
  'gds gate --help (terminal)': 1.5,
  'gds gate validate (small file)': 2.0,
  'gds gate validate (gate1.yml with predicates)': 2.0,
  'gds list --json (local server)': 2.0,
  'gds push --dry-run (real 262-line view)': 2.7,
};
/** Peak memory of a budgeted row: 60 MiB, push (PostgreSQL's parser, whose floor alone is 63 MiB) 75. */
const memoryBudgetMiB = (commandName: string) => (commandName.startsWith('gds push') ? 75 : 60);
/** The real view push reads: the longest of ../shared/fixtures/real/sql that PostgreSQL's grammar reads. */
const realView = join(root, '../shared/fixtures/real/sql/snowflake_jfb_shared.billing_estimator_rates.sql');
/**
 * What Node alone needs for a budgeted row's work, no CLI around it (scripts/bench/floors): the row can come
 * no lower than its floor, measured in the same rounds so the two stand side by side.
 */
const floors: Record<string, Invocation> = {
  'gds list --json (local server)': {
    command: node,
    args: [join(root, 'scripts/bench/floors/get-page.cjs')],
  },
  'gds push --dry-run (real 262-line view)': {
    command: node,
    args: ['--liftoff-only', join(root, 'scripts/bench/floors/push-dry-run.cjs'), realView],
  },
};
/** PostgreSQL's parser as dist/gds's native addon, when build:binary made one (scripts/bundle/pg-parser-addon.ts). */
const builtPgParser = join(root, 'dist/sea-build/pg-parser.node');
const floorName = (commandName: string) => `floor of ${commandName}: Node alone`;
const pushRow = 'gds push --dry-run (real 262-line view)';

interface Invocation {
  command: string;
  args: string[];
}

interface Case extends Invocation {
  name: string;
  /** The command's name without the runner, the key of `binaryBudget`. */
  commandName: string;
  runner: string;
  /** Run on a pseudo-terminal (`script`): its time is corrected by the round's terminal baseline. */
  terminal?: boolean;
}

/** The invocation run on a pseudo-terminal by `script` (util-linux), the command exec'd by script's shell. */
function onTerminal({ command, args }: Invocation): Invocation {
  return { command: '/usr/bin/script', args: ['-qec', ['exec', command, ...args].join(' '), '/dev/null'] };
}

/** A command line for hyperfine -N (which splits it like a shell): an argument with a space is quoted. */
function commandLine({ command, args }: Invocation): string {
  return [command, ...args].map((a) => (/[\s']/.test(a) ? `'${a.replaceAll("'", "'\\''")}'` : a)).join(' ');
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
 * One round: hyperfine starts every case once, in the order given, and reports each wall time in ms.
 * `-i`: `gate diff` exits 1 when the files differ, which is its answer, not a failure.
 */
async function hyperfineRound(
  cases: Invocation[],
  env: NodeJS.ProcessEnv,
  scratch: string,
): Promise<Array<{ ms: number; cpuMs: number }>> {
  const exported = join(scratch, 'round.json');
  const commandLines = cases.map(commandLine);
  await execText(
    'hyperfine',
    ['-N', '--runs', '1', '-i', '--style', 'none', '--export-json', exported, ...commandLines],
    { ...process.env, ...env },
  );
  const { results } = JSON.parse(await readFile(exported, 'utf8')) as {
    results: Array<{ times: number[]; user?: number; system?: number }>;
  };
  return results.map((r) => ({
    ms: (r.times[0] ?? Number.NaN) * 1000,
    cpuMs: ((r.user ?? Number.NaN) + (r.system ?? Number.NaN)) * 1000,
  }));
}

/** The exit code of one run of an invocation, its output discarded. */
function exitCode({ command, args }: Invocation, env: NodeJS.ProcessEnv): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: 'ignore', env });
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
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
  // The median of three runs: one run's peak moves by a few hundred KiB with what the kernel maps around it.
  const peaks: number[] = [];
  for (let run = 0; run < 3; run += 1) {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(gnuTime, ['-f', '%M', '-o', out, command, ...args], {
        cwd: root,
        stdio: 'ignore',
        env: { ...process.env, ...env },
      });
      child.on('error', reject);
      child.on('close', () => resolve());
    });
    peaks.push(Number((await readFile(out, 'utf8')).trim().split('\n').pop()) / 1024);
  }
  return median(peaks);
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

/** The budget a row is held to (dist/gds rows only), in ratio to `node -e 0`; gh's own when it is measured. */
function budgetOf(c: Case, ghTerminalRatio: number | undefined): number | undefined {
  if (c.runner !== 'dist/gds') return undefined;
  if (c.terminal === true && ghTerminalRatio !== undefined) return ghTerminalRatio;
  return binaryBudget[c.commandName];
}

interface Measured {
  ratio: number;
  peakMiB: number | undefined;
}

const withinBudget = (limit: number, memoryMiB: number, { ratio, peakMiB }: Measured) =>
  ratio <= limit && (peakMiB === undefined || peakMiB <= memoryMiB);

/** The row's verdict against its budget, and where its floor (Node alone doing the same work) stands. */
function budgetNote(
  limit: number | undefined,
  memoryMiB: number,
  row: Measured,
  floor: Measured | undefined,
): string {
  if (limit === undefined) return '';
  const budget = `${limit.toFixed(2)}x, ${memoryMiB} MiB`;
  const within = withinBudget(limit, memoryMiB, row);
  const verdict = within ? `, within budget (${budget})` : `, OVER budget (${budget})`;
  if (floor === undefined) return verdict;
  const floorPeak = floor.peakMiB === undefined ? '' : `, ${floor.peakMiB.toFixed(0)} MiB`;
  const floorVerdict = withinBudget(limit, memoryMiB, floor) ? 'within the budget' : 'itself over the budget';
  return `${verdict}; its floor (Node alone) ${floor.ratio.toFixed(2)}x${floorPeak}, ${floorVerdict}`;
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  await ensureDebianCommand(gnuTime, 'time');
  await ensureDebianCommand('/usr/bin/hyperfine', 'hyperfine');
  // gh, the anchor of the help budgets: Debian packages it (bookworm: gh 2.23).
  await ensureDebianCommand('/usr/bin/gh', 'gh');
  if (!onPath('hyperfine')) {
    throw new Error(
      'The start-up bench needs hyperfine (Debian package `hyperfine`): run `apt-get install hyperfine` as root.',
    );
  }
  const scratch = await mkdtemp(join(tmpdir(), 'gds-bench-startup-'));
  const a = join(scratch, 'a.yml');
  const b = join(scratch, 'b.yml');
  const predicates = join(scratch, 'gate1.yml');
  await writeFile(
    a,
    'patternChecks:\n  - name: a\n    column: code\n    regex: "^[A-Z]+$"\n    severity: WARN\n',
  );
  await writeFile(
    b,
    'patternChecks:\n  - name: a\n    column: code\n    regex: "^[A-Z]+$"\n    severity: HARD_FAIL\n',
  );
  await writeFile(predicates, demoGate1);
  const packageDir = await unpackedPackage(scratch).catch(async (error: unknown) => {
    await rm(scratch, { recursive: true, force: true });
    throw error;
  });
  // `gds list --json` and `push --dry-run` talk to a local reference server (in this process, rate limit off;
  // the process only waits on hyperfine meanwhile). Every case runs with the same environment, as a CI job
  // would, with its own cache folder (help on a terminal is kept there after the warm-up round).
  const server = await createServer({ port: 0, rateLimit: 1_000_000_000 });
  const owner = server.ready.users.find((u) => u.role === 'OWNER');
  const env: NodeJS.ProcessEnv = {
    SERVICE_TOKEN: owner?.cliToken,
    SERVICE_API_URL: server.url,
    GDS_CONFIG_DIR: join(scratch, 'config'),
    XDG_CACHE_HOME: join(scratch, 'cache'),
    GH_CONFIG_DIR: join(scratch, 'gh'),
    GH_NO_UPDATE_NOTIFIER: '1',
    // push's floor parses with the parser dist/gds carries (scripts/bench/floors/push-dry-run.cjs).
    GDS_BENCH_PG_PARSER_ADDON: existsSync(builtPgParser) ? builtPgParser : undefined,
    // What a user's shell does not hold, and with which gds renders its help anew (precomputed-help.ts):
    // GDS_TEST_DATABASE_URL, exported for the tests, made every help row oclif's own.
    ...Object.fromEntries(
      Object.keys(process.env)
        .filter((name) => /^(?:FORCE_COLOR|DEBUG|GDS_DEBUG|OCLIF_.*|GDS_TEST_.*)$/.test(name))
        .map((name) => [name, undefined]),
    ),
  };
  const bare: Invocation = { command: node, args: ['-e', '0'] };
  const baseline: Case = { name: 'node -e 0', commandName: 'node -e 0', runner: 'node', ...bare };
  const terminalBaseline: Case = {
    name: 'node -e 0 (terminal)',
    commandName: 'node -e 0 (terminal)',
    runner: 'node',
    terminal: true,
    ...onTerminal(bare),
  };
  const connector = server.ready.connectors?.[0]?.id;
  const commands: Array<[string, string[]]> = [
    ['gds --version', ['--version']],
    ['gds --help', ['--help']],
    ['gds gate --help', ['gate', '--help']],
    ['gds gate validate (small file)', ['gate', 'validate', '-f', b]],
    ['gds gate validate (gate1.yml with predicates)', ['gate', 'validate', '-f', predicates]],
    ['gds gate diff --semantic', ['gate', 'diff', '-f', b, '--against', a, '--semantic']],
    ['gds list --json (local server)', ['list', '--json']],
    // What --jq adds (its budget: at most 30 ms): the row above's time is its baseline.
    ['gds list --jq .id (local server)', ['list', '--jq', '.id']],
    // A filter outside gds's own subset (src/cli/jq-subset.ts): jq's WebAssembly loads.
    ['gds list --jq outside the subset (local server)', ['list', '--jq', '[.id, .name] | @tsv']],
  ];
  // The real view is in ../shared/fixtures beside the repository: without it the push rows are skipped.
  const viewThere = existsSync(realView);
  if (viewThere) {
    commands.push([
      pushRow,
      ['push', realView, '--dry-run', ...(connector === undefined ? [] : ['--connector', connector])],
    ]);
  }
  const plans = await planCommands(scratch, connector);
  const terminalCommands: Array<[string, string[]]> = [
    ['gds --help (terminal)', ['--help']],
    ['gds gate --help (terminal)', ['gate', '--help']],
  ];
  const cases: Case[] = commands.flatMap(([name, gdsArgs]) =>
    runners(gdsArgs, packageDir).map((r) => ({
      ...r,
      name: `${name} (${r.label})`,
      commandName: name,
      runner: r.label,
    })),
  );
  for (const [commandName, floor] of Object.entries(floors)) {
    if (commandName === pushRow && !viewThere) continue;
    cases.push({
      ...floor,
      name: floorName(commandName),
      commandName: floorName(commandName),
      runner: 'node',
    });
  }
  for (const [name, gdsArgs] of terminalCommands) {
    for (const r of runners(gdsArgs, packageDir)) {
      cases.push({
        ...onTerminal(r),
        name: `${name} (${r.label})`,
        commandName: name,
        runner: r.label,
        terminal: true,
      });
    }
  }
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
    cases.push({
      name: 'gh --help (terminal, anchor)',
      commandName: 'gh --help (terminal)',
      runner: 'gh',
      terminal: true,
      ...onTerminal({ command: gh, args: ['--help'] }),
    });
  }
  try {
    // What each command answers (hyperfine -i hides it): a row whose command failed says so.
    const exits = new Map<string, number | null>();
    for (const c of cases) exits.set(c.name, await exitCode(c, { ...process.env, ...env }));
    const base: number[] = [];
    const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const cpu = new Map<string, number[]>([baseline, ...cases].map((c) => [c.name, []]));
    const ratios = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let round = -1; round < runs; round += 1) {
      const [baseRun, terminalRun, ...caseRuns] = await hyperfineRound(
        [baseline, terminalBaseline, ...cases],
        env,
        scratch,
      );
      if (round < 0) continue; // warm-up: fills the page cache (and the addon, help and code caches), discarded
      const baseMs = baseRun?.ms ?? Number.NaN;
      const scriptMs = (terminalRun?.ms ?? Number.NaN) - baseMs;
      const scriptCpuMs = (terminalRun?.cpuMs ?? Number.NaN) - (baseRun?.cpuMs ?? Number.NaN);
      base.push(baseMs);
      cpu.get(baseline.name)?.push(baseRun?.cpuMs ?? Number.NaN);
      cases.forEach((c, i) => {
        const run = caseRuns[i];
        const ms = (run?.ms ?? Number.NaN) - (c.terminal === true ? scriptMs : 0);
        times.get(c.name)?.push(ms);
        cpu.get(c.name)?.push((run?.cpuMs ?? Number.NaN) - (c.terminal === true ? scriptCpuMs : 0));
        ratios.get(c.name)?.push(ms / baseMs);
      });
    }
    const mib = (value: number | undefined) =>
      value === undefined ? 'n/a (no /usr/bin/time)' : `${value.toFixed(0)} MiB`;
    const ghTerminal = cases.find((c) => c.commandName === 'gh --help (terminal)');
    const ghTerminalRatio = ghTerminal && median(ratios.get(ghTerminal.name) ?? []);
    const rows: BenchRow[] = [
      {
        section: 'startup',
        name: baseline.name,
        value: `${median(base).toFixed(1)} ms`,
        note: `median of ${runs}, hyperfine -N, cpu ${median(cpu.get(baseline.name) ?? []).toFixed(0)} ms, peak ${mib(await peakRssMiB(baseline, env, scratch))}`,
      },
    ];
    if (!gh) {
      rows.push({
        section: 'startup',
        name: 'gh (anchor)',
        value: 'skipped',
        note: 'gh is not on the PATH: help on a terminal is held to 1.5x node -e 0 instead of gh',
      });
    }
    const measured = new Map<string, Measured>();
    for (const c of cases) {
      measured.set(c.name, {
        ratio: median(ratios.get(c.name) ?? []),
        peakMiB: await peakRssMiB(c, env, scratch),
      });
    }
    for (const c of cases) {
      const row = measured.get(c.name) ?? { ratio: Number.NaN, peakMiB: undefined };
      const { ratio, peakMiB: peak } = row;
      const floor = c.runner === 'dist/gds' ? measured.get(floorName(c.commandName)) : undefined;
      const terminal = c.terminal === true ? ', on a terminal (script, its own cost taken off)' : '';
      const exit = exits.get(c.name);
      const failed =
        exit === 0 || (exit === 1 && c.commandName.includes('gate diff')) ? '' : `, EXIT ${exit}`;
      rows.push({
        section: 'startup',
        name: c.name,
        value: `${ratio.toFixed(2)}x`,
        note: `median ${median(times.get(c.name) ?? []).toFixed(1)} ms, cpu ${median(cpu.get(c.name) ?? []).toFixed(0)} ms${terminal}${failed}, ratio paired per round, peak ${mib(peak)}${budgetNote(budgetOf(c, ghTerminalRatio), memoryBudgetMiB(c.commandName), row, floor)}`,
      });
    }
    // What --jq adds to the same list, paired per round (its budget: 30 ms).
    for (const label of ['dist/gds', 'npm package']) {
      for (const filter of ['.id', 'outside the subset']) {
        const json = times.get(`gds list --json (local server) (${label})`) ?? [];
        const jq = times.get(`gds list --jq ${filter} (local server) (${label})`) ?? [];
        if (json.length === 0 || jq.length === 0) continue;
        const added = median(jq.map((ms, i) => ms - (json[i] ?? Number.NaN)));
        const cpuAdded =
          median(cpu.get(`gds list --jq ${filter} (local server) (${label})`) ?? []) -
          median(cpu.get(`gds list --json (local server) (${label})`) ?? []);
        rows.push({
          section: 'startup',
          name: `--jq ${filter} adds to gds list (${label})`,
          value: `${added.toFixed(1)} ms`,
          note: `paired per round against list --json, cpu +${cpuAdded.toFixed(0)} ms${label === 'dist/gds' ? `; budget 30 ms: ${added <= 30 ? 'within' : 'OVER'}` : ''}`,
        });
      }
    }
    // gds plan reads a whole project (seconds at 2,000 models): a few runs of dist/gds alone, after the rounds.
    for (const [name, gdsArgs] of plans) {
      const c: Case = {
        name: `${name} (dist/gds)`,
        commandName: name,
        runner: 'dist/gds',
        command: binary,
        args: gdsArgs,
      };
      const exit = await exitCode(c, { ...process.env, ...env });
      const planRuns = name === planRows.real ? 5 : 3;
      const samples: Array<{ ms: number; cpuMs: number }> = [];
      for (let i = 0; i < planRuns; i += 1) samples.push(...(await hyperfineRound([c], env, scratch)));
      const peak = await peakRssMiB(c, env, scratch);
      rows.push({
        section: 'startup',
        name: c.name,
        value: `${(median(samples.map((r) => r.ms)) / 1000).toFixed(2)} s`,
        note: `median of ${planRuns}, cpu ${median(samples.map((r) => r.cpuMs)).toFixed(0)} ms, peak ${mib(peak)}${exit === 0 ? '' : `, EXIT ${exit}`}`,
      });
    }
    rows.push(...planSkips(plans));
    if (!viewThere) {
      rows.push({ section: 'startup', name: pushRow, value: 'skipped', note: `${realView} is absent` });
    }
    return rows;
  } finally {
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
};

const planRows = {
  real: 'gds plan (99-model manifest)',
  generated: 'gds plan (2,000-model generated manifest)',
};
/** The real manifest of 99 models (../shared/fixtures/real/dbt), the largest there. */
const realManifest = join(root, '../shared/fixtures/real/dbt/sfa_1.4.9_generate_snapshots.manifest.json');

/**
 * `gds plan` of the 99-model manifest in ../shared/fixtures/real/dbt (a folder holding it as manifest.json)
 * and of a generated 2,000-model project (scripts/bench/dbt-manifest.ts), each when this checkout
 * has what it needs; planSkips says why a row is missing.
 */
async function planCommands(
  scratch: string,
  connector: string | undefined,
): Promise<Array<[string, string[]]>> {
  if (!existsSync(join(root, 'src/commands/plan.ts')) || connector === undefined) return [];
  const plan = (dir: string) => ['plan', '--dbt', dir, '--connector', connector];
  const found: Array<[string, string[]]> = [];
  if (existsSync(realManifest)) {
    const dir = join(scratch, 'dbt-real');
    await mkdir(dir, { recursive: true });
    await copyFile(realManifest, join(dir, 'manifest.json'));
    found.push([planRows.real, plan(dir)]);
  }
  const generator = join(root, 'scripts/bench/dbt-manifest.ts');
  if (existsSync(generator)) {
    const module = (await import(generator)) as {
      writeDbtProject?: (models: number, options: { dir: string }) => string;
    };
    if (typeof module.writeDbtProject === 'function') {
      const dir = join(scratch, 'dbt-generated');
      found.push([planRows.generated, plan(module.writeDbtProject(2_000, { dir }))]);
    }
  }
  return found;
}

function planSkips(commands: Array<[string, string[]]>): BenchRow[] {
  const why: Record<string, string> = {
    [planRows.real]: existsSync(join(root, 'src/commands/plan.ts'))
      ? `${realManifest} is absent`
      : 'gds plan is not in this checkout',
    [planRows.generated]: existsSync(join(root, 'scripts/bench/dbt-manifest.ts'))
      ? 'scripts/bench/dbt-manifest.ts has no writeDbtProject(models, {dir})'
      : 'the manifest generator scripts/bench/dbt-manifest.ts is not in this checkout',
  };
  return Object.entries(why)
    .filter(([name]) => !commands.some(([measured]) => measured === name))
    .map(([name, reason]) => ({ section: 'startup', name, value: 'skipped', note: reason }));
}
